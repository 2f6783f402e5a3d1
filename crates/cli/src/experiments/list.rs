//! `--list` of the experiments (`trapline linux-boot`, `trapline
//! virtio-paths`): what that invocation would run and a rough estimate of
//! its time, without running anything (and without /dev/kvm). `trapline
//! bench --list` is the runner's dry run.

use std::time::Duration;

/// One Linux boot to init and power-off on the project's 2-core nested
/// host: 18-21 s on trapline and QEMU microvm alike
/// (docs/results/2026-11-26-linux-boot-reduced.md).
const SECS_PER_LINUX_BOOT: f64 = 20.0;

/// One `trapline run builtin:vblk` child of `trapline virtio-paths`: start-up and
/// set-up (0.11 s measured with `bench=0`), then per request of each of the
/// four kinds at most 3 ms on the slowest path (0.39 s for `bench=100` on
/// exit + line, on the same host).
const SECS_PER_VBLK_CHILD: f64 = 0.1;
const SECS_PER_VBLK_REQUEST: f64 = 0.003;

/// What one experiment would run: one line per kind of run, and
/// the estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentPlan {
    /// `what` lines: one per kind of run, with its count.
    pub runs: Vec<String>,
    /// Why some runs are left out (a missing peer or kernel).
    pub notes: Vec<String>,
    /// The estimated wall time.
    pub estimate: Duration,
}

impl ExperimentPlan {
    /// The plan as `--list` prints it.
    pub fn text(&self, command: &str) -> String {
        let mut out = String::new();
        for r in &self.runs {
            out.push_str(&format!("{r}\n"));
        }
        for n in &self.notes {
            out.push_str(&format!("not run: {n}\n"));
        }
        out.push('\n');
        let secs = self.estimate.as_secs();
        out.push_str(&format!(
            "{command}: no probe scenario runs; estimated time: about {} (a rough model of \
             the project's 2-core nested host; under load a run took up to twice as long)\n",
            if secs < 120 {
                format!("{secs} s")
            } else {
                format!("{} min", secs.div_ceil(60))
            }
        ));
        out
    }
}

/// `trapline linux-boot`: `repeat` boots on trapline, and as many on QEMU
/// microvm with `--peer qemu`, interleaved.
pub fn linux_boot(repeat: u32, smp: u32, cpu: &str, acpi: &str, peer: bool) -> ExperimentPlan {
    let mut runs = vec![format!(
        "trapline    {repeat} Linux boot(s) to init and power-off: {smp} vCPU(s), -cpu {cpu}, \
         --acpi {acpi}"
    )];
    let mut notes = Vec::new();
    if peer {
        runs.push(format!(
            "qemu        {repeat} Linux boot(s) on QEMU microvm, interleaved with trapline's"
        ));
    } else {
        notes.push("QEMU microvm beside it (add --peer qemu)".to_string());
    }
    let boots = f64::from(repeat) * if peer { 2.0 } else { 1.0 };
    ExperimentPlan {
        runs,
        notes,
        estimate: Duration::from_secs_f64(boots * SECS_PER_LINUX_BOOT),
    }
}

/// `trapline virtio-paths`: each notify × irq path, a baseline child and `repeat`
/// children of `reps` requests per kind; then, with a Linux kernel
/// (`TRAPLINE_LINUX_KERNEL`) and QEMU found, Linux's driver on QEMU
/// microvm (ioeventfd on and off) and on trapline's four paths, `secs`
/// seconds of I/O each.
pub fn virtio(
    paths: &[(&str, &str)],
    reps: u64,
    repeat: u32,
    linux: Result<u64, String>,
) -> ExperimentPlan {
    let per_path = 1 + u64::from(repeat.max(1));
    let mut runs = paths
        .iter()
        .map(|(notify, irq)| {
            format!(
                "trapline    builtin:vblk --virtio-notify {notify} --virtio-irq {irq}: \
                 {per_path} runs (a baseline, then {repeat} of {reps} requests per kind)"
            )
        })
        .collect::<Vec<_>>();
    let children = paths.len() as f64;
    let mut secs = children
        * (SECS_PER_VBLK_CHILD
            + f64::from(repeat.max(1))
                * (SECS_PER_VBLK_CHILD + 4.0 * reps as f64 * SECS_PER_VBLK_REQUEST));
    let mut notes = Vec::new();
    match linux {
        Ok(io_secs) => {
            runs.push(format!(
                "qemu        Linux + vblktest on QEMU microvm, ioeventfd on and off: 2 boots, \
                 {io_secs} s of I/O each"
            ));
            runs.push(format!(
                "trapline    Linux + vblktest on each of the {} paths: {} boots, {io_secs} s of \
                 I/O each",
                paths.len(),
                paths.len()
            ));
            secs += (2 + paths.len()) as f64 * (SECS_PER_LINUX_BOOT + io_secs as f64);
        }
        Err(why) => notes.push(format!("the Linux rows ({why})")),
    }
    ExperimentPlan {
        runs,
        notes,
        estimate: Duration::from_secs_f64(secs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_boot_lists_boots_not_probe_scenarios() {
        let p = linux_boot(5, 1, "qemu64,-cx16", "reduced", false);
        assert_eq!(p.runs.len(), 1);
        assert!(p.runs[0].contains("5 Linux boot(s)"), "{p:?}");
        assert!(p.notes[0].contains("--peer qemu"), "{p:?}");
        assert_eq!(p.estimate, Duration::from_secs(100));
        let with_peer = linux_boot(5, 2, "host", "full", true);
        assert_eq!(with_peer.runs.len(), 2);
        assert_eq!(with_peer.estimate, Duration::from_secs(200));
        let text = with_peer.text("linux-boot");
        assert!(text.contains("no probe scenario runs"), "{text}");
        assert!(text.contains("about 4 min"), "{text}");
        assert!(!text.contains("rows selected"), "{text}");
    }

    #[test]
    fn virtio_lists_each_path_and_says_when_linux_rows_are_left_out() {
        let paths = [("exit", "line"), ("ioeventfd", "irqfd")];
        let p = virtio(
            &paths,
            100,
            1,
            Err("TRAPLINE_LINUX_KERNEL is not set".into()),
        );
        assert_eq!(p.runs.len(), 2);
        assert!(p.runs[1].contains("--virtio-notify ioeventfd --virtio-irq irqfd"));
        assert!(p.runs[0].contains("2 runs"), "{p:?}");
        assert!(p.notes[0].contains("TRAPLINE_LINUX_KERNEL"), "{p:?}");
        // 2 paths × (baseline + 1 run of 4 × 100 requests).
        let want = 2.0 * (0.1 + 0.1 + 400.0 * 0.003);
        assert!((p.estimate.as_secs_f64() - want).abs() < 1e-6, "{p:?}");
        let with_linux = virtio(&paths, 100, 1, Ok(3));
        assert_eq!(with_linux.runs.len(), 4);
        assert!(with_linux.notes.is_empty());
        assert!(with_linux.estimate > p.estimate + Duration::from_secs(80));
    }
}
