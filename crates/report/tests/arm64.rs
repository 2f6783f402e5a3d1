//! An arm64 report, made without KVM (the rows an arm64 lab run produces,
//! with made-up counts): every format renders the arm64 rows, the seed
//! views `vmexit-arm` and `paper` put them in the seeds' own rows with the
//! arm64 caption and notes, and the emulated host's caveat and the
//! counter's ticks are named as such. Runs on every host.

mod common;

use common::{samples, view};
use trapline_bus::ExitKind;
use trapline_report::{
    render, Format, Handling, HostInfo, Report, RunConfig, ScenarioResult, ToolInfo, View,
};

/// An emulated arm64 host's lab run: the arm64 catalog's rows.
fn arm64_report() -> Report {
    let host = HostInfo {
        cpu_model: "arm64 CPU implementer 0x00 part 0x051".into(),
        cpu_vendor: "software (emulated)".into(),
        kernel: "6.1.0-test-arm64".into(),
        kvm_api_version: 12,
        nproc: 2,
        tsc_khz: 62_500,
        tsc_khz_crosscheck: Some(62_501),
        load_avg: [0.4, 0.1, 0.0],
        kvm_caps: Default::default(),
        nested_note: Some("this host's CPU is emulated (MIDR implementer 0x00)".into()),
        emulated: true,
        counter: Some("CNTVCT_EL0".into()),
        arch: Some(trapline_report::model::ARCH_ARM64.into()),
    };
    let config = RunConfig {
        repeat: 3,
        goal_cycles: 1 << 20,
        min_iters: 16,
        max_iters: 1 << 20,
        warmup: 16,
        quick: true,
        only: None,
        peer: None,
        peer_cpu: None,
        peer_cpu_note: None,
    };
    let mut r = Report::new(ToolInfo::new("trapline", "0.1.0"), host, config);
    r.started_at = "2026-11-26T11:00:00Z".into();
    let ok = |name: &str, group: &str, per: f64| {
        ScenarioResult::new(name, group, format!("{name} path")).with_samples(samples(per, &[]))
    };
    r.push(ok("noop", "baseline", 1.0));
    r.push(ok("hypercall", "trap", 5_100.0));
    r.push(ok("sysreg-trap", "trap", 6_300.0));
    r.push(ok("mmio-vgic-read", "mmio", 8_200.0));
    let user = |name: &str, kind: ExitKind, per: f64| {
        ScenarioResult::new(name, "mmio", format!("{name} path")).with_samples(
            samples(per, &[(kind, 1)])
                .into_iter()
                .map(|mut s| {
                    s.handling = Some(Handling {
                        exits: s.iterations,
                        cycles: 190 * s.iterations,
                    });
                    s
                })
                .collect(),
        )
    };
    r.push(user("mmio-user-read", ExitKind::MmioRead, 26_500.0));
    r.push(user("mmio-user-write", ExitKind::MmioWrite, 27_400.0));
    r.push(ok("mmio-kernel-wildcard", "mmio", 7_400.0));
    r.push(ok("mmio-kernel-datamatch", "mmio", 7_500.0));
    r.push(ok("ipi", "irq", 112_000.0));
    r.push(ok("eoi", "irq", 124.0));
    r.push(ok("ram-read", "memslot", 2.0));
    // The doorbells (no PIO on arm64) and the PCIe host's rows.
    let exits = |name: &str, group: &str, per: f64, kind: Option<(ExitKind, u64)>| {
        ScenarioResult::new(name, group, format!("{name} path"))
            .with_samples(samples(per, kind.as_slice()))
    };
    let w = Some((ExitKind::MmioWrite, 1));
    r.push(exits("doorbell-user-mmio", "doorbell", 520_000.0, w));
    r.push(exits(
        "doorbell-ioeventfd-mmio",
        "doorbell",
        150_000.0,
        None,
    ));
    r.push(exits("doorbell-pv", "doorbell", 98_000.0, None));
    for (name, per, exit) in [
        ("mmio-no-eventfd:pci-mem", 57_000.0, w),
        ("mmio-wildcard-eventfd:pci-mem", 6_700.0, None),
        ("mmio-datamatch-eventfd:pci-mem", 9_500.0, None),
        ("mmio-pv-eventfd:pci-mem", 7_300.0, None),
        ("portio-no-eventfd:pci-io", 23_000.0, w),
        ("portio-wildcard-eventfd:pci-io", 15_600.0, None),
        ("portio-datamatch-eventfd:pci-io", 16_600.0, None),
        ("portio-pv-eventfd:pci-io", 16_100.0, None),
    ] {
        r.push(exits(name, "pci", per, exit));
    }
    let rd = |n| Some((ExitKind::MmioRead, n));
    r.push(exits("pci-config-read-ecam", "pci-config", 23_000.0, rd(1)));
    r.push(exits("pci-config-read-ecam-ro", "pci-config", 2.0, None));
    r.push(exits("pci-scan-ecam", "pci-config", 5_900_000.0, rd(256)));
    r.push(exits("pci-scan-ecam-ro", "pci-config", 600.0, None));
    r.finish();
    r
}

