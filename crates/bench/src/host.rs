//! The host context a report records.

use std::time::{Duration, Instant};

use trapline_kvm::HostKvm;
use trapline_report::HostInfo;

fn cpuinfo_field(cpuinfo: &str, key: &str) -> String {
    cpuinfo
        .lines()
        .find(|l| l.split(':').next().map(str::trim) == Some(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default()
}

/// Measure the host TSC against the monotonic clock over `span`.
pub fn measure_tsc_khz(span: Duration) -> u64 {
    let t0 = trapline_bus::cycles();
    let start = Instant::now();
    while start.elapsed() < span {
        std::hint::spin_loop();
    }
    let t1 = trapline_bus::cycles();
    let ns = start.elapsed().as_nanos().max(1) as u64;
    t1.wrapping_sub(t0).saturating_mul(1_000_000) / ns
}

/// The host's 1, 5 and 15 minute load averages (zeros if unreadable).
pub fn load_avg() -> [f64; 3] {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut la = [0.0; 3];
    for (slot, v) in la.iter_mut().zip(load.split_whitespace()) {
        *slot = v.parse().unwrap_or(0.0);
    }
    la
}

/// The host CPU's model name (empty if unknown).
pub fn cpu_model() -> String {
    cpuinfo_field(
        &std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default(),
        "model name",
    )
}

/// Gather what is known about this host.
pub fn collect(kvm: &HostKvm, tsc_khz: u64) -> HostInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo_field(&cpuinfo, "flags");
    let la = load_avg();
    let measured = measure_tsc_khz(Duration::from_millis(50));
    HostInfo {
        cpu_model: cpuinfo_field(&cpuinfo, "model name"),
        cpu_vendor: cpuinfo_field(&cpuinfo, "vendor_id"),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
        kvm_api_version: kvm.api_version().into(),
        nproc: std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1),
        // KVM's figure when a trapline VM ran; else the host measurement
        // (only raw-KVM scenarios selected), so ns are still reported.
        tsc_khz: if tsc_khz != 0 { tsc_khz } else { measured },
        tsc_khz_crosscheck: Some(measured),
        load_avg: la,
        kvm_caps: kvm.capabilities(),
        nested_note: flags.split_whitespace().any(|f| f == "hypervisor").then(|| {
            "this host is itself a virtual machine (CPUID hypervisor bit): every exit also goes through the outer \
             hypervisor and guest code may be emulated, so absolute cycles are far above bare metal; compare \
             mechanisms as ratios within one run"
                .to_string()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_fields_are_found() {
        let c = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu hypervisor\n";
        assert_eq!(cpuinfo_field(c, "vendor_id"), "GenuineIntel");
        assert_eq!(cpuinfo_field(c, "model name"), "Intel(R) Xeon(R)");
        assert_eq!(cpuinfo_field(c, "nope"), "");
    }

    #[test]
    fn tsc_measurement_is_plausible() {
        let khz = measure_tsc_khz(Duration::from_millis(20));
        assert!(khz > 100_000, "{khz}");
    }
}
