//! The host context a report records.

use std::time::{Duration, Instant};

use trapline_kvm::HostKvm;
use trapline_report::HostInfo;

use crate::arch;
use trapline_peers::host::{cpu_model, cpuinfo_field, load_avg};

/// Measure the host's cycle counter (the TSC; on arm64 the generic
/// timer's virtual counter) against the monotonic clock over `span`.
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

/// Gather what is known about this host.
pub fn collect(kvm: &HostKvm, tsc_khz: u64) -> HostInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo_field(&cpuinfo, "flags");
    let la = load_avg();
    let measured = measure_tsc_khz(Duration::from_millis(50));
    HostInfo {
        cpu_model: cpu_model(&cpuinfo),
        cpu_vendor: cpu_vendor(&cpuinfo),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        kvm_api_version: kvm.api_version().into(),
        nproc: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        // KVM's figure when a trapline VM ran; else the host measurement
        // (only raw-KVM scenarios selected), so ns are still reported.
        tsc_khz: if tsc_khz != 0 { tsc_khz } else { measured },
        tsc_khz_crosscheck: Some(measured),
        load_avg: la,
        kvm_caps: kvm.capabilities(),
        nested_note: host_caveat(&cpuinfo, &flags),
        emulated: emulated_cpu(&cpuinfo),
        counter: arch::COUNTER.map(str::to_string),
        arch: arch::REPORT_ARCH.map(str::to_string),
    }
}

/// `CPU implementer` of /proc/cpuinfo on arm64 (MIDR_EL1's top byte) that
/// the Arm ARM reserves for software use: QEMU's `max` CPU under TCG
/// reports it, so the host's CPU (and KVM with it) is emulated.
const MIDR_IMPLEMENTER_SOFTWARE: &str = "0x00";

/// Whether /proc/cpuinfo describes an emulated CPU (arm64: MIDR
/// implementer "software").
fn emulated_cpu(cpuinfo: &str) -> bool {
    cpuinfo_field(cpuinfo, "CPU implementer") == MIDR_IMPLEMENTER_SOFTWARE
}

/// The caveat a report puts beside its numbers when the host is not bare
/// metal: a guest of another hypervisor on x86 (the CPUID hypervisor bit),
/// an emulated CPU on arm64 (MIDR implementer "software").
fn host_caveat(cpuinfo: &str, flags: &str) -> Option<String> {
    if flags.split_whitespace().any(|f| f == "hypervisor") {
        return Some(
            "this host is itself a virtual machine (CPUID hypervisor bit): every exit also goes through the outer \
             hypervisor and guest code may be emulated, so absolute cycles are far above bare metal; compare \
             mechanisms as ratios within one run"
                .to_string(),
        );
    }
    emulated_cpu(cpuinfo).then(|| {
        "this host's CPU is emulated (MIDR implementer 0x00, reserved for software: QEMU's `max` CPU under TCG): \
         KVM and its guests run instruction by instruction in an emulator, so the times say nothing about arm64 \
         hardware; only behaviour holds (the checks, exits by kind, which paths stay in the kernel). Take \
         numbers on a real arm64 host"
            .to_string()
    })
}

/// The CPU's vendor: `vendor_id` (x86), else arm64's implementer by name.
fn cpu_vendor(cpuinfo: &str) -> String {
    let vendor = cpuinfo_field(cpuinfo, "vendor_id");
    if !vendor.is_empty() {
        return vendor;
    }
    match cpuinfo_field(cpuinfo, "CPU implementer").as_str() {
        "" => String::new(),
        MIDR_IMPLEMENTER_SOFTWARE => "software (emulated)".into(),
        "0x41" => "Arm".into(),
        "0x61" => "Apple".into(),
        "0xc0" => "Ampere".into(),
        "0x48" => "HiSilicon".into(),
        "0x51" => "Qualcomm".into(),
        "0x4e" => "NVIDIA".into(),
        other => format!("implementer {other}"),
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

    /// The caveats, from each architecture's /proc/cpuinfo (tested on both).
    #[test]
    fn an_emulated_arm64_cpu_and_a_nested_x86_host_get_their_caveats() {
        let qemu_max = "processor\t: 0\nBogoMIPS\t: 125.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x00\n\
                        CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0x051\nCPU revision\t: 0\n";
        let note = host_caveat(qemu_max, "").unwrap();
        assert!(note.contains("emulated"), "{note}");
        assert!(emulated_cpu(qemu_max));
        assert_eq!(cpu_vendor(qemu_max), "software (emulated)");
        assert_eq!(cpu_model(qemu_max), "arm64 CPU implementer 0x00 part 0x051");
        let neoverse = qemu_max.replace("0x00", "0x41").replace("0x051", "0xd0c");
        assert_eq!(host_caveat(&neoverse, ""), None);
        assert_eq!(cpu_vendor(&neoverse), "Arm");
        let x86 = "vendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu hypervisor\n";
        assert!(host_caveat(x86, &cpuinfo_field(x86, "flags"))
            .unwrap()
            .contains("virtual machine"));
        assert_eq!(host_caveat(x86, "fpu"), None);
        assert_eq!(cpu_model(x86), "AMD EPYC");
    }

    #[test]
    fn tsc_measurement_is_plausible() {
        let khz = measure_tsc_khz(Duration::from_millis(20));
        // A TSC runs at GHz; arm64's generic timer at 1 MHz and more
        // (QEMU's at 62.5 MHz, hardware's at 25 MHz to 1 GHz).
        let least = if cfg!(target_arch = "x86_64") {
            100_000
        } else {
            1_000
        };
        assert!(khz > least, "{khz}");
    }
}
