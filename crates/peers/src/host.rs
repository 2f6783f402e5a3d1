//! What the peers and experiments read of the host: /proc/cpuinfo's
//! fields, the CPU's name and the load average (the lab's report records
//! them too, with what it asks KVM).

/// The value of `key` in /proc/cpuinfo's text (its first CPU's), or empty.
pub fn cpuinfo_field(cpuinfo: &str, key: &str) -> String {
    cpuinfo
        .lines()
        .find(|l| l.split(':').next().map(str::trim) == Some(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default()
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

/// This host CPU's name, as the lab's report records it (empty if unknown).
pub fn this_cpu_model() -> String {
    cpu_model(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
}

/// The CPU's name: `model name` (x86), else arm64's implementer and part.
pub fn cpu_model(cpuinfo: &str) -> String {
    let model = cpuinfo_field(cpuinfo, "model name");
    if !model.is_empty() {
        return model;
    }
    let (imp, part) = (
        cpuinfo_field(cpuinfo, "CPU implementer"),
        cpuinfo_field(cpuinfo, "CPU part"),
    );
    if imp.is_empty() {
        return String::new();
    }
    format!("arm64 CPU implementer {imp} part {part}")
}
