//! `trapline run` on arm64 end to end: the real binary on the `virt`
//! machine with trapline's own arm64 payloads. Needs /dev/kvm (the
//! emulated ARM64 host of scripts/arm64/test.sh has it); skips loudly
//! without it. Timings are never asserted (under TCG an exit costs
//! 50-600 µs).
#![cfg(target_arch = "aarch64")]

mod common;

use common::{kvm_present, run};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Run `builtin:<payload>` with `extra` flags; (status, stdout, stderr).
fn guest(payload: &str, extra: &[&str]) -> (i32, String, String) {
    let kernel = format!("builtin:{payload}");
    let mut args = vec![
        "run",
        "--kernel",
        &kernel,
        "--serial",
        "stdio",
        "--timeout",
        "240",
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    eprintln!("--- trapline {args:?}\n--- stdout:\n{o}--- stderr:\n{e}");
    (out.status.code().unwrap_or(-1), o, e)
}

#[test]
fn hello_prints_its_lines_and_powers_off_with_status_0() {
    if !kvm_present("hello_prints_its_lines_and_powers_off_with_status_0") {
        return;
    }
    let (status, out, _) = guest("hello", &["--append", "exit=0 one two"]);
    assert_eq!(status, 0);
    assert!(out.contains("hello from trapline arm64 guest"), "{out}");
    assert!(out.contains("argv[2]=one"), "{out}");
    assert!(out.contains("1 cpus in the device tree"), "{out}");
}

#[test]
fn the_virt_machine_has_qemus_pl031_and_32_empty_virtio_mmio_transports() {
    if !kvm_present("the_virt_machine_has_qemus_pl031_and_32_empty_virtio_mmio_transports") {
        return;
    }
    let (status, out, _) = guest("hello", &["--append", "devices=1"]);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("virtio-mmio: 32 transports in the device tree"),
        "{out}"
    );
    // An empty transport, as QEMU's: "virt", the legacy layout, DeviceID 0.
    for base in ["a000000", "a003e00"] {
        let line = format!("virtio-mmio@{base}: magic=74726976 version=1 device-id=0 ");
        assert!(out.contains(&line), "{line}: {out}");
    }
    assert!(
        out.contains("id 31 10 14 00 0d f0 05 b1"),
        "PL031 PrimeCell IDs: {out}"
    );
    assert!(out.contains("pl031: node yes"), "{out}");
    let dr: u64 = out
        .split("dr=")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no dr= in {out}"));
    // The host's time: after 2020-01-01T00:00:00Z.
    assert!(dr > 1_577_836_800, "dr={dr}");
}

#[test]
fn hello_exits_through_the_debug_exit_page_with_its_status() {
    if !kvm_present("hello_exits_through_the_debug_exit_page_with_its_status") {
        return;
    }
    let (status, _, err) = guest("hello", &["--append", "exit=3"]);
    // isa-debug-exit's convention, as on x86: (3 << 1) | 1.
    assert_eq!(status, 7, "{err}");
}

#[test]
fn psci_system_reset_ends_the_run_like_a_reboot() {
    if !kvm_present("psci_system_reset_ends_the_run_like_a_reboot") {
        return;
    }
    let (status, _, err) = guest("hello", &["--append", "reset=1"]);
    assert_eq!(status, 0, "{err}");
    assert!(err.contains("requested a reset"), "{err}");
    // SYSTEM_OFF, by contrast, is a power-off.
    let (status, _, err) = guest("hello", &[]);
    assert_eq!(status, 0);
    assert!(!err.contains("requested a reset"), "{err}");
}

#[test]
fn smp_starts_the_second_cpu_with_psci_cpu_on() {
    if !kvm_present("smp_starts_the_second_cpu_with_psci_cpu_on") {
        return;
    }
    let (status, out, err) = guest("smp", &["--smp", "2"]);
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("smp: 2 of 2 cpus online"), "{out}");
}