/// Seeds 002, 003 and 004 on arm64: their arm64 rows measured, in every
/// format, under the arm64 caption and notes; the x86-only rows say why
/// they are not measured here.
#[test]
fn the_pci_and_doorbell_views_show_their_arm64_rows() {
    let r = arm64_report();
    let csv = render(&r, Format::Csv, view("pci-testdev"));
    for row in [
        "mmio-no-eventfd:pci-mem",
        "mmio-pv-eventfd:pci-mem",
        "portio-no-eventfd:pci-io",
        "portio-datamatch-eventfd:pci-io",
        "portio-pv-eventfd:pci-io",
    ] {
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{row},")))
            .unwrap_or_else(|| panic!("no {row} row in:\n{csv}"));
        assert!(!line.contains("not measured"), "{line}");
    }
    let md = render(&r, Format::Markdown, view("pci-testdev"));
    assert!(md.contains("PCI I/O window"), "{md}");
    assert!(
        !md.contains("PIO datamatch ioeventfd"),
        "x86's PV note: {md}"
    );

    let csv = render(&r, Format::Csv, view("pci-config"));
    for row in [
        "pci-config-read-ecam",
        "pci-config-read-ecam-ro",
        "pci-scan-ecam",
        "pci-scan-ecam-ro",
    ] {
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{row},")))
            .unwrap_or_else(|| panic!("no {row} row in:\n{csv}"));
        assert!(!line.contains("not measured"), "{line}");
    }
    let table = render(&r, Format::Table, view("pci-config"));
    assert!(table.contains("arm64 has no CF8/CFC"), "{table}");
    assert!(table.contains("ECAM only"), "{table}");

    let table = render(&r, Format::Table, view("doorbell"));
    assert!(table.contains("arm64 has no port I/O"), "{table}");
    assert!(table.contains("PV page"), "{table}");
    let csv = render(&r, Format::Csv, view("doorbell"));
    for row in ["user-space MMIO", "ioeventfd MMIO", "paravirtual"] {
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{row},")))
            .unwrap_or_else(|| panic!("no {row} row in:\n{csv}"));
        assert!(!line.contains("not measured"), "{line}");
    }
    for format in [
        Format::Table,
        Format::Json,
        Format::Markdown,
        Format::Csv,
        Format::Kut,
        Format::Html,
        Format::Bmf,
        Format::Tap,
    ] {
        for (v, row) in [
            ("pci-testdev", "portio-pv-eventfd"),
            ("pci-config", "pci-config-read-ecam-ro"),
            ("doorbell", "doorbell-pv"),
        ] {
            let out = render(&r, format, view(v));
            assert!(out.contains(row), "{format:?} {v}: no {row}:\n{out}");
        }
    }
}

