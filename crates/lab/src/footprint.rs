//! trapline's own footprint, measured the way a user meets it: a fresh
//! `trapline run` process booting the hello payload. Each child reports
//! (with TRAPLINE_FOOTPRINT=1) the process CPU time from exec to its first
//! KVM_RUN and its resident memory outside guest RAM, and that CPU time
//! split at start-up's marks (see trapline_report::derive::startup).

use std::path::Path;
use std::process::Command;

/// One child's numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    /// CPU time (all threads) from exec to vCPU 0's first KVM_RUN, in ms.
    pub cpu_ms_to_first_run: f64,
    /// Resident memory outside guest RAM after the run, in MiB.
    pub rss_beyond_guest_mib: f64,
    /// Start-up's phases in the order the child printed them (none from a
    /// binary older than the marks).
    pub phases: Vec<PhaseSpent>,
}

/// What one phase of start-up cost: from the previous mark to `mark`.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseSpent {
    /// The mark that ends it, as printed (`until="…"`).
    pub mark: String,
    /// Process CPU time in it, µs.
    pub cpu_us: f64,
    /// Minor page faults in it.
    pub faults: u64,
}

/// Parse one `trapline-footprint-phase cpu_ns=… faults=… until="…"` line.
fn parse_phase(line: &str) -> Option<PhaseSpent> {
    let rest = line.strip_prefix("trapline-footprint-phase ")?;
    let (fields, mark) = rest.split_once(" until=")?;
    let mark = mark.trim().strip_prefix('"')?.strip_suffix('"')?;
    let field = |k: &str| -> Option<u64> {
        fields
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse::<u64>().ok())
    };
    Some(PhaseSpent {
        mark: mark.to_string(),
        cpu_us: field("cpu_ns")? as f64 / 1e3,
        faults: field("faults")?,
    })
}

/// Parse a child's `trapline-footprint …` stderr line.
pub fn parse(stderr: &str) -> Option<Footprint> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("trapline-footprint "))?;
    let field = |k: &str| -> Option<f64> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse::<f64>().ok())
    };
    Some(Footprint {
        cpu_ms_to_first_run: field("cpu_ns_to_first_kvm_run")? / 1e6,
        rss_beyond_guest_mib: field("rss_beyond_guest_bytes")? / (1024.0 * 1024.0),
        phases: stderr.lines().filter_map(parse_phase).collect(),
    })
}

/// Each mark's median CPU time (µs) and median page faults over `runs`,
/// in the order the marks first appear. A mark missing from some runs is
/// taken over the runs that have it.
pub fn phase_medians(runs: &[Footprint]) -> Vec<(String, f64, f64)> {
    let mut marks: Vec<&str> = Vec::new();
    for p in runs.iter().flat_map(|f| &f.phases) {
        if !marks.contains(&p.mark.as_str()) {
            marks.push(&p.mark);
        }
    }
    marks
        .into_iter()
        .map(|m| {
            let of = |get: fn(&PhaseSpent) -> f64| {
                median(
                    runs.iter()
                        .flat_map(|f| f.phases.iter().filter(|p| p.mark == m))
                        .map(get)
                        .collect(),
                )
            };
            (m.to_string(), of(|p| p.cpu_us), of(|p| p.faults as f64))
        })
        .collect()
}

/// The median (the upper one of an even count); NaN for none.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Run `exe run --kernel builtin:hello` `runs` times and collect each
/// child's footprint.
pub fn measure(exe: &Path, runs: u32) -> Result<Vec<Footprint>, String> {
    let mut out = Vec::new();
    for _ in 0..runs {
        let o = Command::new(exe)
            .args([
                "run",
                "--kernel",
                "builtin:hello",
                "--serial",
                "none",
                "--timeout",
                "30",
            ])
            .env("TRAPLINE_FOOTPRINT", "1")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        let stderr = String::from_utf8_lossy(&o.stderr);
        out.push(
            parse(&stderr)
                .ok_or_else(|| format!("no footprint line from {}: {stderr}", exe.display()))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_child_line() {
        let f = parse("x\ntrapline-footprint cpu_ns_to_first_kvm_run=3500000 rss_beyond_guest_bytes=4194304 wall_ns=1\n").unwrap();
        assert_eq!(f.cpu_ms_to_first_run, 3.5);
        assert_eq!(f.rss_beyond_guest_mib, 4.0);
        assert!(parse("nothing").is_none());
        assert!(parse("trapline-footprint cpu_ns_to_first_kvm_run=x").is_none());
        assert!(f.phases.is_empty());
    }

    /// Lines as `trapline run` prints them with TRAPLINE_FOOTPRINT=1.
    fn child(main_ns: u64, vm_faults: u64) -> String {
        format!(
            "trapline-footprint cpu_ns_to_first_kvm_run=1500000 rss_beyond_guest_bytes=1 wall_ns=1\n\
             trapline-footprint-phase cpu_ns={main_ns} faults=37 until=\"main\"\n\
             trapline-footprint-phase cpu_ns=420000 faults={vm_faults} until=\"vm created\"\n\
             trapline-footprint-phase cpu_ns=100000 faults=5 until=\"first KVM_RUN\"\n"
        )
    }

    #[test]
    fn parses_the_phase_lines_in_order() {
        let f = parse(&child(450_000, 1)).unwrap();
        let marks: Vec<&str> = f.phases.iter().map(|p| p.mark.as_str()).collect();
        assert_eq!(marks, ["main", "vm created", "first KVM_RUN"]);
        assert_eq!(f.phases[0].cpu_us, 450.0);
        assert_eq!(f.phases[0].faults, 37);
        assert_eq!(f.phases[2].faults, 5);
        // Broken phase lines are skipped, not fatal.
        assert!(parse_phase("trapline-footprint-phase cpu_ns=1 until=\"x\"").is_none());
        assert!(parse_phase("trapline-footprint-phase cpu_ns=1 faults=2 until=x").is_none());
    }

    #[test]
    fn phase_medians_per_mark() {
        let runs: Vec<Footprint> = [(400_000, 1), (500_000, 3), (450_000, 2)]
            .iter()
            .map(|&(m, v)| parse(&child(m, v)).unwrap())
            .collect();
        let med = phase_medians(&runs);
        assert_eq!(med[0], ("main".to_string(), 450.0, 37.0));
        assert_eq!(med[1], ("vm created".to_string(), 420.0, 2.0));
        assert_eq!(med.len(), 3);
        assert!(phase_medians(&[]).is_empty());
        assert!(median(Vec::new()).is_nan());
    }
}
