//! The data path end to end: `builtin:vnet` (trapline's virtio-net driver)
//! moves UDP request/response pairs and bursts through the echo back end on
//! every `--virtio-notify` × `--virtio-irq` path with nothing lost,
//! reordered or wrong (the guest checks every byte of every frame), and
//! through a TAP to a UDP echo inside a network namespace (skipped loudly
//! where the host does not let this process make one); `trapline
//! net-paths` prints a row of every kind.
#![cfg(feature = "bench")]

mod common;

use common::*;
use trapline_peers::experiments::net::{self, netns::NetLab};

/// The status of the guest's `exit(0)`: isa-debug-exit's `(0 << 1) | 1`
/// on x86, PSCI SYSTEM_OFF on arm64.
const GUEST_OK: i32 = if cfg!(target_arch = "x86_64") { 1 } else { 0 };

const PATHS: [(&str, &str); 4] = [
    ("exit", "line"),
    ("exit", "irqfd"),
    ("ioeventfd", "line"),
    ("ioeventfd", "irqfd"),
];

/// Checks a run's console: the verdict, nothing lost, `pairs` round trips in the histogram.
fn check(o: &std::process::Output, what: &str, pairs: u64) -> net::guest::VnetRun {
    let out = stdout(o);
    assert_eq!(code(o), GUEST_OK, "{what}:\n{out}{}", stderr(o));
    let r = net::guest::parse(&out).unwrap_or_else(|e| panic!("{what}: {e}:\n{out}"));
    assert!(r.ok, "{what}: the guest said FAIL:\n{out}");
    assert_eq!(
        (r.lost, r.reordered, r.bad, r.dup),
        (0, 0, 0, 0),
        "{what}:\n{out}"
    );
    assert_eq!(r.rtt.count(), pairs, "{what}: round trips timed");
    assert_eq!(
        r.bursts_whole, r.bursts,
        "{what}: every burst came back whole"
    );
    assert!(
        r.irqs > 0,
        "{what}: the receive interrupt never came:\n{out}"
    );
    r
}

#[test]
fn echo_moves_every_frame_back_exactly_on_every_path() {
    if !kvm_present("echo_moves_every_frame_back_exactly_on_every_path") {
        return;
    }
    for (notify, irq) in PATHS {
        for event_idx in ["on", "off"] {
            let what = format!(
                "--virtio-notify {notify} --virtio-irq {irq} --virtio-event-idx {event_idx}"
            );
            let o = run(&[
                "run",
                "--kernel",
                "builtin:vnet",
                "--net",
                "echo",
                "--virtio-notify",
                notify,
                "--virtio-irq",
                irq,
                "--virtio-event-idx",
                event_idx,
                "--append",
                "pairs=100 bursts=8 depth=16 size=200 bsize=300",
                "--timeout",
                "120",
            ]);
            let r = check(&o, &what, 100);
            assert_eq!((r.depth, r.pair_size), (16, 200), "{what}");
        }
    }
}

#[test]
fn without_a_card_the_guest_says_so() {
    if !kvm_present("without_a_card_the_guest_says_so") {
        return;
    }
    let o = run(&["run", "--kernel", "builtin:vnet", "--timeout", "60"]);
    let out = stdout(&o);
    assert!(out.contains("vnet: no virtio"), "{out}");
    // Exit 2 (no transport named) on x86, 3 (no transport holds a
    // virtio-net) on arm64: status (code << 1) | 1.
    let want = if cfg!(target_arch = "x86_64") { 5 } else { 7 };
    assert_eq!(code(&o), want, "{out}");
}

#[test]
fn tap_reaches_a_udp_echo_in_a_namespace() {
    if !kvm_present("tap_reaches_a_udp_echo_in_a_namespace") {
        return;
    }
    let lab = match NetLab::new(None) {
        Ok(lab) => lab,
        Err(e) => {
            eprintln!(
                "SKIPPED tap_reaches_a_udp_echo_in_a_namespace: {e} — this TAP test did NOT run"
            );
            return;
        }
    };
    for (notify, irq) in [("exit", "line"), ("ioeventfd", "irqfd")] {
        let words = format!(
            "{} pairs=50 bursts=4 depth=8 bsize=300",
            net::endpoints::guest_words(true)
        );
        let o = std::process::Command::new("ip")
            .args(["netns", "exec", &lab.name, env!("CARGO_BIN_EXE_trapline")])
            .args(["run", "--kernel", "builtin:vnet", "--net"])
            .arg(format!("tap:{}", net::netns::TAP_NAME))
            .args([
                "--virtio-notify",
                notify,
                "--virtio-irq",
                irq,
                "--append",
                &words,
            ])
            .args(["--timeout", "120"])
            .output()
            .expect("spawn ip netns exec");
        check(&o, &format!("tap {notify} + {irq}"), 50);
    }
    // Every pair, every warm-up pair and every burst frame went through the host's echo.
    assert!(
        lab.echoed() >= 2 * (50 + 16 + 4 * 8),
        "echoed {}",
        lab.echoed()
    );
}

#[test]
fn net_paths_prints_a_row_of_every_kind() {
    if !kvm_present("net_paths_prints_a_row_of_every_kind") {
        return;
    }
    if trapline_peers::arch::experiments::UNAVAILABLE.is_some() {
        eprintln!("SKIPPED net_paths_prints_a_row_of_every_kind: the experiments do not run on this architecture");
        return;
    }
    let o = run(&[
        "net-paths",
        "--quick",
        "--pairs",
        "30",
        "--no-doorbell",
        "--format",
        "json",
        "--timeout",
        "120",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}:\n{}{}", stdout(&o), stderr(&o)));
    let rows = v["rows"].as_array().expect("rows");
    let of = |backend: &'static str| rows.iter().filter(move |r| r["backend"] == backend);
    assert_eq!(of("echo").count(), 4);
    for r in of("echo") {
        assert_eq!(r["lost"], 0.0, "{r}");
        assert_eq!(r["reordered"], 0.0, "{r}");
        assert_eq!(r["pairs_timed"], 30, "{r}");
        assert!(r["rtt_p50_us"].as_f64().unwrap() > 0.0, "{r}");
    }
    // TAP rows are measured, or say why not (no CAP_NET_ADMIN): never silently absent.
    assert_eq!(of("tap").filter(|r| r["vmm"] == "trapline").count(), 4);
    for r in of("tap") {
        assert!(r["lost"] == 0.0 || r["not_available"].is_string(), "{r}");
    }
    assert!(of("vhost-net").all(|r| r["not_available"].is_string()));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}
