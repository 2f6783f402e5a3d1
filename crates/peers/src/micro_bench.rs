//! kvm-unit-tests' arm64 `micro-bench` beside the probe (`trapline bench
//! --micro-bench PATH/arm/micro-bench.flat`): the given build booted on
//! trapline (and on the QEMU peer with `--peer qemu`), its console table
//! parsed into report rows named `micro-bench:<test>` in the group
//! `micro-bench`.
//!
//! Its table (after `Timer Frequency N Hz (Output in microseconds)`) has a
//! line per test: the name, the total time of the loop in ns and the
//! average per iteration in ns, each printed as `<integer>.<tenths>`; a
//! test that cannot run prints `<name> test skipped`. The loop counts are
//! not printed: they are taken as total / average, rounded to a power of
//! two (micro-bench's counts are 65536, and 256 for `timer_10ms`), and the
//! total is turned back into counter ticks with the printed frequency, so a
//! row's samples are in the same unit as the probe's.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use trapline_report::{Sample, ScenarioResult};

/// The group its rows are in.
pub const GROUP: &str = "micro-bench";

/// The tests the report describes (others micro-bench prints are kept,
/// with a generic description).
const KNOWN: &[(&str, &str)] = &[
    (
        "hyp_call",
        "HVC #0 with w0 = 0x4b000000, answered by KVM (the paper's Hypercall)",
    ),
    (
        "mmio_read_user",
        "load from an empty virtio-mmio transport: exit to the VMM's user space (I/O User)",
    ),
    (
        "mmio_read_vgic",
        "load of GICD_IIDR, served by the in-kernel vGIC (I/O Kernel)",
    ),
    (
        "eoi",
        "ICC_EOIR1_EL1 write of the spurious INTID: stays in the CPU with GICv3",
    ),
    ("ipi", "SGI to CPU 1 and the wait for its handler"),
    ("ipi_hw", "SGI to CPU 1 with hardware-backed (GICv4.1) SGIs"),
    (
        "lpi",
        "LPI through the ITS (INT command) and the wait for its handler",
    ),
    (
        "timer_10ms",
        "virtual timer armed 10 ms ahead: the interrupt's lateness",
    ),
];

/// One line of micro-bench's table.
#[derive(Clone, Debug, PartialEq)]
pub struct MicroRow {
    /// The test's name, e.g. `hyp_call`.
    pub name: String,
    /// The loop's total, ns.
    pub total_ns: f64,
    /// The average per iteration, ns (micro-bench's integer division).
    pub avg_ns: f64,
}

impl MicroRow {
    /// The loop's iterations: total / average, to the nearest power of two.
    /// `None` when the average is 0 (nothing to divide by).
    pub fn iterations(&self) -> Option<u64> {
        if self.avg_ns <= 0.0 || self.total_ns <= 0.0 {
            return None;
        }
        let n = (self.total_ns / self.avg_ns).max(1.0);
        Some(1u64 << n.log2().round().clamp(0.0, 40.0) as u32)
    }
}

/// What one micro-bench run printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MicroBench {
    /// `Timer Frequency` in Hz (0: not printed).
    pub frequency_hz: u64,
    /// The table's lines, in order.
    pub rows: Vec<MicroRow>,
    /// Tests it skipped (`<name> test skipped`).
    pub skipped: Vec<String>,
    /// How the run ended when not cleanly (its timeout, a signal): the
    /// table holds the tests that finished before.
    pub ended_early: Option<String>,
}

