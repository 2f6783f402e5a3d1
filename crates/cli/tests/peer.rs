//! `trapline bench --peer qemu`: the same probe on QEMU, side by side.
//! Skips loudly without /dev/kvm or without QEMU.
#![cfg(target_arch = "x86_64")]

use std::path::Path;
use std::process::Command;

#[test]
fn the_probe_runs_on_qemu_beside_trapline() {
    if !Path::new("/dev/kvm").exists() {
        eprintln!("SKIPPED peer: /dev/kvm is absent on this machine — this KVM test did NOT run");
        return;
    }
    if Command::new("qemu-system-x86_64")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED peer: qemu-system-x86_64 is not installed — this test did NOT run");
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_trapline"))
        .args(["bench", "--repeat", "1", "--goal", "300000", "--min-iters", "8", "--warmup", "4", "--no-progress", "--no-results"])
        .args(["--peer", "qemu", "--format", "json"])
        .args(["--only", "cpuid,pio-user-out,ro-memslot-read,portio-no-eventfd:pci-io,portio-wildcard-eventfd:pci-io,raw-kvm:*"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["config"]["peer"].as_str().unwrap().starts_with("qemu"));
    // Whatever model this host's QEMU starts with is recorded.
    let cpu = v["config"]["peer_cpu"].as_str().unwrap();
    assert!(["host", "max", "default"].contains(&cpu), "{cpu}");
    assert_eq!(cpu == "host", v["config"]["peer_cpu_note"].is_null());
    let row = |vmm: &str, name: &str| {
        v["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["vmm"] == vmm && s["name"] == name)
            .cloned()
            .unwrap()
    };
    for name in [
        "noop",
        "cpuid",
        "pio-user-out",
        "portio-no-eventfd:pci-io",
        "portio-wildcard-eventfd:pci-io",
    ] {
        let q = row("qemu", name);
        assert_eq!(q["status"], "ok", "qemu:{name}: {q}");
        assert!(q["stats"]["median"].as_f64().unwrap() > 0.0);
    }
    // What QEMU cannot serve the same way says so, with the reason.
    let ro = row("qemu", "ro-memslot-read");
    assert_eq!(ro["status"], "unsupported");
    assert!(ro["reason"].as_str().unwrap().contains("n/a on QEMU"));
    let derived: Vec<&str> = v["derived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    // (Their ratio needs QEMU's own cost to come out positive, which loops
    // this short do not promise.)
    for want in [
        "pci-io-user-exit-premium",
        "qemu:pci-io-user-exit-premium",
        "own-cost-per-user-exit",
        "qemu:own-cost-per-user-exit",
    ] {
        assert!(derived.contains(&want), "{want} not in {derived:?}");
    }
}

/// QEMU 7.2 aborts at start-up with `-cpu host` and `-cpu max` on some
/// hosts (AMD EPYC under nested KVM). A wrapper that does the same on any
/// host shows the peer falling back to QEMU's default model, and saying so.
#[test]
fn a_qemu_that_aborts_with_cpu_host_falls_back_to_its_default_model() {
    if !Path::new("/dev/kvm").exists() {
        eprintln!(
            "SKIPPED peer fallback: /dev/kvm is absent on this machine — this KVM test did NOT run"
        );
        return;
    }
    if Command::new("qemu-system-x86_64")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "SKIPPED peer fallback: qemu-system-x86_64 is not installed — this test did NOT run"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("trapline-peer-wrapper-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wrapper = dir.join("qemu-aborts-on-cpu-host");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\n\
         for a in \"$@\"; do case \"$a\" in host|max)\n\
           echo \"qemu-system-x86_64: kvm_buf_set_msrs: Assertion 'ret == cpu->kvm_msr_buf->nmsrs' failed.\" >&2\n\
           kill -ABRT $$;;\n\
         esac; done\n\
         exec qemu-system-x86_64 \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_trapline"))
        .env("TRAPLINE_QEMU", &wrapper)
        .args([
            "bench",
            "--repeat",
            "1",
            "--goal",
            "300000",
            "--min-iters",
            "8",
            "--warmup",
            "2",
            "--no-progress",
            "--no-results",
        ])
        .args([
            "--peer",
            "qemu",
            "--format",
            "json",
            "--only",
            "pio-user-out",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["peer_cpu"], "default");
    let note = v["config"]["peer_cpu_note"].as_str().unwrap();
    assert!(
        note.contains("-cpu host") && note.contains("-cpu max"),
        "{note}"
    );
    assert!(
        note.contains("Assertion"),
        "QEMU's own words are kept: {note}"
    );
    let q = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["vmm"] == "qemu" && s["name"] == "pio-user-out")
        .unwrap();
    assert_eq!(q["status"], "ok", "{q}");
}

#[test]
fn a_missing_qemu_is_explained() {
    let o = Command::new(env!("CARGO_BIN_EXE_trapline"))
        .env("TRAPLINE_QEMU", "/nonexistent/qemu-system-x86_64")
        .args(["bench", "--peer", "qemu", "--no-results"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("qemu-system-x86") && err.contains("apt-get install"),
        "{err}"
    );
}
