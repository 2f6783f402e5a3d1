//! The data path end to end: `builtin:vnet` (trapline's virtio-net driver)
//! moves UDP request/response pairs and bursts through the echo back end on
//! every `--virtio-notify` × `--virtio-irq` path with nothing lost,
//! reordered or wrong (the guest checks every byte of every frame), and
//! through a TAP to a UDP echo inside a network namespace (skipped loudly
//! where the host does not let this process make one); `trapline
//! net-paths --peer qemu` prints a row of every kind on both
//! architectures, vhost-net measured where the host has /dev/vhost-net (the
//! emulated arm64 host's CI stage loads it; this x86 host has none: the row
//! says so), and QEMU's rows on the same payload beside them (ioeventfd off
//! and on, and vhost=on where /dev/vhost-net exists) with nothing lost.
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
            // wait_ms: TCG (the arm64 stage) can take over a second for a frame under load.
            "{} pairs=50 bursts=4 depth=8 bsize=300 wait_ms=20000",
            net::endpoints::guest_words(true)
        );
        let o = lab
            .command(env!("CARGO_BIN_EXE_trapline"))
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
            .expect("spawn trapline in the namespace");
        check(&o, &format!("tap {notify} + {irq}"), 50);
    }
    // Every pair, every warm-up pair and every burst frame went through the host's echo.
    assert!(
        lab.echoed() >= 2 * (50 + 16 + 4 * 8),
        "echoed {}",
        lab.echoed()
    );
}

