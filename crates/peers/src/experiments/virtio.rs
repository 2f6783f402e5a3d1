//! `trapline virtio-paths`: virtio-blk I/O on each notification ×
//! interrupt path, timed from inside the guest by `builtin:vblk` (queue
//! depth 1: one request in flight, so IOPS = 1 / latency), with exits per
//! I/O from both sides (trapline's exit profile and KVM's own counters).
//!
//! Each measurement is a fresh `trapline run` child: once with `bench=0`
//! (setup, one read, one write, one flush) and once with `bench=N` (N
//! requests of each of read/write × 4 KiB/64 KiB more); the difference of
//! their exit counts divided by 4N is the cost of one I/O.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The four paths, fast ones last.
pub const PATHS: [(&str, &str); 4] = [
    ("exit", "line"),
    ("exit", "irqfd"),
    ("ioeventfd", "line"),
    ("ioeventfd", "irqfd"),
];

/// One I/O kind's guest-side timing.
#[derive(Clone, Debug, PartialEq)]
pub struct IoTiming {
    /// `read` or `write`.
    pub op: String,
    /// Request size in bytes.
    pub size: u32,
    /// Mean guest TSC cycles per request.
    pub cycles: f64,
    /// Completion interrupts the guest took per request.
    pub irqs_per_io: f64,
}

/// Host-side counts of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExitCounts {
    /// Exits that reached trapline (its profile).
    pub trapline: f64,
    /// All exits KVM counted (its stats fd).
    pub kvm: f64,
    /// KVM's MMIO exits.
    pub kvm_mmio: f64,
    /// Interrupts KVM injected.
    pub kvm_irq_injections: f64,
}

/// One path's result.
#[derive(Clone, Debug, PartialEq)]
pub struct PathResult {
    /// `--virtio-notify`.
    pub notify: &'static str,
    /// `--virtio-irq`.
    pub irq: &'static str,
    /// Median timings per I/O kind.
    pub timings: Vec<IoTiming>,
    /// Exits per I/O (bench run minus baseline, over the bench I/Os).
    pub per_io: ExitCounts,
    /// Guest TSC in kHz.
    pub tsc_khz: f64,
}

/// Parse the guest's `vblk: bench …` lines.
pub fn parse_guest(stdout: &str) -> Vec<IoTiming> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("vblk: bench "))
        .filter_map(|l| {
            let f = |k: &str| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(k)?.strip_prefix('='))
            };
            let n: f64 = f("n")?.parse().ok()?;
            Some(IoTiming {
                op: f("op")?.to_string(),
                size: f("size")?.parse().ok()?,
                cycles: f("cycles")?.parse().ok()?,
                irqs_per_io: f("irqs")?.parse::<f64>().ok()? / n.max(1.0),
            })
        })
        .collect()
}

/// Parse a `--stat-format json` report: (counts, tsc_khz).
pub fn parse_stat(json: &str) -> Option<(ExitCounts, f64)> {
    stat_counts(&serde_json::from_str(json).ok()?)
}

/// [`parse_stat`] of a report already parsed (a caller that reads more of it).
pub fn stat_counts(v: &serde_json::Value) -> Option<(ExitCounts, f64)> {
    let mut c = ExitCounts::default();
    for cpu in v.get("vcpus")?.as_array()? {
        let n = |p: &[&str]| {
            p.iter()
                .try_fold(cpu, |v, k| v.get(k))
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(0.0)
        };
        c.trapline += n(&["exits"]);
        c.kvm += n(&["kvm", "exits"]);
        // x86's counter of MMIO exits to user space; arm64's is mmio_exit_user.
        c.kvm_mmio += n(&["kvm", "mmio_exits"]) + n(&["kvm", "mmio_exit_user"]);
        c.kvm_irq_injections += n(&["kvm", "irq_injections"]);
    }
    // arm64's KVM counts no injections: not a count (NaN, "–" in tables).
    let counted = |key: &str| {
        v["vcpus"]
            .as_array()
            .is_some_and(|a| a.iter().any(|c| c["kvm"].get(key).is_some()))
    };
    if !counted("irq_injections") {
        c.kvm_irq_injections = f64::NAN;
    }
    Some((c, v.get("tsc_khz")?.as_f64()?))
}

struct Child {
    timings: Vec<IoTiming>,
    counts: ExitCounts,
    tsc_khz: f64,
}

