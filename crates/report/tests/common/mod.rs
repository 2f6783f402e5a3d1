//! A sample report shared by the integration tests.
#![allow(dead_code)]

use trapline_report::{HostInfo, Report, RunConfig, Sample, ScenarioResult, ToolInfo};

/// Five samples around `per_iter` cycles per iteration (±2%).
pub fn samples(per_iter: f64, exits: &[(&str, u64)]) -> Vec<Sample> {
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
    };
    let mut r = Report::new(ToolInfo::new("trapline", "0.1.0"), host, config);
    r.started_at = "2025-01-01T00:00:00Z".into();
    r.wall_seconds = 12.5;
    r.push(ok("noop", "baseline", 100.0));
    r.push(ok("hypercall", "trap", 1400.0));
    r.push(ok("cpuid", "trap", 1100.0).with_check("cpuid leaf 0 vendor matches"));
    r.push(
        ScenarioResult::new("pio-user-out", "pio", "KVM_EXIT_IO → trapline bus")
            .with_samples(samples(9000.0, &[("pio-write", 1)]))
            .with_extra("port", 0x510),
    );
    r.push(
        ScenarioResult::new("pio-user-in", "pio", "KVM_EXIT_IO → trapline bus")
            .with_samples(samples(9100.0, &[("pio-read", 1)]))
            .with_check("read 0x7ab1e5ad x N"),
    );
    r.push(ok("pio-kernel-wildcard", "pio", 3000.0).with_check("eventfd count = N"));
    r.push(ok("pio-kernel-pic", "pio", 3500.0));
    r.push(
        ScenarioResult::new("vmm-floor-pio", "vmm", "run-loop floor handler")
            .with_samples(samples(7000.0, &[("floor", 1)])),
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
