//! A sample report shared by the integration tests.
#![allow(dead_code)]

use trapline_bus::ExitKind;
use trapline_report::{
    Handling, HostInfo, Report, RunConfig, Sample, ScenarioResult, ToolInfo, View,
};

/// The view called `name` (a seed table's view is named by its file).
pub fn view(name: &str) -> View {
    name.parse()
        .unwrap_or_else(|e| panic!("view {name:?}: {e}"))
}

/// Five samples around `per_iter` cycles per iteration (±2%).
pub fn samples(per_iter: f64, exits: &[(ExitKind, u64)]) -> Vec<Sample> {
    [1.00, 1.01, 0.99, 1.02, 0.98]
        .iter()
        .map(|f| {
            let iters = 1000u64;
            let mut s = Sample::new(iters, (per_iter * f * iters as f64).round() as u64);
            for (k, per) in exits {
                s = s.with_exits(*k, per * iters);
            }
            s
        })
        .collect()
}

fn ok(name: &str, group: &str, per_iter: f64) -> ScenarioResult {
    ScenarioResult::new(name, group, format!("{name} path")).with_samples(samples(per_iter, &[]))
}

/// A report with ok, unsupported and failed rows on two VMMs.
pub fn sample_report() -> Report {
    let host = HostInfo {
        cpu_model: "Intel(R) Xeon(R) Test CPU @ 3.00GHz".into(),
        cpu_vendor: "GenuineIntel".into(),
        kernel: "6.8.0-test".into(),
        kvm_api_version: 12,
        nproc: 2,
        tsc_khz: 3_000_000,
        tsc_khz_crosscheck: Some(2_999_870),
        load_avg: [0.25, 0.5, 0.75],
        kvm_caps: [
            ("KVM_CAP_IOEVENTFD".to_string(), 1),
            ("KVM_CAP_COALESCED_MMIO".to_string(), 2),
        ]
        .into_iter()
        .collect(),
        nested_note: Some("hypervisor bit set; running under <L0> \"KVM\"".into()),
        emulated: false,
        counter: None,
        arch: None,
    };
    let config = RunConfig {
        repeat: 5,
        goal_cycles: 10_000_000,
        min_iters: 100,
        max_iters: 1_000_000,
        warmup: 1,
        quick: false,
        only: None,
        peer: Some("qemu".into()),
        peer_cpu: Some("host".into()),
        peer_cpu_note: None,
    };
    let mut r = Report::new(ToolInfo::new("trapline", "0.1.0"), host, config);
    r.started_at = "2025-01-01T00:00:00Z".into();
    r.wall_seconds = 12.5;
    r.push(ok("noop", "baseline", 100.0));
    r.push(ok("hypercall", "trap", 1400.0));
    r.push(ok("cpuid", "trap", 1100.0).with_check("cpuid leaf 0 vendor matches"));
    r.push(
        ScenarioResult::new("pio-user-out", "pio", "KVM_EXIT_IO → trapline bus")
            .with_samples(
                samples(9000.0, &[(ExitKind::PioWrite, 1)])
                    .into_iter()
                    .map(|mut s| {
                        // trapline's own 450 cycles per exit (the profile),
                        // and KVM's view: one exit per iteration.
                        s.handling = Some(Handling {
                            exits: s.iterations,
                            cycles: 450 * s.iterations,
                        });
                        s.kvm_exits.insert("exits".into(), s.iterations);
                        s.kvm_exits.insert("io_exits".into(), s.iterations);
                        s
                    })
                    .collect(),
            )
            .with_extra("port", 0x510),
    );
    r.push(
        ScenarioResult::new("pio-user-in", "pio", "KVM_EXIT_IO → trapline bus")
            .with_samples(samples(9100.0, &[(ExitKind::PioRead, 1)]))
            .with_check("read 0x7ab1e5ad x N"),
    );
    r.push(ok("pio-kernel-wildcard", "pio", 3000.0).with_check("eventfd count = N"));
    r.push(ok("pio-kernel-pic", "pio", 3500.0));
    r.push(
        ScenarioResult::new("vmm-floor-pio", "vmm", "run-loop floor handler")
            .with_samples(samples(7000.0, &[(ExitKind::FastPort, 1)])),
    );
    r.push(
        ScenarioResult::new("mmio-kernel-datamatch", "mmio", "ioeventfd, datamatch")
            .unsupported("KVM_CAP_IOEVENTFD missing, \"datamatch\" <needs> it</script>"),
    );
    r.push(
        ScenarioResult::new("coalesced-mmio", "coalesced", "coalesced ring")
            .failed("guest reported 3 != 4"),
    );
    r.push(ok("noop", "baseline", 120.0).with_vmm("qemu"));
    r.push(ok("pio-user-out", "pio", 15000.0).with_vmm("qemu"));
    r.finish();
    r
}

