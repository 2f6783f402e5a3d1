//! Debian's stock arm64 kernel boots on trapline's `virt` machine to its
//! init (`common/linux_arm64.rs` finds it and writes the initramfs): on one
//! vCPU, where the PL011 console works both ways (the early console from
//! the device tree's `stdout-path`, then ttyAMA0, whose receiver gets what
//! is written to trapline's stdin) and PSCI SYSTEM_OFF ends the run with
//! status 0; on two, where both CPUs come up, PSCI SYSTEM_RESET ends the
//! run cleanly too, and `--stat` shows where the exits went, by key.
//! Each boot also has Linux's virtio-blk driver use a disk and a read-only
//! one on one notify × irq path (`exit` + `line` on one vCPU, `ioeventfd` +
//! `irqfd` on two); tests/virtio_blk.rs boots the other two paths, so the
//! four paths cost four boots in all (the emulated host's CI budget).
//!
//! Runs in the emulated ARM64 host of scripts/arm64/test.sh (or on any
//! arm64 KVM host after scripts/arm64/setup.sh); skips loudly without
//! /dev/kvm or the kernel. Under the emulator a boot takes tens of
//! seconds: the timeouts are generous and nothing is timed.
#![cfg(target_arch = "aarch64")]

mod common;

use common::linux_arm64::{after, boot, linux_guest, Disks, APPEND, DISK_APPEND};
use common::{kvm_present, stderr, stdout, tmp};

#[test]
fn debian_linux_boots_on_one_vcpu_with_the_pl011_both_ways_and_vda_on_exit_line() {
    let test = "debian_linux_boots_on_one_vcpu_with_the_pl011_both_ways_and_vda_on_exit_line";
    if !kvm_present(test) {
        return;
    }
    let Some(guest) = linux_guest(test) else {
        return;
    };
    let append = format!("{APPEND} tl_echo=1 {DISK_APPEND}");
    let disks = Disks::new("smp1");
    let mut args = vec!["--smp", "1", "--append", &append, "--timeout", "240"];
    let disk_args = disks.args("exit", "line");
    args.extend(disk_args.iter().map(String::as_str));
    let o = boot(guest, &args, Some("hello-from-the-host"));
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(
        after(&out, "LINUX-ARM64-INIT").and_then(|l| l.split_whitespace().nth(1)),
        Some("cpus=1"),
        "init ran on one CPU:\n{out}\n{err}"
    );
    assert!(
        after(&out, "LINUX-ARM64-CMDLINE").is_some_and(|l| l.contains("tl_echo=1")),
        "the command line reached the kernel through the device tree:\n{out}"
    );
    // The early console found the PL011 through stdout-path, then handed
    // over to the driver's console.
    assert!(
        out.contains("earlycon: pl11 at MMIO 0x0000000009000000"),
        "{out}"
    );
    assert!(out.contains("printk: console [ttyAMA0] enabled"), "{out}");
    // Linux probed the PCIe host bridge the device tree describes and
    // found bus 0's host bridge, and nothing else without pci-testdev.
    assert_eq!(
        after(&out, "LINUX-ARM64-PCI"),
        Some("0000:00:00.0=0x1b36:0x0008"),
        "{out}"
    );
    assert_eq!(
        after(&out, "LINUX-ARM64-ECHO"),
        Some("hello-from-the-host"),
        "stdin reached the guest through the PL011's receiver:\n{out}"
    );
    assert_eq!(after(&out, "LINUX-ARM64-END"), Some("poweroff"), "{out}");
    assert_eq!(o.status.code(), Some(0), "PSCI SYSTEM_OFF:\n{out}\n{err}");
    assert!(!err.contains("reset"), "a power-off, not a reset: {err}");
    disks.check(&out, "one vCPU, --virtio-notify exit --virtio-irq line");
}

#[test]
fn debian_linux_on_two_vcpus_uses_vda_on_ioeventfd_irqfd_reboots_and_stat_shows_its_exits() {
    let test =
        "debian_linux_on_two_vcpus_uses_vda_on_ioeventfd_irqfd_reboots_and_stat_shows_its_exits";
    if !kvm_present(test) {
        return;
    }
    let Some(guest) = linux_guest(test) else {
        return;
    };
    let stat = tmp("linux-smp2-stat.txt");
    let stat_arg = format!("--stat={}", stat.display());
    let append = format!("{APPEND} tl_end=reboot {DISK_APPEND}");
    let disks = Disks::new("smp2");
    let mut args = vec![
        "--smp",
        "2",
        "--append",
        &append,
        "--timeout",
        "240",
        &stat_arg,
        "--device",
        "pci-testdev",
    ];
    let disk_args = disks.args("ioeventfd", "irqfd");
    args.extend(disk_args.iter().map(String::as_str));
    let o = boot(guest, &args, None);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(
        after(&out, "LINUX-ARM64-INIT").and_then(|l| l.split_whitespace().nth(1)),
        Some("cpus=2"),
        "init saw both CPUs:\n{out}\n{err}"
    );
    // /proc/interrupts' header names every online CPU.
    assert!(
        after(&out, "LINUX-ARM64-IRQS").is_some_and(|h| h.contains("CPU1")),
        "{out}"
    );
    // pci-testdev beside the host bridge, on the PCIe host's bus 0.
    assert_eq!(
        after(&out, "LINUX-ARM64-PCI"),
        Some("0000:00:00.0=0x1b36:0x0008 0000:00:02.0=0x1b36:0x0005"),
        "{out}"
    );
    assert_eq!(after(&out, "LINUX-ARM64-END"), Some("reboot"), "{out}");
    assert_eq!(o.status.code(), Some(0), "PSCI SYSTEM_RESET:\n{out}\n{err}");
    assert!(err.contains("guest requested a reset"), "{err}");
    disks.check(
        &out,
        "two vCPUs, --virtio-notify ioeventfd --virtio-irq irqfd",
    );
    // --stat: KVM's counters and trapline's exits by key, the console's
    // transmit register among them.
    let report = std::fs::read_to_string(&stat).expect("--stat wrote its report");
    eprintln!("--- --stat report:\n{report}");
    assert!(report.contains("2 vCPU(s)"), "{report}");
    assert!(report.contains("KVM's own counters"), "{report}");
    assert!(report.contains("mmio_exit_user"), "{report}");
    assert!(
        report.contains("time = CNTVCT_EL0 ticks"),
        "the generic timer clocks the handling: {report}"
    );
    let pl011_tx = report
        .lines()
        .find(|l| l.trim_start().starts_with("0x9000000:W"))
        .unwrap_or_else(|| panic!("no exits at the PL011's data register:\n{report}"));
    assert!(pl011_tx.contains("pl011"), "{pl011_tx}");
    // The disks' requests went through their ioeventfds (QueueNotify at
    // transport + 0x50), never through an exit.
    let disk0 = after(&err, "trapline-virtio disk=0").unwrap_or_else(|| panic!("{err}"));
    assert!(
        !disk0.contains(" completions=0 "),
        "/dev/vda's requests: {disk0}"
    );
    for notify in ["0xa000050:W", "0xa000250:W"] {
        assert!(!report.contains(notify), "{notify} exited: {report}");
    }
}
