//! The lab's report, assembled from what the repeats measured: the host
//! and the run's configuration, one result per scenario and VMM, then the
//! values derived across them.

use trapline_machine::HostKvm;
use trapline_report::{Partial, Report, RunConfig, ScenarioResult, ToolInfo};

use super::derived::{add_footprint, add_peer_derived};
use super::peer_run::{PeerSetup, ProbePeer};
use super::schedule::Plan;
use super::tally::Tally;
use super::{finish_result, LabOptions};
use crate::arch;
use crate::floor;

/// How a lab run that a stop signal ended early got on.
pub(super) struct Stopped {
    /// The signal.
    pub(super) signal: i32,
    /// Units that ran to their end and were kept.
    pub(super) runs_done: usize,
    /// Units the whole run would have taken.
    pub(super) runs_planned: usize,
}

/// The report of a lab run that started at `started_at`; removes the
/// peer's scratch folder once its results are in. A run `stopped` early
/// is marked partial: rows with no result are left out and named instead,
/// and the footprint (more child processes) is not measured.
pub(super) fn assemble_report(
    kvm: &HostKvm,
    opts: &LabOptions,
    plan: &Plan,
    peer: &PeerSetup,
    tally: Tally,
    started_at: String,
    stopped: Option<Stopped>,
) -> Report {
    let host = crate::host::collect(kvm, tally.tsc_khz);
    let mut report = Report::new(
        ToolInfo::new("trapline", env!("CARGO_PKG_VERSION")),
        host,
        run_config(opts, peer),
    );
    report.started_at = started_at;
    push_results(&mut report, opts, plan, tally);
    peer.clean_up();
    if let Some(s) = stopped {
        report.partial = Some(Partial {
            stopped_by: trapline_machine::signals::name(s.signal),
            runs_done: s.runs_done as u32,
            runs_planned: s.runs_planned as u32,
            not_run: without_results(&mut report),
        });
    }
    report.finish();
    add_peer_derived(&mut report);
    if let (Some(exe), None) = (&opts.footprint_exe, &report.partial) {
        add_footprint(&mut report, exe, opts.repeat.clamp(3, 11));
    }
    // The footprint values came after `finish`: judge them too.
    report.judge_goals();
    report
}

/// How the lab ran, as the report records it.
fn run_config(opts: &LabOptions, peer: &PeerSetup) -> RunConfig {
    let cpu = peer.qemu.as_ref().and_then(|q| q.cpu.as_ref());
    RunConfig {
        repeat: opts.repeat,
        goal_cycles: opts.goal_cycles,
        min_iters: opts.min_iters,
        max_iters: opts.max_iters,
        warmup: opts.warmup as u32,
        quick: opts.quick,
        only: opts.only.clone(),
        peer: opts
            .peer
            .as_ref()
            .map(|q| format!("qemu ({})", q.version))
            .or_else(|| opts.kvmtool.as_ref().map(|k| k.label())),
        peer_cpu: cpu.map(|c| c.model.name().to_string()),
        peer_cpu_note: cpu.and_then(|c| c.fallback_note()),
    }
}

/// One result per measured row, in the report's order: trapline's
/// scenarios, the floor ladder, the unprofiled VM, then QEMU's.
fn push_results(report: &mut Report, opts: &LabOptions, plan: &Plan, mut tally: Tally) {
    for s in &plan.scenarios {
        let a = tally.acc.remove(s.name()).unwrap_or_default();
        report.push(finish_result(
            ScenarioResult::new(s.name(), s.group, s.path),
            a,
        ));
    }
    for (rung, k) in &plan.floors {
        let a = tally
            .floor_acc
            .remove(&(rung.vmm, k.name()))
            .unwrap_or_default();
        let r =
            ScenarioResult::new(k.name(), "floor", floor::ladder::path(rung)).with_vmm(rung.vmm);
        report.push(finish_result(r, a));
    }
    for s in &plan.unprofiled {
        let a = tally.unprofiled_acc.remove(s.name()).unwrap_or_default();
        let r = ScenarioResult::new(s.name(), s.group, s.path)
            .with_vmm(trapline_report::derive::names::UNPROFILED_VMM);
        report.push(finish_result(r, a));
    }
    if let Some(peer) = ProbePeer::of(opts) {
        for s in &plan.scenarios {
            let r = ScenarioResult::new(s.name(), s.group, s.path).with_vmm(peer.vmm());
            let r = match peer.not_applicable(s) {
                Some(why) => r.unsupported(format!("n/a on {}: {why}", peer.name())),
                None => finish_result(r, tally.peer_acc.remove(s.name()).unwrap_or_default()),
            };
            report.push(r);
        }
    }
    // Where kvmtool runs no probe (x86), every row says why.
    if let (Some(why), Some(_)) = (arch::KVMTOOL_PROBE_NOT_APPLICABLE, &opts.kvmtool) {
        for s in &plan.scenarios {
            let r = ScenarioResult::new(s.name(), s.group, s.path)
                .with_vmm("kvmtool")
                .unsupported(format!("n/a on kvmtool: {why}"));
            report.push(r);
        }
    }
}

/// Takes the rows a stopped run left without any result (no sample, no
/// verdict) out of `report`; returns their keys.
fn without_results(report: &mut Report) -> Vec<String> {
    let mut not_run = Vec::new();
    report.scenarios.retain(|s| {
        let empty = s.samples.is_empty() && s.reason.is_none();
        if empty {
            not_run.push(s.key());
        }
        !empty
    });
    not_run
}
