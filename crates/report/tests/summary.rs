//! The default terminal summary of `trapline bench`: one screen, never
//! wider than the width it is given, every failure in full.

mod common;

use trapline_bus::ExitKind;
use trapline_report::ladder::{KERNEL_PATHS, RUNGS};
use trapline_report::{
    summary, summary_header, Derived, Handling, Report, ScenarioResult, SummaryOptions,
};

/// Exits per iteration, by kind.
type Exits = &'static [(ExitKind, u64)];

/// trapline's scenarios as a full lab run has them (name, group, median
/// cycles per iteration, exits per iteration).
const TRAPLINE_ROWS: &[(&str, &str, f64, Exits)] = &[
    ("noop", "baseline", 6_346.0, &[]),
    ("cpuid", "trap", 12_671.0, &[]),
    ("hlt", "trap", 19_187.0, &[(ExitKind::Hlt, 1)]),
    ("pio-kernel-pic", "pio", 9_014.0, &[]),
    ("pio-user-out", "pio", 18_223.0, &[(ExitKind::PioWrite, 1)]),
    ("pio-user-in", "pio", 19_683.0, &[(ExitKind::PioRead, 1)]),
    ("pio-kernel-wildcard", "pio", 8_817.0, &[]),
    ("pio-kernel-datamatch", "pio", 8_753.0, &[]),
    (
        "mmio-user-read",
        "mmio",
        20_334.0,
        &[(ExitKind::MmioRead, 1)],
    ),
    (
        "mmio-user-write",
        "mmio",
        19_255.0,
        &[(ExitKind::MmioWrite, 1)],
    ),
    ("mmio-kernel-wildcard", "mmio", 9_498.0, &[]),
    ("mmio-kernel-datamatch", "mmio", 9_426.0, &[]),
    ("coalesced-mmio", "coalesced", 9_795.0, &[]),
    ("coalesced-pio", "coalesced", 9_008.0, &[]),
    ("ram-read", "memslot", 9_281.0, &[]),
    ("ro-memslot-read", "memslot", 8_934.0, &[]),
    (
        "ro-memslot-write",
        "memslot",
        19_644.0,
        &[(ExitKind::MmioWrite, 1)],
    ),
    ("vmm-floor-pio", "vmm", 19_238.0, &[(ExitKind::FastPort, 1)]),
    (
        "mmio-no-eventfd:pci-mem",
        "pci",
        20_707.0,
        &[(ExitKind::MmioWrite, 1)],
    ),
    ("mmio-wildcard-eventfd:pci-mem", "pci", 9_762.0, &[]),
    ("mmio-datamatch-eventfd:pci-mem", "pci", 10_023.0, &[]),
    ("mmio-pv-eventfd:pci-mem", "pci", 9_465.0, &[]),
    (
        "portio-no-eventfd:pci-io",
        "pci",
        19_256.0,
        &[(ExitKind::PioWrite, 1)],
    ),
    ("portio-wildcard-eventfd:pci-io", "pci", 9_130.0, &[]),
    ("portio-datamatch-eventfd:pci-io", "pci", 8_970.0, &[]),
    ("portio-pv-eventfd:pci-io", "pci", 9_147.0, &[]),
    (
        "pci-config-read-cf8",
        "pci-config",
        40_867.0,
        &[(ExitKind::PioWrite, 1), (ExitKind::PioRead, 1)],
    ),
    (
        "pci-config-read-ecam",
        "pci-config",
        21_899.0,
        &[(ExitKind::MmioRead, 1)],
    ),
    ("pci-config-read-ecam-ro", "pci-config", 9_980.0, &[]),
    (
        "pci-scan-cf8",
        "pci-config",
        11_841_251.0,
        &[(ExitKind::PioWrite, 256), (ExitKind::PioRead, 256)],
    ),
    (
        "pci-scan-ecam",
        "pci-config",
        6_971_012.0,
        &[(ExitKind::MmioRead, 256)],
    ),
    ("pci-scan-ecam-ro", "pci-config", 3_825_505.0, &[]),
    ("ipi", "irq", 2_463_813.0, &[]),
    ("ipi-halt", "irq", 196_888.0, &[]),
    ("self-ipi", "irq", 2_535_456.0, &[]),
    ("eoi", "irq", 35_077.0, &[]),
    ("ipi-x2apic", "irq", 2_225_674.0, &[]),
    ("ipi-halt-x2apic", "irq", 172_695.0, &[]),
    ("self-ipi-x2apic", "irq", 2_124_893.0, &[]),
    ("eoi-x2apic", "irq", 24_612.0, &[]),
    ("irqfd", "irq", 2_438_933.0, &[]),
    (
        "doorbell-user-mmio",
        "doorbell",
        24_998.0,
        &[(ExitKind::MmioWrite, 1)],
    ),
    ("doorbell-ioeventfd-mmio", "doorbell", 11_916.0, &[]),
    ("doorbell-ioeventfd-pio", "doorbell", 11_132.0, &[]),
    ("doorbell-pv", "doorbell", 10_989.0, &[]),
    ("pio-uart-out", "pio", 19_449.0, &[(ExitKind::PioWrite, 1)]),
];

