//! A lab run, phase by phase: choose what it measures, make the QEMU peer
//! ready, run every repeat's units into the accumulators, assemble the
//! report.

use std::time::Instant;

use trapline_machine::HostKvm;
use trapline_report::Report;

use super::assemble::assemble_report;
use super::peer_run::PeerSetup;
use super::schedule::Plan;
use super::tally::Tally;
use super::LabOptions;
use crate::progress::Progress;
use crate::LabError;

/// Run the lab and build its report.
pub fn run_lab(kvm: &HostKvm, opts: &LabOptions) -> Result<Report, LabError> {
    let started = Instant::now();
    let started_at = crate::time::rfc3339_now();
    let plan = Plan::select(opts)?;
    let peer = PeerSetup::prepare(opts, &plan.peer_units)?;
    let mut tally = Tally::new(&plan.scenarios, &plan.floors);
    let mut progress = Progress::new(
        opts.progress,
        plan.units_per_repeat() * opts.repeat as usize,
    );
    for rep in 0..opts.repeat as usize {
        for unit in plan.units(rep, tally.hypercall_supported) {
            progress.step(&format!(
                "repeat {}/{}: {}",
                rep + 1,
                opts.repeat,
                unit.label()
            ));
            tally.run(kvm, opts, &peer, unit);
        }
    }
    progress.finish();
    let mut report = assemble_report(kvm, opts, &plan, &peer, tally, started_at);
    report.wall_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
