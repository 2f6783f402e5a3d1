//! Linux boots on trapline: the shared tiny Linux 6.1 (`vmlinux`, PVH
//! entry) and its initramfs run to `TINYLINUX-DONE` and end through
//! isa-debug-exit (`exitport=0xf4`: the guest writes 0, trapline exits 1),
//! on one vCPU and on two (where `/proc/interrupts` must list CPU1).
//!
//! The kernel comes from `../shared/guests/linux/` beside the repository
//! (or `TRAPLINE_LINUX_DIR`); `vmlinux.xz` is decompressed with `xz` into
//! this test's scratch directory. Without the files, or without /dev/kvm,
//! the tests say loudly that they did not run.
//!
//! The same kernel as a bzImage (the boot protocol, entered through its
//! own decompressor) is booted by an `#[ignore]`d test, from the path in
//! `TRAPLINE_LINUX_BZIMAGE` (build.sh beside the shared guests writes
//! `out/bzImage`): `cargo test -p trapline --test linux -- --ignored bzimage`. A boot takes ~15-20 s on an
//! idle host and minutes on a loaded one: the timeout is generous.
#![cfg(target_arch = "x86_64")]

mod common;

use std::path::PathBuf;
use std::sync::Mutex;

use common::linux_x86::{kvm_and_vmlinux, linux_dir};
use common::{code, kvm_present, stderr, stdout, trapline};

/// Boots the shared kernel with the 32-bit init; returns stdout, stderr and
/// the exit status.
fn boot(test: &str, extra: &[&str]) -> Option<(String, String, i32)> {
    boot_with(test, EXIT_APPEND, extra)
}

/// The command line of most boots: init ends the VM through isa-debug-exit.
const EXIT_APPEND: &str = "console=ttyS0 panic=-1 exitport=0xf4";

/// [`boot`] with the guest command line `append`.
fn boot_with(test: &str, append: &str, extra: &[&str]) -> Option<(String, String, i32)> {
    let kernel = kvm_and_vmlinux(test)?;
    Some(boot_kernel_with(&kernel, append, extra))
}

/// Boots `kernel` (a vmlinux or a bzImage) with the shared 32-bit init.
fn boot_kernel(kernel: &std::path::Path, extra: &[&str]) -> (String, String, i32) {
    boot_kernel_with(kernel, EXIT_APPEND, extra)
}

/// [`boot_kernel`] with the guest command line `append`.
fn boot_kernel_with(
    kernel: &std::path::Path,
    append: &str,
    extra: &[&str],
) -> (String, String, i32) {
    // One boot at a time: two emulation-heavy guests on a small loaded
    // host starve each other's timers (and the tests measure nothing that
    // needs them side by side).
    static ONE_BOOT: Mutex<()> = Mutex::new(());
    let _one = ONE_BOOT.lock().unwrap_or_else(|e| e.into_inner());
    let initrd = linux_dir().join("initramfs-tinit32.cpio.gz");
    let o = trapline()
        .arg("run")
        .arg("--kernel")
        .arg(kernel)
        .arg("--initrd")
        .arg(&initrd)
        .args(["--append", append, "--timeout", "900"])
        .args(extra)
        .output()
        .expect("spawn trapline");
    (stdout(&o), stderr(&o), code(&o))
}

#[test]
fn linux_boots_to_init_and_exits_through_isa_debug_exit() {
    let Some((out, err, status)) =
        boot("linux_boots_to_init_and_exits_through_isa_debug_exit", &[])
    else {
        return;
    };
    assert!(out.contains("TINYLINUX-INIT-OK"), "{out}\n{err}");
    assert!(out.contains("TINYLINUX-DONE"), "{out}\n{err}");
    assert!(
        out.contains("console=ttyS0"),
        "init echoes its command line: {out}"
    );
    assert_eq!(status, 1, "isa-debug-exit with 0 → 1\n{out}\n{err}");
}

