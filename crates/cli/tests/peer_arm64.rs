//! `trapline bench --peer qemu` on arm64: the same probe on
//! `qemu-system-aarch64 -M virt,gic-version=3 -accel kvm -cpu host`, side by
//! side. In CI it runs inside the emulated ARM64 host, whose QEMU is
//! Debian's arm64 build unpacked there by scripts/arm64/setup.sh. Skips
//! loudly without /dev/kvm or without QEMU. A few scenarios, one repeat:
//! under TCG every exit costs 50-600 µs, and nothing is asserted about time.
#![cfg(target_arch = "aarch64")]

use std::process::Command;

mod common;

use common::kvm_present;

/// The scenarios QEMU serves here: the paper's rows that need only KVM and
/// a GICv3 (noop, Hypercall, Trap, I/O Kernel, I/O User, IPI, EOI). (Not
/// mmio-user-write: it adds a VM without the exit profile, and time.)
const ON_QEMU: [&str; 7] = [
    "noop",
    "hypercall",
    "sysreg-trap",
    "mmio-vgic-read",
    "mmio-user-read",
    "ipi",
    "eoi",
];

/// Seed 003's and 004's rows QEMU serves too: pci-testdev's BAR0 store
/// (the probe assigns the BAR QEMU leaves unassigned) and a config read
/// through ECAM, on the same boot as the rows above.
const ON_QEMU_PCI: [&str; 2] = ["mmio-no-eventfd:pci-mem", "pci-config-read-ecam"];

#[test]
fn the_arm64_probe_runs_on_qemu_beside_trapline() {
    if !kvm_present("the_arm64_probe_runs_on_qemu_beside_trapline") {
        return;
    }
    if Command::new("qemu-system-aarch64")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "SKIPPED peer_arm64: qemu-system-aarch64 is not installed — this test did NOT run"
        );
        return;
    }
    let only = format!(
        "{},{},ro-memslot-read",
        ON_QEMU.join(","),
        ON_QEMU_PCI.join(",")
    );
    let o = Command::new(env!("CARGO_BIN_EXE_trapline"))
        .args([
            "bench",
            "--quick",
            "--repeat",
            "1",
            "--no-progress",
            "--no-results",
        ])
        .args(["--timeout", "120", "--peer", "qemu", "--format", "json"])
        .args(["--only", &only])
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    eprintln!("--- stderr:\n{err}");
    assert_eq!(o.status.code(), Some(0), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["config"]["peer"].as_str().unwrap().starts_with("qemu"));
    let cpu = v["config"]["peer_cpu"].as_str().unwrap();
    assert!(["host", "max"].contains(&cpu), "{cpu}");
    let row = |vmm: &str, name: &str| {
        v["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["vmm"] == vmm && s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {vmm} row for {name}"))
    };
    // Side by side: each scenario measured on both, the guest's own checks
    // green on QEMU (x0 = -1 after the HVC, every SGI taken, ...).
    for name in ON_QEMU.into_iter().chain(ON_QEMU_PCI) {
        let t = row("trapline", name);
        assert_eq!(t["status"], "ok", "trapline:{name}: {t}");
        let q = row("qemu", name);
        assert_eq!(q["status"], "ok", "qemu:{name}: {q}");
        assert!(
            q["stats"]["median"].as_f64().unwrap() > 0.0,
            "qemu:{name}: {q}"
        );
    }
    // What QEMU cannot serve the same way says so, with the reason.
    let ro = row("qemu", "ro-memslot-read");
    assert_eq!(ro["status"], "unsupported");
    assert!(
        ro["reason"].as_str().unwrap().contains("n/a on QEMU"),
        "{ro}"
    );
    // The emulated host's caveat stays beside the numbers.
    assert!(v["host"]["nested_note"]
        .as_str()
        .is_some_and(|n| n.contains("emulated")));
}
