//! A lab run, phase by phase: choose what it measures, make the QEMU peer
//! ready, run every repeat's units into the accumulators, assemble the
//! report. A stop signal (SIGINT, SIGTERM, SIGHUP: see
//! `trapline_machine::signals`) ends the repeats early: the unit it cut
//! short is dropped, and the report of what ran before it is marked
//! partial.

use std::time::Instant;

use trapline_machine::HostKvm;
use trapline_report::Report;

use super::assemble::{assemble_report, Stopped};
use super::peer_run::PeerSetup;
use super::schedule::Plan;
use super::tally::Tally;
use super::{stop_signal, LabOptions};
use crate::progress::Progress;
use crate::LabError;

/// Run the lab and build its report.
pub fn run_lab(kvm: &HostKvm, opts: &LabOptions) -> Result<Report, LabError> {
    let started = Instant::now();
    let started_at = crate::time::rfc3339_now();
    let plan = Plan::select(opts)?;
    let peer = PeerSetup::prepare(opts, &plan.peer_units)?;
    let mut tally = Tally::new(&plan.scenarios, &plan.floors);
    let planned = plan.units_per_repeat() * opts.repeat as usize;
    let mut progress = Progress::new(opts.progress, planned);
    let mut done = 0;
    'repeats: for rep in 0..opts.repeat as usize {
        for unit in plan.units(rep, tally.hypercall_supported) {
            if stop_signal().is_some() {
                break 'repeats;
            }
            progress.step(&format!(
                "repeat {}/{}: {}",
                rep + 1,
                opts.repeat,
                unit.label()
            ));
            if tally.run(kvm, opts, &peer, unit) {
                done += 1;
            }
        }
    }
    progress.finish();
    // The anatomy pass: its own VMs, after the repeats (crate::anatomy).
    let anatomy =
        (opts.anatomy && stop_signal().is_none()).then(|| crate::anatomy::measure(kvm, opts));
    let stopped = stop_signal().map(|signal| Stopped {
        signal,
        runs_done: done,
        runs_planned: planned,
    });
    if let Some(s) = &stopped {
        eprintln!(
            "trapline bench: {} received: stopped after {} of {} VM runs; keeping what they measured",
            trapline_machine::signals::name(s.signal),
            s.runs_done,
            s.runs_planned
        );
    }
    let mut report = assemble_report(kvm, opts, &plan, &peer, tally, started_at, stopped);
    if let Some(a) = anatomy {
        report.attach_anatomy(a);
    }
    report.wall_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