/// `--acpi reduced`: Linux takes the hardware-reduced path (no 8259s, so
/// no ISA IRQs preallocated and no PIT check through the IOAPIC; no PM
/// timer), finds COM1 as the DSDT's PNP0501 device with its interrupt, and
/// powers off through the FADT's sleep control register (status 0).
#[test]
fn linux_powers_off_on_the_hardware_reduced_acpi_machine() {
    let test = "linux_powers_off_on_the_hardware_reduced_acpi_machine";
    let Some((out, err, status)) =
        boot_with(test, "console=ttyS0 panic=-1", &["--acpi", "reduced"])
    else {
        return;
    };
    assert!(
        out.contains("TINYLINUX-DONE"),
        "{out}
{err}"
    );
    assert!(out.contains("preallocated irqs: 0"), "no 8259s: {out}");
    assert!(!out.contains("..TIMER:"), "no PIT check: {out}");
    assert!(!out.contains("PM-Timer"), "no PM timer: {out}");
    assert!(
        out.contains("00:00: ttyS0 at I/O 0x3f8"),
        "COM1 found through ACPI PNP: {out}"
    );
    // Its interrupt works: the tty's writes are interrupt-driven, and
    // init's /proc/interrupts shows the count.
    let ttys0 = out
        .lines()
        .find(|l| l.contains("IO-APIC") && l.contains("ttyS0"))
        .unwrap_or_default();
    let count: u64 = ttys0
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        count > 0,
        "ttyS0's interrupt line: {ttys0:?}
{out}"
    );
    assert!(out.contains("reboot: Power down"), "{out}");
    assert_eq!(
        status, 0,
        "ACPI S5 through the sleep control register
{out}
{err}"
    );
}

#[test]
fn linux_brings_up_both_cpus_with_smp_2() {
    let Some((out, err, status)) = boot("linux_brings_up_both_cpus_with_smp_2", &["--smp", "2"])
    else {
        return;
    };
    // Not TINYLINUX-DONE: with two vCPUs the 8250 driver may be sending
    // the console's last lines from the other CPU when init, right after
    // writing them, ends the VM through exitport (a race inside the guest,
    // the same on QEMU; seen once in ~10 boots). Status 1 is what says init
    // got there.
    assert!(out.contains("TINYLINUX-INIT-OK"), "{out}\n{err}");
    assert!(out.contains("Brought up 1 node, 2 CPUs"), "{out}");
    // /proc/interrupts' header names every online CPU.
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("CPU0"))
        .unwrap_or_default();
    assert!(
        header.contains("CPU1"),
        "/proc/interrupts header: {header:?}\n{out}"
    );
    assert_eq!(status, 1, "{out}\n{err}");
}

#[test]
#[ignore = "slow: a bzImage decompresses itself under the host's instruction emulator; set TRAPLINE_LINUX_BZIMAGE and run with --ignored"]
fn linux_bzimage_boots_to_init_and_exits_through_isa_debug_exit() {
    let test = "linux_bzimage_boots_to_init_and_exits_through_isa_debug_exit";
    if !kvm_present(test) {
        return;
    }
    let Some(kernel) = std::env::var_os("TRAPLINE_LINUX_BZIMAGE").map(PathBuf::from) else {
        eprintln!(
            "SKIPPED {test}: TRAPLINE_LINUX_BZIMAGE is not set (point it at a bzImage, e.g. the out/bzImage of the shared guests' build.sh) — this Linux test did NOT run"
        );
        return;
    };
    assert!(
        kernel.is_file(),
        "TRAPLINE_LINUX_BZIMAGE={} is not a file",
        kernel.display()
    );
    let started = std::time::Instant::now();
    let (out, err, status) = boot_kernel(&kernel, &[]);
    // Reported, not asserted: the time depends on the host's load.
    eprintln!(
        "{test}: bzImage boot to power-off took {:.1} s wall",
        started.elapsed().as_secs_f64()
    );
    assert!(out.contains("TINYLINUX-INIT-OK"), "{out}\n{err}");
    assert!(out.contains("TINYLINUX-DONE"), "{out}\n{err}");
    assert!(
        out.contains("console=ttyS0"),
        "init echoes the command line from boot_params: {out}"
    );
    assert_eq!(status, 1, "isa-debug-exit with 0 → 1\n{out}\n{err}");
}