/// How many accesses the two-vCPU hostile guest makes: 10^5 in CI's
/// emulated host (about N minutes there), TRAPLINE_HOSTILE_N=1000000 for the
/// full run by hand (docs/results/2026-11-29-arm64-hostile.md).
fn hostile_count() -> u64 {
    match std::env::var("TRAPLINE_HOSTILE_N") {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("TRAPLINE_HOSTILE_N={v:?} is not a whole number")),
        Err(_) => 100_000,
    }
}

/// The number after `key` (e.g. "gic=") in `out`'s line starting with `line`.
fn field(out: &str, line: &str, key: &str) -> u64 {
    out.lines()
        .find(|l| l.starts_with(line))
        .and_then(|l| l.split(key).nth(1))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} on a line starting {line:?}:\n{out}"))
}

/// Two vCPUs make random accesses to every window of `virt` at once: the
/// PL011, the PL031, the 32 virtio-mmio transports (transport 0 a
/// virtio-blk disk, served by the ioeventfd worker), the PCIe ECAM and
/// windows with pci-testdev's BARs, the GIC distributor, redistributors
/// and ITS, and the gaps. trapline survives and stays right: the guest
/// finishes with no abort, its UART prints, its devices' identification
/// registers read what they must, it powers off (status 0), and every
/// access but those KVM's vGIC serves reached trapline once.
#[test]
fn two_vcpus_of_hostile_accesses_to_every_virt_device_leave_trapline_running_and_right() {
    if !kvm_present(
        "two_vcpus_of_hostile_accesses_to_every_virt_device_leave_trapline_running_and_right",
    ) {
        return;
    }
    let n = hostile_count();
    let disk = common::tmp("hostile-disk.img");
    std::fs::write(&disk, vec![0u8; 1 << 20]).unwrap();
    let append = format!("n={n} seed=7 cpus=2");
    let disk_arg = disk.display().to_string();
    // About 1 ms an access under TCG: a generous bound, never a timing.
    let timeout = (240 + n / 200).to_string();
    let args = [
        "run",
        "--kernel",
        "builtin:hostile",
        "--serial",
        "stdio",
        "--timeout",
        &timeout,
        "--smp",
        "2",
        "--device",
        "pci-testdev",
        "--disk",
        &disk_arg,
        "--virtio-notify",
        "ioeventfd",
        "--stat",
        "--append",
        &append,
    ];
    let started = std::time::Instant::now();
    let o = run(&args);
    let (status, out, err) = (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    );
    eprintln!(
        "--- trapline {args:?} took {:?}\n--- stdout:\n{out}--- stderr:\n{err}",
        started.elapsed()
    );
    let _ = std::fs::remove_file(&disk);
    assert_eq!(status, 0, "{err}");
    // Unmapped MMIO reads all-ones and writes are dropped: no aborts.
    assert!(
        out.contains(&format!("hostile: mmio={n} aborts=0 cpus=2 ")),
        "{out}"
    );
    assert!(out.contains("hostile: devices ok"), "{out}");
    assert!(!out.contains("CHECK FAILED"), "{out}");
    // The accounting: each access KVM's vGIC does not serve (the guest
    // counts those: the distributor, the ITS, the two vCPUs'
    // redistributor frames) is one exit to trapline, but the rare write an
    // ioeventfd of the disk or of pci-testdev takes inside KVM; on top, the
    // console's (about two exits a byte) and the ucalls.
    let gic = field(&out, "hostile: mmio=", "gic=");
    let reached = field(&err, "trapline --stat:", "wall, ");
    assert!(gic > n / 20 && gic < n / 2, "gic={gic} of {n}");
    assert!(
        reached + n / 1000 >= n - gic && reached < n - gic + 4000,
        "{reached} exits reached trapline for {} accesses the vGIC does not serve",
        n - gic
    );
}

/// One vCPU with pci-testdev and the read-only ECAM: random accesses to
/// the PCIe host's ECAM and windows (VIRT_WINDOWS has them) among the rest.
#[test]
fn the_hostile_guest_survives_the_pcie_host_with_pci_testdev_and_ecam_ro() {
    if !kvm_present("the_hostile_guest_survives_the_pcie_host_with_pci_testdev_and_ecam_ro") {
        return;
    }
    let (status, out, err) = guest(
        "hostile",
        &[
            "--device",
            "pci-testdev",
            "--ecam-ro",
            "--append",
            "n=20000 seed=11",
        ],
    );
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("hostile: mmio=20000 aborts=0"), "{out}");
}

