//! Runs the lab: fresh VMs per repeat, scenarios interleaved across
//! repeats, every result checked, everything gathered into a Report.
//!
//! Its jobs, one module each: `run` goes through a lab run's phases;
//! `schedule` picks the units of each repeat and their order; `tally` runs
//! each unit into the accumulators; `assemble` builds the report from
//! them; `probe` runs trapline's probe VMs, `peer_run` readies QEMU and
//! takes its runs, `floor_run` the raw-KVM floor's; `ucall` pairs the
//! guest's BEGIN and RESULT ucalls into batches; `tails` merges each
//! scenario's recorded passes across repeats; `checks` verifies each
//! batch did what its path claims; `derived` adds the values computed
//! across scenarios.

mod assemble;
mod checks;
mod derived;
mod floor_run;
mod peer_run;
mod probe;
mod run;
mod schedule;
mod tails;
mod tally;
mod ucall;

use std::time::Duration;

use trapline_report::{Sample, ScenarioResult};

pub use run::run_lab;
pub use schedule::{dry_run, listing, DryRun};

/// How to run the lab.
#[derive(Clone, Debug)]
pub struct LabOptions {
    /// Fresh-VM repeats per scenario.
    pub repeat: u32,
    /// TSC cycles a timed batch must last.
    pub goal_cycles: u64,
    /// First batch size.
    pub min_iters: u64,
    /// Largest batch.
    pub max_iters: u64,
    /// Untimed iterations before the batches.
    pub warmup: u64,
    /// Scenario filter (comma-separated globs), if any.
    pub only: Option<String>,
    /// Whether --quick chose the above.
    pub quick: bool,
    /// Longest a probe VM may run.
    pub vm_timeout: Duration,
    /// Longest the hypercall VM may run before the hypercall is declared
    /// not to return.
    pub hypercall_timeout: Duration,
    /// Show progress on stderr (a bar on a terminal, else a line per step).
    pub progress: bool,
    /// Seccomp filters on the VMs' vCPU threads (the lab's main thread goes
    /// on building VMs, so it stays unfiltered).
    pub seccomp: bool,
    /// The trapline binary, to measure its own footprint with fresh
    /// `trapline run` processes (`None`: not measured).
    pub footprint_exe: Option<std::path::PathBuf>,
    /// QEMU, to run the same probe on as a peer (`--peer qemu`).
    pub peer: Option<crate::peer::Qemu>,
    /// kvmtool as the peer (`--peer kvmtool`): on arm64 it runs the probe's
    /// kvmtool build; on x86 its rows say why the probe does not run there.
    pub kvmtool: Option<crate::kvmtool::Kvmtool>,
    /// Profile trapline's VMs (`--stat`'s machinery): each scenario gets
    /// trapline's own handling time per exit, and each repeat one more VM
    /// without the profile gives its overhead.
    pub stat: bool,
    /// Run the anatomy pass (`--view anatomy`): each user path's legs on
    /// trapline and on the raw-KVM floor.
    pub anatomy: bool,
}

#[cfg(test)]
impl LabOptions {
    /// `--quick`'s batches over three repeats with the exit profile, no
    /// peer, no progress and no footprint, selecting `only`: what the
    /// schedule's and the probe's tests plan with.
    pub(crate) fn for_tests(only: Option<&str>) -> LabOptions {
        LabOptions {
            repeat: 3,
            goal_cycles: 1 << 23,
            min_iters: 16,
            max_iters: 1 << 20,
            warmup: 16,
            only: only.map(String::from),
            quick: true,
            vm_timeout: Duration::from_secs(1),
            hypercall_timeout: Duration::from_secs(1),
            progress: false,
            seccomp: false,
            footprint_exe: None,
            peer: None,
            kvmtool: None,
            stat: true,
            anatomy: false,
        }
    }
}

/// Per-scenario accumulation across repeats.
#[derive(Default)]
pub(super) struct Acc {
    pub(super) samples: Vec<Sample>,
    pub(super) failure: Option<String>,
    pub(super) unsupported: Option<String>,
    pub(super) check: Option<String>,
    /// The recorded passes' distribution (trapline's probe only).
    pub(super) tails: tails::TailsAcc,
}

/// The stop signal received so far, if any (SIGINT, SIGTERM, SIGHUP: see
/// `trapline_machine::signals`): a lab run keeps what ran before it.
pub(super) fn stop_signal() -> Option<i32> {
    trapline_machine::signals::received()
}

pub(super) fn finish_result(mut r: ScenarioResult, a: Acc) -> ScenarioResult {
    if let Some(c) = a.check {
        r = r.with_check(c);
    }
    r = r.with_samples(a.samples);
    if let Some(t) = a.tails.finish() {
        r = r.with_tails(t);
    }
    if let Some(f) = a.failure {
        r = r.failed(f);
    } else if let Some(u) = a.unsupported {
        r = r.unsupported(u);
    }
    r
}
