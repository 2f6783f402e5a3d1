//! trapline on arm64 as kvm-unit-tests' arm64 suite needs it, checked with
//! trapline's own payloads: arm/run's probes and command line (QEMU's
//! `-machine virt` spellings), chr-testdev's exit status (`builtin:chrtestdev`
//! drives the console as kvm-unit-tests' lib/chr-testdev.c does), and the
//! virtual timer's PPI and SGIs in the vGICv3 (`builtin:gic`, as the timer
//! and gic tests look at them) and an LPI through the ITS (`builtin:its`,
//! as the its tests raise one). Runs in the emulated ARM64 host of
//! scripts/arm64/test.sh; the tests that boot a guest skip loudly without
//! /dev/kvm.
#![cfg(target_arch = "aarch64")]

mod common;

use common::{kvm_present, run};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (status, stdout, stderr) of `trapline ARGS`, printed for the log.
fn trapline(args: &[&str]) -> (i32, String, String) {
    let out = run(args);
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    eprintln!("--- trapline {args:?}\n--- stdout:\n{o}--- stderr:\n{e}");
    (out.status.code().unwrap_or(-1), o, e)
}

/// arm/run's command line on KVM, for `kernel` with `append`, 2 vCPUs.
fn arm_run_line<'a>(kernel: &'a str, append: &'a str) -> Vec<&'a str> {
    vec![
        "-nodefaults",
        "-machine",
        "virt,gic-version=host",
        "-accel",
        "kvm",
        "-cpu",
        "host",
        "-device",
        "virtio-serial-device",
        "-device",
        "virtconsole,chardev=ctd",
        "-chardev",
        "testdev,id=ctd",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-kernel",
        kernel,
        "-smp",
        "2",
        "-append",
        append,
        "-m",
        "256",
    ]
}

#[test]
fn chr_testdev_ends_the_run_with_n_shifted_and_ored_with_1() {
    if !kvm_present("chr_testdev_ends_the_run_with_n_shifted_and_ored_with_1") {
        return;
    }
    for (code, want) in [("0", 1), ("1", 3), ("38", 77)] {
        let append = format!("code={code}");
        let (status, out, err) = trapline(&[
            "run",
            "--kernel",
            "builtin:chrtestdev",
            "--device",
            "chr-testdev",
            "--append",
            &append,
            "--timeout",
            "240",
        ]);
        assert_eq!(status, want, "code={code}: {out}{err}");
        // QEMU's transport for the first -device: the last, 0x0a003e00.
        assert!(
            out.contains("chrtestdev: console at 0xa003e00 version=1"),
            "{out}"
        );
        assert!(out.contains("chrtestdev: used=1 irq=1"), "{out}");
        assert!(!out.contains("still running"), "{out}");
    }
}

#[test]
fn without_chr_testdev_the_payload_finds_no_console() {
    if !kvm_present("without_chr_testdev_the_payload_finds_no_console") {
        return;
    }
    let (status, out, _) = trapline(&["run", "--kernel", "builtin:chrtestdev"]);
    assert_eq!(status, 7, "{out}");
    assert!(out.contains("no virtio console"), "{out}");
}

#[test]
fn arm_runs_command_line_boots_and_exits_through_chr_testdev() {
    if !kvm_present("arm_runs_command_line_boots_and_exits_through_chr_testdev") {
        return;
    }
    let (status, out, err) = trapline(&arm_run_line("builtin:chrtestdev", "code=0"));
    // Status 1 is kvm-unit-tests' PASS; nothing but warnings on stderr
    // (run_tests.sh counts any other stderr line as a VMM failure).
    assert_eq!(status, 1, "{out}{err}");
    assert!(out.contains("chrtestdev: used=1 irq=1"), "{out}");
    assert!(err.lines().all(|l| l.contains("warning")), "stderr: {err}");
    let (status, _, err) = trapline(&arm_run_line("builtin:chrtestdev", "code=2"));
    assert_eq!(status, 5, "{err}");
}

#[test]
fn arm_runs_probes_find_what_they_look_for() {
    // search_qemu_binary: `--help | grep -q QEMU`.
    let (status, out, _) = trapline(&["--help"]);
    assert_eq!(status, 0);
    assert!(out.contains("QEMU"), "{out}");
    let (_, out, _) = trapline(&["-machine", "?"]);
    assert!(out.contains("ARM Virtual Machine"), "{out}");
    let (_, out, _) = trapline(&["-machine", "virt,?"]);
    assert!(out.contains("gic-version"), "{out}");
    let (_, out, _) = trapline(&["-machine", "virt,gic-version=host", "-device", "?"]);
    assert!(out.contains("virtconsole"), "{out}");
    // arm/run then adds `-device pci-testdev` (trapline's, on the PCIe host).
    assert!(out.contains("pci-testdev"), "{out}");
    let (_, out, _) = trapline(&["-machine", "virt,gic-version=host", "-chardev", "?"]);
    assert!(out.contains("testdev"), "{out}");
}

#[test]
fn the_missing_kernel_probe_and_gicv2_say_what_run_tests_expects() {
    if !kvm_present("the_missing_kernel_probe_and_gicv2_say_what_run_tests_expects") {
        return;
    }
    // premature_failure: "could not load kernel" on the line naming it.
    let (status, _, err) = trapline(&arm_run_line("_NO_FILE_4Uhere_", "setup"));
    assert_eq!(status, 4, "{err}");
    assert!(
        err.lines()
            .any(|l| l.contains("_NO_FILE_4Uhere_") && l.contains("could not load kernel")),
        "{err}"
    );
    // gicv2-* tests add `-machine gic-version=2`: refused by name, so
    // run_tests.sh skips them with that line.
    let mut line = arm_run_line("_NO_FILE_4Uhere_", "ipi");
    line.extend(["-machine", "gic-version=2"]);
    let (status, _, err) = trapline(&line);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("gic-version=2"), "{err}");
}

#[test]
fn the_virtual_timer_and_sgis_reach_the_redistributors() {
    if !kvm_present("the_virtual_timer_and_sgis_reach_the_redistributors") {
        return;
    }
    let (status, out, err) = trapline(&[
        "run",
        "--kernel",
        "builtin:gic",
        "--smp",
        "2",
        "--timeout",
        "240",
    ]);
    assert_eq!(status, 0, "{out}{err}");
    assert!(
        out.contains("gic: timer istatus=1 pending=1 cleared=1"),
        "{out}"
    );
    assert!(out.contains("gic: sgi self pending=1"), "{out}");
    assert!(out.contains("gic: sgi cpu1 pending=1"), "{out}");
    assert!(out.contains("gic: OK"), "{out}");
}

#[test]
fn an_lpi_through_the_its_reaches_the_cpu_interface() {
    if !kvm_present("an_lpi_through_the_its_reaches_the_cpu_interface") {
        return;
    }
    let (status, out, err) = trapline(&["run", "--kernel", "builtin:its", "--timeout", "240"]);
    assert_eq!(status, 0, "{out}{err}");
    assert!(out.contains("its: commands done=1"), "{out}");
    assert!(out.contains("its: iar=8192"), "{out}");
    assert!(out.contains("its: OK"), "{out}");
}