const HYPERCALL_REASON: &str = "the hypercall did not return within 2 s: the vCPU spins inside \
KVM_RUN (seen on nested KVM); trapline kicked and stopped it";

fn row(name: &str, group: &str, cycles: f64, exits: &[(ExitKind, u64)]) -> ScenarioResult {
    ScenarioResult::new(name, group, format!("{name} path"))
        .with_samples(common::samples(cycles, exits))
        .with_check(format!("{name} did what its path claims"))
}

/// A report the size of a full `trapline bench`: trapline's 47 scenarios
/// (the hypercall unsupported, as on nested KVM), every rung of the floor
/// ladder, the unprofiled rows and the footprint.
fn lab_report() -> Report {
    let mut r = common::sample_report();
    r.config.peer = None;
    r.config.peer_cpu = None;
    r.scenarios.clear();
    r.wall_seconds = 71.0;
    for &(name, group, cycles, exits) in TRAPLINE_ROWS {
        let mut s = row(name, group, cycles, exits);
        if name == "pio-user-out" {
            for sample in &mut s.samples {
                sample.handling = Some(Handling {
                    exits: sample.iterations,
                    cycles: 399 * sample.iterations,
                });
            }
        }
        r.push(s);
        if name == "noop" {
            r.push(
                ScenarioResult::new("hypercall", "trap", "vmcall").unsupported(HYPERCALL_REASON),
            );
        }
    }
    for rung in RUNGS {
        r.push(row("noop", "floor", 6_300.0, &[]).with_vmm(rung.vmm));
        for (i, path) in KERNEL_PATHS.iter().enumerate() {
            r.push(row(path, "floor", 9_000.0 + 100.0 * i as f64, &[]).with_vmm(rung.vmm));
        }
    }
    r.push(
        row(
            "pio-user-out",
            "floor",
            18_300.0,
            &[(ExitKind::PioWrite, 1)],
        )
        .with_vmm("raw-kvm"),
    );
    for (name, cycles) in [("noop", 5_973.0), ("pio-user-out", 17_828.0)] {
        r.push(row(name, "floor", cycles, &[]).with_vmm("trapline-nostat"));
    }
    r.finish();
    for (name, value, unit) in [
        ("vmm-cpu-to-first-kvm-run", 0.85, "ms"),
        ("vmm-rss-beyond-guest", 1.75, "MiB"),
    ] {
        r.derived.push(Derived {
            name: name.into(),
            value,
            unit: unit.into(),
            formula: "median over 5 `trapline run` processes".into(),
            note: None,
            range: None,
            goal: None,
        });
    }
    r
}

const FILES: [&str; 2] = [
    "trapline-results/2026-11-26T08-15-02Z/report.json",
    "trapline-results/2026-11-26T08-15-02Z/report.html",
];

fn render(report: &Report, width: usize) -> String {
    summary(
        report,
        &SummaryOptions {
            width,
            files: FILES.iter().map(|f| f.to_string()).collect(),
        },
    )
}

fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "{} columns, more than {width}: {line:?}\n{text}",
            line.chars().count()
        );
    }
}

/// The text with its line breaks and indents folded into single spaces.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_full_lab_run_fits_one_screen_of_100_columns() {
    let r = lab_report();
    assert_eq!(r.scenarios.len(), 47 + RUNGS.len() * 4 + 1 + 2);
    let text = render(&r, 100);
    assert_fits(&text, 100);
    let lines = text.lines().count();
    assert!(lines <= 70, "{lines} lines:\n{text}");
    assert!(text.is_ascii(), "{text}");
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("trapline bench: 94 scenarios (47 on trapline, 45 on the floor ladder, 2 without --stat) in 71 s"), "{first}");
    assert!(text.contains("\nhost: Intel(R) Xeon(R) Test CPU @ 3.00GHz, Linux 6.8.0-test, 2 CPUs"));
    assert!(text.contains("\ncaveat: nested virtualization"), "{text}");
    assert!(
        text.contains("checks: all 93 passed; 1 scenario unsupported"),
        "{text}"
    );
    // trapline's own rows, grouped; not the ladder's.
    for &(name, ..) in &TRAPLINE_ROWS[1..] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().any(|w| w == name)),
            "{name} missing:\n{text}"
        );
    }
    assert!(!text.contains("raw-kvm+"), "{text}");
    let group_of = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().any(|w| w == name))
            .unwrap()
            .to_string()
    };
    assert!(group_of("pio-kernel-pic").starts_with("pio "));
    assert!(
        group_of("pio-uart-out").starts_with("    "),
        "pio-uart-out sits in the pio group"
    );
    assert!(
        flat(&text).contains("pci-config-read-cf8 34,521 "),
        "{text}"
    );
    assert!(flat(&text).contains("1 pio-read + 1 pio-write"), "{text}");
    assert!(
        flat(&text).contains("eoi 35,077* "),
        "self-timed rows are not net: {text}"
    );
    // The headline values, each with its goal and verdict.
    for (label, verdict) in [
        ("user-exit premium / raw KVM's", ""),
        ("own cycles per user exit 399 cyc", "met"),
        ("floor gap: PIO ioeventfd", ""),
        ("floor gap: MMIO ioeventfd", ""),
        ("floor gap: RAM read", ""),
        ("--stat profile overhead / premium", ""),
        (
            "CPU time from exec to the first KVM_RUN 0.85 CPU-ms 1 CPU-ms",
            "met",
        ),
        ("resident memory beyond guest RAM 1.75 MiB 2 MiB", "met"),
    ] {
        let line = text
            .lines()
            .map(flat)
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{label} missing:\n{text}"));
        assert!(
            ["met", "missed", "within spread"]
                .iter()
                .any(|v| line.ends_with(v)),
            "{line}"
        );
        assert!(line.ends_with(verdict), "{line}");
    }
    // The unsupported row last, its reason whole; then the files.
    assert!(
        flat(&text).contains(&format!(
            "Not measured: hypercall: unsupported: {HYPERCALL_REASON}"
        )),
        "{text}"
    );
    let tail: Vec<&str> = text.lines().rev().take(2).collect();
    assert!(
        tail[1].ends_with(FILES[0]) && tail[0].ends_with(FILES[1]),
        "{tail:?}"
    );
}

#[test]
fn a_narrow_terminal_is_respected() {
    let r = lab_report();
    assert_fits(&render(&r, 20), 20);
    for width in [80, 60, 40] {
        let text = render(&r, width);
        assert_fits(&text, width);
        // Nothing is cut: every scenario and both files are still there.
        let flat = flat(&text);
        for &(name, ..) in &TRAPLINE_ROWS[1..] {
            assert!(flat.contains(name), "{width}: {name} missing:\n{text}");
        }
        if width >= 60 {
            for f in FILES {
                assert!(flat.contains(f), "{width}: {f} missing:\n{text}");
            }
        }
    }
    // At 60 columns the groups become headings.
    let text = render(&r, 60);
    assert!(text.lines().any(|l| l == "pci-config:"), "{text}");
}

