//! The machine kvm-unit-tests binaries need: trapline's own `compat` and
//! `kutvmexit` payloads (built the way kvm-unit-tests builds its x86
//! tests) behave on trapline as they do on QEMU. KVM tests skip loudly
//! without /dev/kvm; the QEMU comparison skips loudly without QEMU.
#![cfg(target_arch = "x86_64")]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

mod common;
use common::*;

/// Run on QEMU with kvm-unit-tests' usual devices, or `None` without QEMU.
fn qemu(kernel: &Path, smp: u32, append: &str) -> Option<Output> {
    let smp = smp.to_string();
    common::qemu(
        kernel,
        &[
            "-device",
            "pci-testdev",
            "-device",
            "pc-testdev",
            "-smp",
            &smp,
            "-append",
            append,
        ],
    )
}

/// The test names a vmexit-style run printed (`name cycles` or
/// `name (skipped)`), ignoring the numbers.
fn vmexit_names(out: &str) -> BTreeSet<String> {
    out.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter_map(|l| {
            let (name, v) = l.rsplit_once(' ')?;
            (v.parse::<u64>().is_ok() || v == "(skipped)").then(|| name.trim().to_string())
        })
        .collect()
}

const VMEXIT_TESTS: &str =
    "cpuid inl_from_qemu inl_from_kernel outl_to_kernel inl_from_pmtimer pci-mem pci-io";

#[test]
fn a_vmexit_run_with_one_vcpu_matches_qemu() {
    if !kvm_present("kutvmexit") {
        return;
    }
    let k = payload_file("kutvmexit");
    let append = format!("goal=200000 {VMEXIT_TESTS}");
    let o = run(&[
        "run",
        "--kernel",
        k.to_str().unwrap(),
        "--device",
        "pci-testdev",
        "--append",
        &append,
        "--timeout",
        "240",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(1),
        "vmexit exits 0 through isa-debug-exit: {out}"
    );
    assert!(
        out.contains("pci-testdev at 0x10 membar febff000 iobar c000"),
        "{out}"
    );
    assert!(out.contains("PM timer port is 608"), "{out}");
    let names = vmexit_names(&out);
    for want in [
        "cpuid",
        "inl_from_qemu",
        "inl_from_kernel",
        "outl_to_kernel",
        "inl_from_pmtimer",
        "mmio-no-eventfd:pci-mem",
        "mmio-wildcard-eventfd:pci-mem",
        "mmio-datamatch-eventfd:pci-mem",
        "portio-no-eventfd:pci-io",
        "portio-wildcard-eventfd:pci-io",
        "portio-datamatch-eventfd:pci-io",
    ] {
        assert!(names.contains(want), "{want} missing from {out}");
    }
    // Exactly QEMU's three tests per BAR: the PV variants stay hidden.
    assert!(!out.contains("pv-eventfd"), "{out}");
    if let Some(q) = qemu(&k, 1, &append) {
        let qout = String::from_utf8_lossy(&q.stdout).into_owned();
        assert_eq!(q.status.code(), Some(1), "QEMU: {qout}");
        assert_eq!(
            vmexit_names(&qout),
            names,
            "trapline and QEMU ran different tests:\n{out}\n---\n{qout}"
        );
        assert!(qout.contains("pci-testdev at 0x10 membar febff000 iobar c000"));
    }
}

#[test]
fn smp_bring_up_with_two_and_three_vcpus_matches_qemu() {
    if !kvm_present("compat smp") {
        return;
    }
    let k = payload_file("compat");
    for n in [2u32, 3] {
        let append = format!("smp fwcfg cpus={n}");
        let o = run(&[
            "run",
            "--kernel",
            k.to_str().unwrap(),
            "--smp",
            &n.to_string(),
            "--append",
            &append,
            "--timeout",
            "240",
        ]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(1), "{n} vCPUs: {out}");
        assert!(
            out.contains("PASS: smp") && out.contains("PASS: fwcfg") && !out.contains("FAIL"),
            "{out}"
        );
        if let Some(q) = qemu(&k, n, &append) {
            let qout = String::from_utf8_lossy(&q.stdout);
            assert_eq!(q.status.code(), Some(1), "QEMU with {n} vCPUs: {qout}");
            assert!(
                qout.contains("PASS: smp") && !qout.contains("FAIL"),
                "{qout}"
            );
        }
    }
}

#[test]
fn every_machine_requirement_checks_out() {
    if !kvm_present("compat all") {
        return;
    }
    // fw_cfg keys, an ACPI walk with checksums, the PM timer's rate
    // (against the TSC, whose rate the guest is told), the pc-testdev
    // ports, the LAPIC page reading all-ones, SMP bring-up.
    let tsc_khz = trapline_lab::host::measure_tsc_khz(Duration::from_millis(100));
    let append = format!("cpus=2 mem=128 tsc_khz={tsc_khz}");
    let o = run(&[
        "run",
        "--kernel",
        "builtin:compat",
        "--smp",
        "2",
        "--device",
        "pc-testdev",
        "--device",
        "pci-testdev",
        "--append",
        &append,
        "--timeout",
        "240",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    for check in ["fwcfg", "acpi", "pmtimer", "pctestdev", "lapic", "smp"] {
        assert!(out.contains(&format!("PASS: {check}")), "{check}: {out}");
    }
    assert!(!out.contains("FAIL"), "{out}");
    assert!(
        !out.contains("rate not checked"),
        "the PM timer's rate must be checked: {out}"
    );
    assert_eq!(o.status.code(), Some(1), "{out}");
}

#[test]
fn builtin_compat_runs_alone_and_a_machine_without_pc_testdev_is_named() {
    if !kvm_present("compat alone") {
        return;
    }
    // The built-in brings the device it checks.
    let o = run(&["run", "--kernel", "builtin:compat", "--timeout", "240"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("PASS: pctestdev") && !out.contains("FAIL"),
        "{out}"
    );
    assert_eq!(o.status.code(), Some(1), "{out}");
    // The same payload from a file runs on the machine as asked: without
    // the device, the failure says which device and how to add it.
    let k = payload_file("compat");
    let o = run(&[
        "run",
        "--kernel",
        k.to_str().unwrap(),
        "--append",
        "pctestdev",
        "--timeout",
        "240",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "FAIL: pctestdev: nothing at port 0xe0 (it reads all-ones): the machine has \
             no pc-testdev; add it with --device pc-testdev"
        ),
        "{out}"
    );
    assert_eq!(o.status.code(), Some(3), "{out}");
}
