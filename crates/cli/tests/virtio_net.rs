//! `trapline run --net`: a back end that cannot be had is a usage error
//! before the guest starts; a machine with the card runs a guest that
//! ignores it exactly as one without, on every notify × irq path, and
//! reports the card's counters. The data path itself is tested without
//! KVM in `trapline-devices` (echo byte for byte, the TAP in a network
//! namespace) and by the guest drivers that use it.

mod common;

use common::*;

#[test]
fn unusable_back_ends_are_usage_errors_before_the_guest_starts() {
    for (arg, says) in [
        // Without /dev/vhost-net refused naming the module; with it (the
        // emulated arm64 host) refused because a kernel back end needs the
        // ioeventfd and irqfd paths and this run asks for exits.
        ("vhost", "vhost"),
        // An interface that is not a TAP (or, unprivileged, not ours).
        ("tap:lo", "lo"),
    ] {
        let o = run(&[
            "run",
            "--kernel",
            "builtin:hello",
            "--net",
            arg,
            "--virtio-notify",
            "exit",
        ]);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "--net {arg}: {err}");
        assert!(
            err.contains("--net") && err.contains(says),
            "--net {arg}: {err}"
        );
        assert!(stdout(&o).is_empty(), "the guest never started");
    }
    for bad in ["bridge", "tap:a/b", "echo:x"] {
        let o = run(&["run", "--kernel", "builtin:hello", "--net", bad]);
        assert_eq!(code(&o), 2, "--net {bad}: {}", stderr(&o));
    }
}

/// The value of `key=` in the `trapline-virtio net=0` line on stderr.
fn net_stat(err: &str, key: &str) -> String {
    let line = err
        .lines()
        .find(|l| l.starts_with("trapline-virtio net=0"))
        .unwrap_or_else(|| panic!("no trapline-virtio net line in:\n{err}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {line}"))
        .to_owned()
}

#[test]
fn a_guest_that_ignores_the_card_runs_as_without_it_on_every_path() {
    if !kvm_present("a_guest_that_ignores_the_card_runs_as_without_it_on_every_path") {
        return;
    }
    let plain = run(&["run", "--kernel", "builtin:hello", "--timeout", "60"]);
    for (notify, irq) in [
        ("exit", "line"),
        ("exit", "irqfd"),
        ("ioeventfd", "line"),
        ("ioeventfd", "irqfd"),
    ] {
        let stat = tmp(&format!("net-stat-{notify}-{irq}.txt"));
        let stat_arg = format!("--stat={}", stat.display());
        let o = run(&[
            "run",
            "--kernel",
            "builtin:hello",
            "--net",
            "echo",
            "--virtio-notify",
            notify,
            "--virtio-irq",
            irq,
            "--timeout",
            "60",
            &stat_arg,
        ]);
        let err = stderr(&o);
        assert_eq!(code(&o), code(&plain), "{notify}/{irq}: {err}");
        let out = stdout(&o);
        assert_eq!(
            out.lines().next(),
            stdout(&plain).lines().next(),
            "{notify}/{irq}"
        );
        if cfg!(target_arch = "x86_64") {
            // builtin:hello prints its command line: the card is announced
            // as Linux finds virtio-mmio devices on the PC.
            assert!(out.contains("virtio_mmio.device=4K@0xd8000000:5"), "{out}");
        }
        assert_eq!(net_stat(&err, "backend"), "echo");
        for key in ["notifies", "tx_frames", "rx_frames", "drops"] {
            assert_eq!(net_stat(&err, key), "0", "{notify}/{irq}: {key}");
        }
    }
}

#[test]
fn the_card_takes_the_transport_after_the_disks() {
    if !kvm_present("the_card_takes_the_transport_after_the_disks") {
        return;
    }
    let disk = tmp("net-after-disk.img");
    std::fs::write(&disk, vec![0u8; 4096]).unwrap();
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--disk",
        disk.to_str().unwrap(),
        "--net",
        "echo",
        "--timeout",
        "60",
    ]);
    let out = stdout(&o);
    // "hello from trapline guest" on x86, "… arm64 guest" on arm64.
    assert!(out.contains("hello from trapline "), "{}", stderr(&o));
    if cfg!(target_arch = "x86_64") {
        // The disk first, the card on the next window and GSI.
        assert!(
            out.contains("=virtio_mmio.device=4K@0xd8000000:5\r\n")
                && out.contains("=virtio_mmio.device=4K@0xd8001000:6\r\n"),
            "{out}"
        );
    }
}