#[test]
fn the_seed_views_put_arm64_measurements_in_the_seeds_rows() {
    let r = arm64_report();
    let paper = render(&r, Format::Csv, view("paper"));
    // Trap, I/O Kernel and I/O User are measured by the arm64 scenarios.
    for (row, scenario) in [
        ("Hypercall", "hypercall"),
        ("Trap", "sysreg-trap"),
        ("I/O Kernel", "mmio-vgic-read"),
        ("I/O User", "mmio-user-read"),
        ("IPI", "ipi"),
        ("EOI", "eoi"),
    ] {
        let line = paper
            .lines()
            .find(|l| l.starts_with(&format!("{row},")))
            .unwrap_or_else(|| panic!("no {row} row in:\n{paper}"));
        assert!(line.contains(&format!(",{scenario},")), "{line}");
        assert!(!line.contains("not measured"), "{line}");
    }
    let vmexit = render(&r, Format::Csv, view("vmexit-arm"));
    let line = vmexit
        .lines()
        .find(|l| l.starts_with("mmio_read_vgic,"))
        .unwrap();
    assert!(line.contains(",mmio-vgic-read,"), "{line}");
    // The arm64 notes, not the x86 mapping.
    let md = render(&r, Format::Markdown, view("vmexit-arm"));
    assert!(md.contains("Mapping on arm64"), "{md}");
    assert!(!md.contains("pio-kernel-pic"), "{md}");
    let table = render(&r, Format::Table, view("paper"));
    assert!(
        table.contains("sysreg-trap") && table.contains("HCR_EL2.TID3"),
        "{table}"
    );
}

#[test]
fn every_format_renders_the_arm64_rows_and_says_what_the_clock_and_host_are() {
    let r = arm64_report();
    for format in [
        Format::Table,
        Format::Json,
        Format::Markdown,
        Format::Csv,
        Format::Kut,
        Format::Html,
        Format::Bmf,
        Format::Tap,
    ] {
        for v in [View::All, view("paper"), view("vmexit-arm")] {
            let out = render(&r, format, v);
            assert!(
                out.contains("mmio-vgic-read") || out.contains("io-kernel"),
                "{format:?} {v:?} has no arm64 row"
            );
        }
    }
    let table = render(&r, Format::Table, View::All);
    assert!(table.contains("caveat: emulated host"), "{table}");
    assert!(table.contains("CNTVCT_EL0 62.500 MHz"), "{table}");
    let md = render(&r, Format::Markdown, View::All);
    assert!(md.contains("**Emulated host:**"), "{md}");
    let html = render(&r, Format::Html, View::All);
    assert!(html.contains("Emulated host."));
    let paper = render(&r, Format::Table, view("paper"));
    assert!(paper.contains("this host is emulated"), "{paper}");
    // The user-exit premium is taken on MMIO where there is no PIO.
    let d = r
        .derived
        .iter()
        .find(|d| d.name == "user-exit-premium")
        .expect("premium");
    assert_eq!(d.formula, "mmio-user-write − mmio-kernel-wildcard");
    assert!(r
        .derived
        .iter()
        .any(|d| d.name == "handling-per-user-exit" && d.value == 190.0));
}

#[test]
fn an_x86_report_keeps_its_x86_rows_and_caveat() {
    let r = common::sample_report();
    let paper = render(&r, Format::Csv, view("paper"));
    assert!(paper
        .lines()
        .any(|l| l.starts_with("Trap,") && l.contains(",cpuid,")));
    let table = render(&r, Format::Table, View::All);
    assert!(table.contains("caveat: nested virtualization"));
    assert!(table.contains("TSC 3.000 GHz"));
    let json = render(&r, Format::Json, View::All);
    for absent in ["\"emulated\"", "\"counter\"", "\"arch\""] {
        assert!(!json.contains(absent), "{absent} in an x86 report's JSON");
    }
}