#[test]
fn stat_counts_the_pl011_writes_by_key() {
    if !kvm_present("stat_counts_the_pl011_writes_by_key") {
        return;
    }
    let (status, _, err) = guest("hello", &["--stat"]);
    assert_eq!(status, 0, "{err}");
    let line = err
        .lines()
        .find(|l| l.trim_start().starts_with("0x9000000:W"))
        .unwrap_or_else(|| panic!("no PL011 data-register key in --stat:\n{err}"));
    assert!(line.contains("pl011"), "{line}");
    // The ucall page is keyed too (the payload's DONE).
    assert!(err.contains("0xb000000:W"), "{err}");
}

#[test]
fn seccomp_on_and_off_both_run_the_guest() {
    if !kvm_present("seccomp_on_and_off_both_run_the_guest") {
        return;
    }
    // The default (seccomp on every thread) is what every other test uses;
    // here it is set against a run without it.
    let (on, out_on, _) = guest("hello", &[]);
    let (off, out_off, _) = guest("hello", &["--no-seccomp"]);
    assert_eq!((on, off), (0, 0));
    assert_eq!(out_on, out_off);
}

#[test]
fn x86_only_flags_are_refused_with_a_usage_error() {
    for flags in [
        &["--irqchip", "split"][..],
        &["--no-pit"],
        &["--acpi", "reduced"],
        &["--device", "pc-testdev"],
        &["--cpu", "qemu64"],
    ] {
        let mut args = vec!["run", "--kernel", "builtin:hello"];
        args.extend_from_slice(flags);
        let out = run(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains("x86-only"), "{flags:?}: {err}");
    }
}