/// Parse micro-bench's console output (other lines are ignored).
pub fn parse(console: &str) -> MicroBench {
    let mut out = MicroBench::default();
    for line in console.lines().map(|l| l.trim_end_matches('\r').trim()) {
        if let Some(rest) = line.strip_prefix("Timer Frequency ") {
            if let Some(hz) = rest.split_whitespace().next().and_then(|v| v.parse().ok()) {
                out.frequency_hz = hz;
            }
            continue;
        }
        if let Some(name) = line.strip_suffix(" test skipped") {
            out.skipped.push(name.trim().to_string());
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let [name, total, avg] = words[..] else {
            continue;
        };
        let is_name = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if let (true, Some(total_ns), Some(avg_ns)) = (is_name, ns(total), ns(avg)) {
            out.rows.push(MicroRow {
                name: name.to_string(),
                total_ns,
                avg_ns,
            });
        }
    }
    out
}

/// `<integer>.<tenths>` as micro-bench prints a time.
fn ns(s: &str) -> Option<f64> {
    let (int, frac) = s.split_once('.')?;
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The report rows of one VMM's run: one per table line (samples in
/// counter ticks at `frequency_hz`), one `unsupported` per skipped test.
/// A run that printed no table gives one failed row saying why.
pub fn rows(run: &Result<MicroBench, String>, vmm: &str) -> Vec<ScenarioResult> {
    let bench = match run {
        Ok(b) if !b.rows.is_empty() => b,
        Ok(_) => {
            return vec![row("table", vmm).failed("micro-bench printed no table")];
        }
        Err(e) => return vec![row("table", vmm).failed(format!("micro-bench: {e}"))],
    };
    let mut out = Vec::new();
    for r in &bench.rows {
        let check = match &bench.ended_early {
            None => "micro-bench's own table line".to_string(),
            Some(how) => {
                format!("micro-bench's own table line (the run {how}: later tests missing)")
            }
        };
        let result = row(&r.name, vmm).with_check(check);
        let result = match (r.iterations(), bench.frequency_hz) {
            (Some(n), hz) if hz > 0 => {
                let ticks = (r.total_ns * hz as f64 / 1e9).round() as u64;
                result
                    .with_samples(vec![Sample::new(n, ticks)])
                    .with_extra("total_ns", r.total_ns)
                    .with_extra("avg_ns", r.avg_ns)
            }
            (None, _) => result.unsupported(format!(
                "micro-bench printed an average of {} ns: no loop count to take",
                r.avg_ns
            )),
            (_, _) => result.unsupported("micro-bench printed no timer frequency"),
        };
        out.push(result);
    }
    for name in &bench.skipped {
        out.push(row(name, vmm).unsupported("micro-bench skipped it on this host"));
    }
    out
}

fn row(name: &str, vmm: &str) -> ScenarioResult {
    let path = KNOWN
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("a micro-bench test", |(_, p)| p);
    ScenarioResult::new(format!("{GROUP}:{name}"), GROUP, path).with_vmm(vmm)
}

/// What micro-bench's guest needs: two vCPUs (its IPI tests), 256 MiB, as
/// kvm-unit-tests' unittests.cfg runs it.
const SMP: u32 = 2;
const MEM_MIB: u32 = 256;

/// Boot `flat` on trapline (`exe run`) and parse its table.
pub fn run_on_trapline(exe: &Path, flat: &Path, timeout: Duration) -> Result<MicroBench, String> {
    let mut cmd = Command::new(exe);
    cmd.args(["run", "--serial", "stdio"])
        .args(["--smp", &SMP.to_string(), "--mem", &MEM_MIB.to_string()])
        .arg("--timeout")
        .arg(format!("{}", timeout.as_secs().max(1)))
        .arg("--kernel")
        .arg(flat);
    console_of(cmd, "trapline")
}

/// Boot `flat` on QEMU (`-M virt,gic-version=3 -accel kvm`, the CPU model
/// the peer chose) and parse its table.
pub fn run_on_qemu(
    qemu: &crate::qemu::Qemu,
    flat: &Path,
    timeout: Duration,
) -> Result<MicroBench, String> {
    let mut cmd = Command::new("timeout");
    cmd.arg("-s")
        .arg("KILL")
        .arg(format!("{}", timeout.as_secs().max(1)))
        .arg(&qemu.binary)
        .args(qemu.kvm_machine_args())
        .args(["-smp", &SMP.to_string(), "-m", &MEM_MIB.to_string()])
        .arg("-kernel")
        .arg(flat);
    console_of(cmd, "QEMU")
}

/// Boot `flat` on kvmtool (`lkvm run`, serial console) and parse its table.
pub fn run_on_kvmtool(
    k: &crate::kvmtool::Kvmtool,
    flat: &Path,
    timeout: Duration,
) -> Result<MicroBench, String> {
    let (console, status) = k.run(flat, SMP, MEM_MIB, timeout)?;
    let mut bench = parse(&console);
    if bench.rows.is_empty() {
        let last = console
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("nothing");
        return Err(format!(
            "no table on kvmtool's console ({status}; its last line: {last})"
        ));
    }
    if !status.success() {
        bench.ended_early = Some(format!("ended with {status}"));
    }
    Ok(bench)
}

fn console_of(mut cmd: Command, who: &str) -> Result<MicroBench, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("starting {who}: {e}"))?;
    let console = String::from_utf8_lossy(&out.stdout);
    let mut bench = parse(&console);
    if bench.rows.is_empty() {
        let why = String::from_utf8_lossy(&out.stderr);
        let last = why
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!(
            "no table on {who}'s console ({}; {last})",
            out.status
        ));
    }
    if !out.status.success() {
        bench.ended_early = Some(format!("ended with {}", out.status));
    }
    Ok(bench)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of kvm-unit-tests' arm64 micro-bench on trapline in the
    /// emulated ARM64 host (its console, captured as data; `trapline run
    /// --timeout 180` ended it after two lines: under TCG an exit takes
    /// 0.6-1.8 ms, and each test loops 65536 times).
    const SAMPLE: &str = include_str!("../tests/data/micro-bench-trapline.txt");

    #[test]
    fn parses_the_captured_table() {
        let b = parse(SAMPLE);
        assert_eq!(b.frequency_hz, 62_500_000);
        assert!(b.skipped.is_empty());
        let names: Vec<&str> = b.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["hyp_call", "mmio_read_user"]);
        for r in &b.rows {
            assert!(r.total_ns > 0.0 && r.avg_ns <= r.total_ns, "{r:?}");
            assert_eq!(r.iterations(), Some(65536), "{r:?}");
        }
        assert_eq!(b.rows[0].avg_ns, 607_483.0);
        let rows = rows(
            &Ok(MicroBench {
                ended_early: Some("ended with exit status: 124".into()),
                ..b
            }),
            "trapline",
        );
        assert!(rows[0]
            .check
            .as_ref()
            .unwrap()
            .contains("later tests missing"));
        assert_eq!(rows[1].name, "micro-bench:mmio_read_user");
        assert!(rows[1].path.contains("virtio-mmio"));
        // 119.12 s at 62.5 MHz, over 65536 iterations.
        assert_eq!(rows[1].samples[0].cycles, 7_445_060_603);
        assert_eq!(rows[1].samples[0].iterations, 65536);
    }

    #[test]
    fn parses_a_synthetic_table_with_a_skipped_test() {
        let s = "Timer Frequency 62500000 Hz (Output in microseconds)\r\n\r\n\
                 name                                    total ns                         avg ns             \r\n\
                 --------------------------------------------------------------------------------------------\r\n\
                 hyp_call                            6553600.0                        100.0              \r\n\
                 ipi_hw test skipped\r\n\
                 timer_10ms                            25600.0                        100.0              \r\n\
                 PASS: something 1.0 2.0\n";
        let b = parse(s);
        assert_eq!(b.frequency_hz, 62_500_000);
        assert_eq!(b.skipped, ["ipi_hw"]);
        assert_eq!(b.rows.len(), 2);
        assert_eq!(b.rows[0].iterations(), Some(65536));
        assert_eq!(b.rows[1].iterations(), Some(256));
        let rows = rows(&Ok(b), "qemu");
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].name, "micro-bench:hyp_call");
        assert_eq!(rows[0].vmm, "qemu");
        // 6.5536 ms at 62.5 MHz.
        assert_eq!(rows[0].samples[0].cycles, 409_600);
        assert_eq!(rows[2].status, trapline_report::Status::Unsupported);
    }

    #[test]
    fn no_table_is_a_failed_row_not_a_panic() {
        let rows = rows(&Ok(parse("garbage\n1 2 3\nname a.b c.d\n")), "trapline");
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].status, trapline_report::Status::Failed);
        let zero = MicroRow {
            name: "eoi".into(),
            total_ns: 10.0,
            avg_ns: 0.0,
        };
        assert_eq!(zero.iterations(), None);
    }
}
