//! trapline's own footprint, measured the way a user meets it: a fresh
//! `trapline run` process booting the hello payload. Each child reports
//! (with TRAPLINE_FOOTPRINT=1) the process CPU time from exec to its first
//! KVM_RUN and its resident memory outside guest RAM.

use std::path::Path;
use std::process::Command;

/// One child's numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Footprint {
    /// CPU time (all threads) from exec to vCPU 0's first KVM_RUN, in ms.
    pub cpu_ms_to_first_run: f64,
    /// Resident memory outside guest RAM after the run, in MiB.
    pub rss_beyond_guest_mib: f64,
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
    })
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
    }
}