fn run_child(
    exe: &Path,
    disk: &Path,
    stat: &Path,
    path: (&str, &str),
    reps: u64,
    timeout: Duration,
    seccomp: bool,
) -> Result<Child, String> {
    let mut cmd = Command::new(exe);
    cmd.args(["run", "--kernel", "builtin:vblk", "--disk"])
        .arg(disk)
        .args(["--virtio-notify", path.0, "--virtio-irq", path.1])
        .args(["--append", &format!("bench={reps}")])
        .args(["--timeout", &format!("{}", timeout.as_secs_f64())])
        .arg(format!("--stat={}", stat.display()))
        .args(["--stat-format", "json"]);
    if !seccomp {
        cmd.arg("--no-seccomp");
    }
    let o = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let out = String::from_utf8_lossy(&o.stdout);
    if o.status.code() != Some(1) || !out.contains("vblk: OK") {
        return Err(format!(
            "builtin:vblk on --virtio-notify {} --virtio-irq {} failed ({}):\n{out}{}",
            path.0,
            path.1,
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let json = std::fs::read_to_string(stat).map_err(|e| format!("{}: {e}", stat.display()))?;
    let (counts, tsc_khz) = parse_stat(&json)
        .ok_or_else(|| format!("{}: not a trapline-stat report", stat.display()))?;
    Ok(Child {
        timings: parse_guest(&out),
        counts,
        tsc_khz,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// What to run.
pub struct VirtioOptions {
    /// The trapline binary.
    pub exe: PathBuf,
    /// Requests of each kind per run.
    pub reps: u64,
    /// Runs per path (medians are reported).
    pub repeat: u32,
    /// Longest one child may run.
    pub timeout: Duration,
    /// Seccomp filters on.
    pub seccomp: bool,
}

/// Measure every path.
pub fn measure(opts: &VirtioOptions) -> Result<Vec<PathResult>, String> {
    let dir = std::env::temp_dir().join(format!("trapline-lab-virtio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let disk = dir.join("disk.img");
    let stat = dir.join("stat.json");
    let result = (|| {
        let f = std::fs::File::create(&disk).map_err(|e| format!("{}: {e}", disk.display()))?;
        f.set_len(64 << 20)
            .map_err(|e| format!("{}: {e}", disk.display()))?;
        let mut results = Vec::new();
        // A stop signal ends the experiment between children (a Ctrl-C reaches
        // the running child too, which then fails): the paths measured
        // whole are kept, the one cut short is left out.
        let stopped = || trapline_machine::signals::received().is_some();
        'paths: for (i, path) in PATHS.iter().copied().enumerate() {
            eprintln!(
                "trapline virtio-paths: path {}/{}: --virtio-notify {} --virtio-irq {}",
                i + 1,
                PATHS.len(),
                path.0,
                path.1
            );
            let child = |reps| {
                run_child(
                    &opts.exe,
                    &disk,
                    &stat,
                    path,
                    reps,
                    opts.timeout,
                    opts.seccomp,
                )
            };
            let base = match child(0) {
                Ok(c) if !stopped() => c,
                Err(e) if !stopped() => return Err(e),
                _ => break 'paths,
            };
            let mut runs = Vec::new();
            for _ in 0..opts.repeat.max(1) {
                match child(opts.reps) {
                    Ok(c) if !stopped() => runs.push(c),
                    Err(e) if !stopped() => return Err(e),
                    _ => break 'paths,
                }
            }
            let ios = (4 * opts.reps) as f64;
            let per = |f: fn(&ExitCounts) -> f64| {
                median(
                    runs.iter()
                        .map(|r| (f(&r.counts) - f(&base.counts)) / ios)
                        .collect(),
                )
            };
            let timings = runs[0]
                .timings
                .iter()
                .enumerate()
                .map(|(i, t)| IoTiming {
                    op: t.op.clone(),
                    size: t.size,
                    cycles: median(
                        runs.iter()
                            .filter_map(|r| r.timings.get(i))
                            .map(|t| t.cycles)
                            .collect(),
                    ),
                    irqs_per_io: median(
                        runs.iter()
                            .filter_map(|r| r.timings.get(i))
                            .map(|t| t.irqs_per_io)
                            .collect(),
                    ),
                })
                .collect();
            results.push(PathResult {
                notify: path.0,
                irq: path.1,
                timings,
                per_io: ExitCounts {
                    trapline: per(|c| c.trapline),
                    kvm: per(|c| c.kvm),
                    kvm_mmio: per(|c| c.kvm_mmio),
                    kvm_irq_injections: per(|c| c.kvm_irq_injections),
                },
                tsc_khz: base.tsc_khz,
            });
        }
        Ok(results)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The view as text.
pub fn render(results: &[PathResult], opts: &VirtioOptions, qemu: &str) -> String {
    let mut s = format!(
        "virtio-blk on each path: builtin:vblk, queue depth 1 (IOPS = 1/latency), {} requests per kind, median of {} runs; exits per I/O = (run - baseline run) / I/Os\n\n",
        opts.reps, opts.repeat
    );
    s += &format!(
        "{:<22} {:<6} {:>6} {:>9} {:>12} {:>9}\n",
        "path", "op", "size", "IOPS", "latency µs", "irqs/IO"
    );
    for r in results {
        for t in &r.timings {
            let us = if r.tsc_khz > 0.0 {
                t.cycles / r.tsc_khz * 1e3
            } else {
                0.0
            };
            let iops = if us > 0.0 { 1e6 / us } else { 0.0 };
            s += &format!(
                "{:<22} {:<6} {:>5}K {:>9.0} {:>12.1} {:>9.2}\n",
                format!("{} + {}", r.notify, r.irq),
                t.op,
                t.size / 1024,
                iops,
                us,
                t.irqs_per_io
            );
        }
    }
    s += &format!(
        "\n{:<22} {:>16} {:>12} {:>16} {:>18}\n",
        "path", "trapline exits", "KVM exits", "KVM MMIO exits", "KVM injections"
    );
    for r in results {
        s += &format!(
            "{:<22} {:>16.2} {:>12.2} {:>16.2} {:>18.2}\n",
            format!("{} + {}", r.notify, r.irq),
            r.per_io.trapline,
            r.per_io.kvm,
            r.per_io.kvm_mmio,
            r.per_io.kvm_irq_injections
        );
    }
    s += &format!("\nQEMU microvm (virtio-blk-device, ioeventfd=on/off): {qemu}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_guest_lines() {
        let t =
            parse_guest("x\nvblk: bench op=read size=4096 n=100 cycles=5000 irqs=50\nvblk: OK\n");
        assert_eq!(
            t,
            vec![IoTiming {
                op: "read".into(),
                size: 4096,
                cycles: 5000.0,
                irqs_per_io: 0.5
            }]
        );
        assert!(parse_guest("vblk: bench op=read").is_empty());
    }

    #[test]
    fn parses_stat_json() {
        let j = r#"{"tsc_khz": 3000000, "vcpus": [{"exits": 10, "kvm": {"exits": 12, "mmio_exits": 4, "irq_injections": 2}}]}"#;
        let (c, khz) = parse_stat(j).unwrap();
        assert_eq!(khz, 3e6);
        assert_eq!(
            (c.trapline, c.kvm, c.kvm_mmio, c.kvm_irq_injections),
            (10.0, 12.0, 4.0, 2.0)
        );
        assert!(parse_stat("{}").is_none());
    }

    #[test]
    fn reads_arm64s_user_mmio_counter_and_no_injection_count() {
        let j = r#"{"tsc_khz": 62500, "vcpus": [{"exits": 10, "kvm": {"exits": 12, "mmio_exit_user": 4, "mmio_exit_kernel": 3}}]}"#;
        let (c, khz) = parse_stat(j).unwrap();
        assert_eq!((khz, c.kvm_mmio), (62500.0, 4.0));
        assert!(c.kvm_irq_injections.is_nan());
    }

    #[test]
    fn parses_linux_lines() {
        let r = parse_linux("x\nVBLK-BENCH op=write size=65536 ops=200 ns=1000000000 iops=200 lat_us=5000\nVBLK-BENCH op=read size=4096 ops=0 ns=1 iops=0 lat_us=0\n");
        assert_eq!(
            r,
            vec![LinuxBench {
                op: "write".into(),
                size: 65536,
                iops: 200.0,
                lat_us: 5000.0
            }]
        );
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(vec![]), 0.0);
    }
}

/// One `VBLK-BENCH` line of the Linux guest program.
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxBench {
    /// `read` or `write`.
    pub op: String,
    /// Request size in bytes.
    pub size: u32,
    /// Requests per second.
    pub iops: f64,
    /// Mean latency in µs.
    pub lat_us: f64,
}

/// Parse `VBLK-BENCH op=read size=4096 ops=N ns=T iops=I lat_us=L` lines
/// (IOPS and latency recomputed from ops and ns, which are exact).
pub fn parse_linux(stdout: &str) -> Vec<LinuxBench> {
    stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("VBLK-BENCH "))
        .filter_map(|l| {
            let f = |k: &str| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(k)?.strip_prefix('='))
            };
            let ops: f64 = f("ops")?.parse().ok()?;
            let ns: f64 = f("ns")?.parse().ok()?;
            if ops == 0.0 || ns == 0.0 {
                return None;
            }
            Some(LinuxBench {
                op: f("op")?.to_string(),
                size: f("size")?.parse().ok()?,
                iops: ops * 1e9 / ns,
                lat_us: ns / ops / 1e3,
            })
        })
        .collect()
}

/// QEMU's microvm booting `kernel` with the `vblktest` initramfs and
/// `virtio-blk-device` on `disk` (modern virtio-mmio; `ioeventfd` on or
/// off on the transport), `secs` seconds per I/O kind.
pub fn qemu_linux(
    qemu: &Path,
    kernel: &Path,
    disk: &Path,
    ioeventfd: bool,
    secs: u64,
    timeout: Duration,
) -> Result<Vec<LinuxBench>, String> {
    let dir = std::env::temp_dir().join(format!("trapline-lab-qemu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let initrd = dir.join("vblktest.cpio");
    std::fs::write(&initrd, crate::arch::experiments::vblk_initramfs())
        .map_err(|e| format!("{}: {e}", initrd.display()))?;
    let mut cmd = Command::new("timeout");
    cmd.arg(format!("{}", timeout.as_secs().max(1)))
        .arg(qemu)
        .args([
            "-M",
            "microvm",
            "-nodefaults",
            "-display",
            "none",
            "-serial",
            "stdio",
        ])
        // QEMU 7.2 aborts with -cpu host on some AMD hosts (see qemu.rs).
        .args([
            "-accel",
            "kvm",
            "-cpu",
            "qemu64,-cx16",
            "-m",
            "128",
            "-no-reboot",
        ])
        .arg("-kernel")
        .arg(kernel)
        .arg("-initrd")
        .arg(&initrd)
        .args([
            "-append",
            &format!("console=ttyS0 panic=-1 quiet vblk.bench={secs}"),
        ])
        .args(["-global", "virtio-mmio.force-legacy=false"])
        .args([
            "-global",
            &format!(
                "virtio-mmio.ioeventfd={}",
                if ioeventfd { "on" } else { "off" }
            ),
        ])
        .arg("-drive")
        .arg(format!(
            "id=vda,file={},format=raw,if=none,cache=none,aio=threads",
            disk.display()
        ))
        .args(["-device", "virtio-blk-device,drive=vda"]);
    let o = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", qemu.display()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = o?;
    let out = String::from_utf8_lossy(&o.stdout);
    let rows = parse_linux(&out);
    if rows.is_empty() {
        return Err(format!(
            "QEMU microvm printed no VBLK-BENCH lines ({}):\n{out}{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(rows)
}

/// trapline booting `kernel` with the `vblktest` initramfs on `disk`, on
/// one notify × irq path, `secs` seconds per I/O kind (Linux's own driver:
/// the same guest as [`qemu_linux`]).
pub fn trapline_linux(
    exe: &Path,
    kernel: &Path,
    disk: &Path,
    path: (&str, &str),
    secs: u64,
    timeout: Duration,
) -> Result<Vec<LinuxBench>, String> {
    let o = Command::new(exe)
        .args(["run", "--kernel"])
        .arg(kernel)
        .args(["--initrd", "builtin:vblktest", "--disk"])
        .arg(disk)
        .args(["--virtio-notify", path.0, "--virtio-irq", path.1])
        .args(["--timeout", &format!("{}", timeout.as_secs().max(1))])
        .args([
            "--append",
            &format!("console=ttyS0 panic=-1 quiet vblk.bench={secs} exitport=0xf4"),
        ])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let out = String::from_utf8_lossy(&o.stdout);
    let rows = parse_linux(&out);
    if rows.is_empty() {
        return Err(format!(
            "trapline + Linux on --virtio-notify {} --virtio-irq {} printed no VBLK-BENCH lines ({}):\n{out}{}",
            path.0,
            path.1,
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(rows)
}

/// Linux rows (trapline's paths or QEMU's) as text, titled `title`.
pub fn render_linux(title: &str, rows: &[(String, Vec<LinuxBench>)]) -> String {
    let mut s = format!(
        "{:<22} {:<6} {:>6} {:>9} {:>12}\n",
        title, "op", "size", "IOPS", "latency µs"
    );
    for (label, list) in rows {
        for r in list {
            s += &format!(
                "{:<22} {:<6} {:>5}K {:>9.0} {:>12.1}\n",
                label,
                r.op,
                r.size / 1024,
                r.iops,
                r.lat_us
            );
        }
    }
    s
}
