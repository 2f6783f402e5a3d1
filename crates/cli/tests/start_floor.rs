//! The start-up floor program on this host's KVM: it enters its guest once
//! and prints the footprint lines the lab reads, one phase per mark it
//! shares with `trapline run`. Needs /dev/kvm: skips loudly without it.

use std::path::Path;
use std::process::Command;

#[test]
fn it_enters_the_guest_once_and_prints_its_phases() {
    if !Path::new("/dev/kvm").exists() {
        eprintln!(
            "SKIPPED it_enters_the_guest_once_and_prints_its_phases: /dev/kvm is absent on this \
             machine — this KVM test did NOT run"
        );
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_trapline-start-floor"))
        .output()
        .expect("the floor program runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty(), "it writes only to stderr");
    let total = stderr
        .lines()
        .find(|l| l.starts_with("trapline-footprint "))
        .unwrap_or_else(|| panic!("no footprint line: {stderr}"));
    for field in [
        "cpu_ns_to_first_kvm_run=",
        "rss_beyond_guest_bytes=",
        "wall_ns=",
    ] {
        assert!(total.contains(field), "{field} missing: {total}");
    }
    let marks: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("trapline-footprint-phase "))
        .filter_map(|l| l.split_once(" until=").map(|(_, m)| m))
        .collect();
    assert_eq!(
        marks,
        [
            "\"main\"",
            "\"vm created\"",
            "\"vcpus created\"",
            "\"first KVM_RUN\""
        ],
        "{stderr}"
    );
}