/// [`sample_report`] plus rows for every view: the seed views' scenarios
/// (PCI, doorbells, interrupts, in-guest-timed ones among them), a raw-kvm
/// peer and trapline's footprint. Representative of a full `trapline bench`.
pub fn full_report() -> Report {
    let mut r = sample_report();
    for (name, group, cyc) in [
        ("mmio-no-eventfd:pci-mem", "pci", 9000.0),
        ("mmio-wildcard-eventfd:pci-mem", "pci", 3000.0),
        ("mmio-datamatch-eventfd:pci-mem", "pci", 3000.0),
        ("mmio-pv-eventfd:pci-mem", "pci", 1500.0),
        ("portio-no-eventfd:pci-io", "pci", 6000.0),
        ("portio-wildcard-eventfd:pci-io", "pci", 1500.0),
        ("portio-pv-eventfd:pci-io", "pci", 1500.0),
        ("pci-config-read-cf8", "pci-config", 60000.0),
        ("pci-config-read-ecam", "pci-config", 30000.0),
        ("pci-config-read-ecam-ro", "pci-config", 30.0),
        ("pci-scan-cf8", "pci-config", 256.0 * 60000.0),
        ("pci-scan-ecam", "pci-config", 256.0 * 30000.0),
        ("ram-read", "memslot", 15.0),
        ("doorbell-user-mmio", "doorbell", 9000.0),
        ("doorbell-ioeventfd-mmio", "doorbell", 6000.0),
        ("doorbell-ioeventfd-pio", "doorbell", 3000.0),
        ("mmio-user-read", "mmio", 10000.0),
        ("ipi", "irq", 14000.0),
        ("eoi", "irq", 700.0),
        ("ipi-x2apic", "irq", 8000.0),
        ("irqfd", "irq", 20000.0),
    ] {
        r.push(ok(name, group, cyc));
    }
    r.push(ScenarioResult::new("doorbell-pv", "doorbell", "pv").unsupported("no PV port"));
    r.push(ok("mmio-no-eventfd:pci-mem", "pci", 12000.0).with_vmm("qemu"));
    r.push(ok("mmio-wildcard-eventfd:pci-mem", "pci", 4000.0).with_vmm("qemu"));
    for (name, cyc) in [
        ("noop", 90.0),
        ("pio-user-out", 5000.0),
        ("pio-kernel-wildcard", 3000.0),
    ] {
        r.push(ok(name, "floor", cyc).with_vmm("raw-kvm"));
    }
    r.finish();
    for (name, value, unit) in [
        ("vmm-cpu-to-first-kvm-run", 2.4, "ms"),
        ("vmm-rss-beyond-guest", 4.6, "MiB"),
    ] {
        r.derived.push(trapline_report::Derived {
            name: name.into(),
            value,
            unit: unit.into(),
            formula: "median over 5 `trapline run` processes".into(),
            note: None,
            range: None,
            goal: None,
        });
    }
    // As the lab does: the footprint comes after `finish`.
    r.judge_goals();
    r
}