#[test]
fn the_summary_never_grows_past_100_columns() {
    let text = render(&lab_report(), 250);
    assert_fits(&text, 100);
}

#[test]
fn every_failure_is_listed_in_full_in_the_header() {
    let mut r = lab_report();
    let long = "expected 1 pio-write + 1 pio-read exits per iteration over 64 iterations, saw \
                64 pio-write, 3 hlt; the guest read 0xffffffff where the vendor and device id \
                should have been";
    for s in &mut r.scenarios {
        if s.vmm == "trapline" && s.name == "pci-config-read-cf8" {
            *s = s.clone().failed(long);
        }
        if s.vmm == "raw-kvm+pit" && s.name == "ram-read" {
            *s = s
                .clone()
                .failed("the value read was 0, expected 0x5a5a5a5a");
        }
    }
    r.finish();
    for width in [100, 60] {
        let text = render(&r, width);
        assert_fits(&text, width);
        let flat = flat(&text);
        assert!(
            flat.contains("checks: 2 of 93 FAILED; 1 scenario unsupported"),
            "{text}"
        );
        assert!(
            flat.contains(&format!("FAILED pci-config-read-cf8: {long}")),
            "{text}"
        );
        assert!(
            flat.contains("FAILED raw-kvm+pit:ram-read: the value read was 0, expected 0x5a5a5a5a"),
            "{text}"
        );
        assert!(
            flat.contains("pci-config-read-cf8: failed its check (above)"),
            "{text}"
        );
        let failed_at = text.find("FAILED pci-config").unwrap();
        let table_at = text.find("trapline's scenarios").unwrap();
        assert!(failed_at < table_at, "failures come first:\n{text}");
    }
}

#[test]
fn without_report_files_the_summary_says_how_to_see_the_rest() {
    let text = summary(
        &lab_report(),
        &SummaryOptions {
            width: 100,
            files: Vec::new(),
        },
    );
    assert_fits(&text, 100);
    assert!(flat(&text).contains("--verbose"), "{text}");
    assert!(!text.contains("trapline-results"), "{text}");
}

#[test]
fn any_report_renders_within_the_width() {
    let mut empty = Report::new(Default::default(), Default::default(), Default::default());
    empty.finish();
    for r in [common::sample_report(), common::full_report(), empty] {
        for width in [100, 60, 20] {
            let text = render(&r, width);
            assert_fits(&text, width);
            assert_fits(&summary_header(&r, width), width);
        }
    }
    // The sample's failed and unsupported rows, and its peer, are named.
    let text = render(&common::sample_report(), 100);
    let flat = flat(&text);
    assert!(
        flat.contains("FAILED coalesced-mmio: guest reported 3 != 4"),
        "{text}"
    );
    assert!(
        flat.contains("mmio-kernel-datamatch: unsupported: KVM_CAP_IOEVENTFD missing"),
        "{text}"
    );
    assert!(text.contains("\npeer: qemu, -cpu host"), "{text}");
}

#[test]
fn the_header_alone_is_what_verbose_prints_first() {
    let r = lab_report();
    let header = summary_header(&r, 100);
    assert!(render(&r, 100).starts_with(&header));
    assert!(header.lines().count() <= 6, "{header}");
}

/// A scenario with one slow repeat is named under "Noise", with what to do;
/// a clean run has no such block.
#[test]
fn noisy_scenarios_are_named_with_what_to_do() {
    let clean = lab_report();
    assert!(!render(&clean, 100).contains("Noise:"));
    let mut r = lab_report();
    let s = r
        .scenarios
        .iter_mut()
        .find(|s| s.vmm == "trapline" && s.name == "pio-user-out")
        .unwrap();
    let last = s.samples.len() - 1;
    s.samples[last].cycles = s.samples[last].iterations * 700_000;
    r.finish();
    let t = render(&r, 100);
    assert!(t.contains("Noise: 1 scenario of"), "{t}");
    assert!(t.contains("  pio-user-out: outliers: 1 of"), "{t}");
    assert!(
        t.contains("what to do, spread or outliers: the host was busy"),
        "{t}"
    );
    assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
}