/// `trapline net-paths --peer qemu` with small amounts (the emulated arm64
/// host is TCG: an exit costs 50–600 µs there): every row kind on both
/// architectures, echo and TAP measured with nothing lost, vhost-net
/// measured on ioeventfd + irqfd where the host has /dev/vhost-net, and
/// QEMU's rows on the same payload measured with nothing lost.
#[test]
fn net_paths_prints_a_row_of_every_kind() {
    let test = "net_paths_prints_a_row_of_every_kind";
    if !kvm_present(test) {
        return;
    }
    let started = std::time::Instant::now();
    let o = run(&[
        "net-paths",
        "--pairs",
        "10",
        "--bursts",
        "1",
        "--depth",
        "8",
        "--repeat",
        "1",
        "--no-doorbell",
        "--peer",
        "qemu",
        // TCG (the arm64 stage) can take over a second for a frame under load.
        "--wait-ms",
        "20000",
        "--format",
        "json",
        "--timeout",
        "120",
    ]);
    // Seen, not asserted: the emulated arm64 host's stage keeps this short.
    eprintln!(
        "{}{test}: trapline net-paths took {:.1} s",
        stderr(&o),
        started.elapsed().as_secs_f64()
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}:\n{}{}", stdout(&o), stderr(&o)));
    let rows = v["rows"].as_array().expect("rows");
    for r in rows {
        let mut short = r.clone();
        if let Some(o) = short.as_object_mut() {
            o.remove("rtt_ns_buckets");
        }
        eprintln!("{test}: {short}");
    }
    let of = |backend: &'static str| {
        rows.iter()
            .filter(move |r| r["backend"] == backend && r["vmm"] == "trapline")
    };
    let measured = |r: &serde_json::Value| {
        assert_every_frame_back(r);
        assert!(r["exits_per_packet"]["trapline"].is_number(), "{r}");
    };
    assert_eq!(of("echo").count(), 4);
    of("echo").for_each(measured);
    // TAP rows are measured, or say why not (no CAP_NET_ADMIN): never silently absent.
    assert_eq!(of("tap").count(), 4);
    let tap_ran = of("tap").all(|r| !r["not_available"].is_string());
    if tap_ran {
        of("tap").for_each(measured);
    } else {
        eprintln!(
            "SKIPPED the TAP rows of {test}: {} — TAP did NOT run",
            of("tap").next().unwrap()["not_available"]
        );
    }
    check_vhost_rows(
        test,
        &of("vhost-net").collect::<Vec<_>>(),
        tap_ran,
        measured,
    );
    check_qemu_rows(
        test,
        &rows
            .iter()
            .filter(|r| r["vmm"] == "qemu")
            .collect::<Vec<_>>(),
        tap_ran,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

/// A measured row of the test's run: its 10 pairs timed, a round trip,
/// nothing lost, reordered or wrong.
fn assert_every_frame_back(r: &serde_json::Value) {
    assert_eq!(
        (&r["lost"], &r["reordered"], &r["bad"]),
        (&0.0.into(), &0.0.into(), &0.0.into()),
        "{r}"
    );
    assert_eq!(r["pairs_timed"], 10, "{r}");
    assert!(r["rtt_p50_us"].as_f64().unwrap() > 0.0, "{r}");
}

/// QEMU's rows (`-device virtio-net-device` on the namespace's TAP):
/// ioeventfd off, ioeventfd on, and vhost=on, each measured with nothing
/// lost, reordered or wrong; vhost=on says why not where /dev/vhost-net is
/// absent. Skipped loudly only where QEMU is not installed (or the
/// namespace for its TAP could not be made).
fn check_qemu_rows(test: &str, rows: &[&serde_json::Value], tap_ran: bool) {
    let paths: Vec<_> = rows.iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "ioeventfd=off vhost=off",
            "ioeventfd=on vhost=off",
            "vhost=on"
        ],
        "{rows:?}"
    );
    if let Err(e) = trapline_peers::qemu::find() {
        for r in rows {
            assert!(r["not_available"].is_string(), "{r}");
        }
        eprintln!("SKIPPED the QEMU rows of {test}: {e} — QEMU did NOT run");
        return;
    }
    if !tap_ran {
        for r in rows {
            assert!(r["not_available"].is_string(), "{r}");
        }
        eprintln!("SKIPPED the QEMU rows of {test}: no namespace for their TAP — QEMU did NOT run");
        return;
    }
    let measured = |r: &serde_json::Value| {
        assert!(r["failed"].is_null() && r["not_available"].is_null(), "{r}");
        assert_every_frame_back(r);
    };
    rows[..2].iter().for_each(|r| measured(r));
    if std::path::Path::new("/dev/vhost-net").exists() {
        measured(rows[2]);
    } else {
        let why = rows[2]["not_available"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", rows[2]));
        assert!(why.contains("/dev/vhost-net is absent"), "{}", rows[2]);
        eprintln!("SKIPPED QEMU's vhost=on row of {test}: this host has no /dev/vhost-net — it did NOT run");
    }
}

/// vhost-net: one row per path; the three it cannot use say why; ioeventfd +
/// irqfd measured where /dev/vhost-net exists (and the namespace could be
/// made), else saying so.
fn check_vhost_rows(
    test: &str,
    rows: &[&serde_json::Value],
    tap_ran: bool,
    measured: impl Fn(&serde_json::Value),
) {
    assert_eq!(rows.len(), 4, "{rows:?}");
    for r in &rows[..3] {
        let why = r["not_available"].as_str().unwrap_or_else(|| panic!("{r}"));
        assert!(why.contains("kernel back end cannot use this path"), "{r}");
    }
    let fast = rows[3];
    assert_eq!(fast["path"], "ioeventfd + irqfd", "{fast}");
    if !std::path::Path::new("/dev/vhost-net").exists() {
        let why = fast["not_available"]
            .as_str()
            .unwrap_or_else(|| panic!("{fast}"));
        assert!(why.contains("modprobe vhost_net"), "{fast}");
        eprintln!("SKIPPED the vhost-net row of {test}: this host has no /dev/vhost-net (modprobe vhost_net) — vhost-net did NOT run");
    } else if !tap_ran {
        assert!(fast["not_available"].is_string(), "{fast}");
        eprintln!(
            "SKIPPED the vhost-net row of {test}: no namespace for its TAP — vhost-net did NOT run"
        );
    } else {
        measured(fast);
    }
}