#[test]
fn an_x86_image_is_a_clear_image_error() {
    if !kvm_present("an_x86_image_is_a_clear_image_error") {
        return;
    }
    let path = common::tmp("x86.elf");
    let mut elf = vec![0u8; 64];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2;
    elf[5] = 1;
    elf[18] = 62;
    std::fs::write(&path, elf).unwrap();
    let out = run(&["run", "--kernel", path.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("x86_64"), "{err}");
}

/// The lab on arm64: every arm64 scenario runs (`--quick`, one repeat to
/// keep the emulated host's time down) and passes its check, in the JSON
/// report: exits by kind, eventfd counts, values read back, interrupts
/// acknowledged; so does every loop of the raw-KVM floor ladder, and the
/// values derived from the floor are there. Nothing is asserted about the
/// times.
#[test]
fn bench_quick_runs_every_arm64_scenario_with_its_check_green() {
    if !kvm_present("bench_quick_runs_every_arm64_scenario_with_its_check_green") {
        return;
    }
    let out = run(&[
        "bench",
        "--quick",
        "--repeat",
        "1",
        "--no-results",
        "--no-progress",
        "--format",
        "json",
        // A bound per probe VM, not an expectation: since every scenario
        // also runs its recorded tails pass (up to 4,096 single iterations,
        // each user exit 50-600 µs under TCG) the VM that holds most
        // scenarios outlasted 120 s on a loaded host (2026-11-29).
        "--timeout",
        "600",
    ]);
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    eprintln!("--- stderr:\n{e}");
    let report: serde_json::Value = serde_json::from_str(&o)
        .unwrap_or_else(|err| panic!("trapline bench printed no JSON report ({err}):\n{o}"));
    let rows = report["scenarios"].as_array().expect("scenarios");
    let trapline: Vec<&serde_json::Value> =
        rows.iter().filter(|r| r["vmm"] == "trapline").collect();
    every_scenario_ran_with_its_check(&trapline);
    user_exits_carry_their_tails(&trapline);
    hypercall_user_ran_or_says_why(&trapline);
    every_floor_rung_ran(rows);
    the_floor_s_values_are_derived(&report);
    assert_eq!(out.status.code(), Some(0), "{o}");
    // The host is emulated here: the report says so beside the numbers.
    let note = report["host"]["nested_note"].as_str().unwrap_or("");
    assert!(
        note.contains("emulated"),
        "no emulated-host caveat: {note:?}"
    );
}

/// Every arm64 scenario has a trapline row, `ok`, with its check's words.
fn every_scenario_ran_with_its_check(trapline: &[&serde_json::Value]) {
    for name in [
        "noop",
        "hypercall",
        "sysreg-trap",
        "mmio-vgic-read",
        "mmio-user-read",
        "mmio-user-write",
        "mmio-kernel-wildcard",
        "mmio-kernel-datamatch",
        "coalesced-mmio",
        "ram-read",
        "ro-memslot-read",
        "ro-memslot-write",
        "doorbell-user-mmio",
        "doorbell-ioeventfd-mmio",
        "doorbell-pv",
        "mmio-no-eventfd:pci-mem",
        "mmio-wildcard-eventfd:pci-mem",
        "mmio-datamatch-eventfd:pci-mem",
        "mmio-pv-eventfd:pci-mem",
        "portio-no-eventfd:pci-io",
        "portio-wildcard-eventfd:pci-io",
        "portio-datamatch-eventfd:pci-io",
        "portio-pv-eventfd:pci-io",
        "pci-config-read-ecam",
        "pci-config-read-ecam-ro",
        "pci-scan-ecam",
        "pci-scan-ecam-ro",
        "ipi",
        "ipi-halt",
        "self-ipi",
        "eoi",
        "irqfd",
    ] {
        let row = trapline
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row for {name}"));
        assert_eq!(row["status"], "ok", "{name}: {row}");
        assert!(
            row["check"].as_str().is_some_and(|c| !c.is_empty()),
            "{name} has no check text: {row}"
        );
    }
}

/// The tails of a few scenarios (the bare loop, the user exits, an
/// in-kernel one) read back from the guest: the stated sample (min(final
/// batch, the cap) per repeat), ordered percentiles, buckets. Behaviour
/// only: the values are TCG's.
fn user_exits_carry_their_tails(trapline: &[&serde_json::Value]) {
    let cap = trapline_abi::TAILS_SAMPLE_CAP;
    for name in [
        "noop",
        "mmio-user-read",
        "mmio-user-write",
        "mmio-kernel-wildcard",
    ] {
        let row = trapline
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row for {name}"));
        let t = &row["tails"];
        assert!(t.is_object(), "{name} has tails: {row}");
        assert!(t["error"].is_null(), "{name}: {t}");
        let want: u64 = row["samples"]
            .as_array()
            .expect("samples")
            .iter()
            .map(|x| x["iterations"].as_u64().unwrap().min(cap))
            .sum();
        assert_eq!(t["count"].as_u64(), Some(want), "{name}: {t}");
        let q = |k: &str| {
            t[k].as_u64()
                .unwrap_or_else(|| panic!("{name}: {k} in {t}"))
        };
        assert!(
            q("min") <= q("p50") && q("p50") <= q("p99") && q("p99") <= q("max"),
            "{name}: {t}"
        );
        let in_buckets: u64 = t["buckets"]
            .as_array()
            .expect("buckets")
            .iter()
            .map(|b| b[2].as_u64().unwrap())
            .sum();
        assert_eq!(
            in_buckets, want,
            "{name}: every recorded iteration in a bucket"
        );
        eprintln!(
            "{name}: tails count {} p50 {} p99 {} max {} (TCG ticks: behaviour only)",
            q("count"),
            q("p50"),
            q("p99"),
            q("max")
        );
    }
}

fn hypercall_user_ran_or_says_why(trapline: &[&serde_json::Value]) {
    // An HVC answered by trapline where KVM has the SMCCC filter (Linux
    // 6.4+); the emulated host's Debian 6.1 has none: unsupported, saying why.
    let user_hvc = trapline
        .iter()
        .find(|r| r["name"] == "hypercall-user")
        .expect("no row for hypercall-user");
    match user_hvc["status"].as_str() {
        Some("ok") => {}
        Some("unsupported") => assert!(
            user_hvc.to_string().contains("SMCCC filter"),
            "hypercall-user unsupported without its reason: {user_hvc}"
        ),
        _ => panic!("hypercall-user: {user_hvc}"),
    }
}

fn every_floor_rung_ran(rows: &[serde_json::Value]) {
    // The raw-KVM floor and its ladder: the probe's own loops on raw VMs,
    // each with its check green, KVM's own exit counters beside them, and
    // the values derived from the floor.
    let rungs = [
        "raw-kvm",
        "raw-kvm+vgic",
        "raw-kvm+its",
        "raw-kvm+ioeventfds",
        "raw-kvm+coalesced",
        "raw-kvm+memslots",
        "trapline-virt",
    ];
    for vmm in rungs {
        let mut names = vec!["noop", "mmio-kernel-wildcard", "ram-read"];
        names.push(if vmm == "raw-kvm" {
            "mmio-user-write"
        } else {
            "mmio-vgic-read"
        });
        for name in names {
            let row = rows
                .iter()
                .find(|r| r["vmm"] == vmm && r["name"] == name)
                .unwrap_or_else(|| panic!("no floor row {vmm}:{name}"));
            assert_eq!(row["status"], "ok", "{vmm}:{name}: {row}");
        }
    }
    let user = rows
        .iter()
        .find(|r| r["vmm"] == "raw-kvm" && r["name"] == "mmio-user-write")
        .expect("raw-kvm:mmio-user-write");
    assert_eq!(user["exits_per_iter"]["mmio-write"], 1.0, "{user}");
    let kvm_exits = user["kvm_exits_per_iter"]["exits"].as_f64().unwrap_or(0.0);
    assert!(kvm_exits >= 1.0, "KVM's counters beside the floor: {user}");
}

fn the_floor_s_values_are_derived(report: &serde_json::Value) {
    let derived = report["derived"].as_array().expect("derived");
    // The ratio divides by raw KVM's premium, so it is left out when
    // that premium came out at or below zero: under TCG the kernel path
    // and the user path can swap places from run to run.
    let raw_premium = derived
        .iter()
        .find(|d| d["name"] == "raw-kvm:user-exit-premium")
        .and_then(|d| d["value"].as_f64());
    if raw_premium.is_some_and(|p| p > 0.0) {
        assert!(
            derived
                .iter()
                .any(|d| d["name"] == "premium-ratio-vs-raw-kvm"),
            "no premium-ratio-vs-raw-kvm although raw KVM's premium is {raw_premium:?}"
        );
    }
    for name in [
        "raw-kvm:user-exit-premium",
        "handling-per-user-exit",
        "piece:vgic:mmio-kernel-wildcard",
        "trapline-vs-trapline-virt:mmio-vgic-read",
    ] {
        assert!(
            derived.iter().any(|d| d["name"] == name),
            "no derived value {name}"
        );
    }
}

#[test]
fn the_experiments_are_refused_on_arm64_for_now() {
    for args in [&["virtio-paths"][..], &["linux-boot", "--list"][..]] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("not available on arm64 yet"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn metrics_lines_count_the_consoles_mmio_writes() {
    if !kvm_present("metrics_lines_count_the_consoles_mmio_writes") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("trapline-arm64-metrics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let m = dir.join("metrics.ndjson");
    let (status, out, err) = guest("hello", &["--metrics-path", m.to_str().unwrap()]);
    assert_eq!(status, 0, "{err}");
    // Newline-delimited JSON, the last line final, as on x86; each line's
    // counts are deltas since the line before (Firecracker's), and under
    // an emulated host the run outlasts the flush interval.
    let text = std::fs::read_to_string(&m).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.last().unwrap()["final"], true);
    // Every console byte is one MMIO write to the PL011's data register;
    // the ucalls add a few more.
    let writes: u64 = lines
        .iter()
        .map(|l| l["vcpu"]["exit_mmio_write"].as_u64().unwrap())
        .sum();
    assert!(
        writes >= out.len() as u64,
        "{writes} MMIO writes for {} console bytes",
        out.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
