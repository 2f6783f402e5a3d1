//! The kernel's share of in-kernel paths (`trapline kernel-share`): each
//! chosen scenario runs alone on a fresh probe VM while KVM's trace points
//! (`kvm_exit`, `kvm_entry` and the path events) are recorded for this
//! process's threads; per exit reason and path, the time from `kvm_exit` to
//! the next `kvm_entry` is set beside the probe's own round trip for that
//! scenario. Where tracing is not available, every row says `unsupported`
//! with the reason; the run never fails for it.
//!
//! Its parts: [`tracefs`] arms and tears down a session, [`trace`] reads
//! the text trace, [`render`] writes the rows in every format.

pub mod render;
pub mod trace;
pub mod tracefs;

use std::path::PathBuf;

use trapline_machine::HostKvm;

use crate::catalog::SCENARIOS;
use crate::runner::{run_lab, LabOptions};
use trace::{KeyShare, TraceShare};
use tracefs::{Session, Unsupported};

/// The JSON's schema name and version.
pub const SCHEMA: &str = "trapline-kernel-share/1";

/// Keys kept per scenario (most exits first; the loop's own is the first).
pub const KEYS_KEPT: usize = 5;

/// How to measure.
#[derive(Clone, Debug)]
pub struct KshareOptions {
    /// Where tracefs is (or is to be mounted).
    pub tracefs: PathBuf,
    /// The ring buffer per CPU, in KiB (the trace's bound).
    pub buffer_kb: u32,
    /// The lab's options for each scenario's run (`only` is set per
    /// scenario; `repeat` should be 1).
    pub lab: LabOptions,
}

/// The scenarios measured when none are named: every in-kernel I/O path of
/// this architecture's catalog, CPUID where there is one, and one user exit
/// (the profile's: its trace time includes user space).
pub fn default_scenarios() -> Vec<&'static str> {
    SCENARIOS
        .iter()
        .map(|s| s.name())
        .filter(|n| n.contains("-kernel-") || *n == "cpuid")
        .chain([crate::arch::STAT_OVERHEAD_SCENARIO])
        .collect()
}

/// What one scenario's run gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Traced.
    Measured(Measured),
    /// Tracing is not available (the reason).
    Unsupported(String),
    /// The probe run failed (the reason).
    Failed(String),
}

/// A traced scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The most frequent keys, at most [`KEYS_KEPT`].
    pub keys: Vec<KeyShare>,
    /// `kvm_exit` lines in the trace.
    pub exits: u64,
    /// Exits never re-entered in the trace.
    pub unpaired: u64,
    /// A note (events lost to a full buffer).
    pub note: Option<String>,
}

/// One scenario's row.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioShare {
    /// The scenario.
    pub name: String,
    /// The probe's round trip: median cycles per iteration (`None` when the
    /// run gave none).
    pub round_trip: Option<f64>,
    /// The trace's side.
    pub outcome: Outcome,
}

/// The whole measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct KshareReport {
    /// The trace clock used (`x86-tsc`, `mono`), or `-` when none was armed.
    pub clock: String,
    /// The cycle counter's frequency.
    pub tsc_khz: u64,
    /// Per scenario, in the order asked.
    pub scenarios: Vec<ScenarioShare>,
}

/// Runs each of `names` alone with tracing armed around it.
pub fn measure(kvm: &HostKvm, names: &[&str], opts: &KshareOptions) -> KshareReport {
    let tsc_khz = crate::host::measure_tsc_khz(std::time::Duration::from_millis(50));
    let mut clock = "-".to_string();
    let scenarios = names
        .iter()
        .map(|name| {
            let (share, used) = measure_one(kvm, name, opts, tsc_khz);
            if let Some(c) = used {
                clock = c;
            }
            share
        })
        .collect();
    KshareReport {
        clock,
        tsc_khz,
        scenarios,
    }
}

/// One scenario: arm, run, read; the clock's name when a session was armed.
fn measure_one(
    kvm: &HostKvm,
    name: &str,
    opts: &KshareOptions,
    tsc_khz: u64,
) -> (ScenarioShare, Option<String>) {
    let session = Session::arm(&opts.tracefs, opts.buffer_kb, tsc_khz);
    let lab = LabOptions {
        only: Some(name.to_string()),
        ..opts.lab.clone()
    };
    let run = run_lab(kvm, &lab);
    let round_trip = run.as_ref().ok().and_then(|r| {
        r.scenarios
            .iter()
            .find(|s| s.name == name && s.vmm == "trapline")
            .and_then(|s| s.stats.as_ref())
            .map(|s| s.median)
    });
    let clock_name = session.as_ref().ok().map(|s| match s.clock {
        trace::Clock::Cycles => "x86-tsc".to_string(),
        trace::Clock::Nanos { .. } => "mono".to_string(),
    });
    let outcome = match (run, session) {
        (Err(e), _) => Outcome::Failed(e.to_string()),
        (Ok(_), Err(Unsupported(why))) => Outcome::Unsupported(why),
        (Ok(_), Ok(s)) => match s.finish() {
            Err(Unsupported(why)) => Outcome::Unsupported(why),
            Ok((text, note)) => judge(trace::read(&text, s.clock), note, s.events()),
        },
    };
    (
        ScenarioShare {
            name: name.to_string(),
            round_trip,
            outcome,
        },
        clock_name,
    )
}

/// A read trace as a row: `unsupported` when the exit/entry events never
/// fired for this process (they exist but this host's KVM does not emit
/// them on its exit path).
fn judge(share: TraceShare, note: Option<String>, events: &[&str]) -> Outcome {
    if share.exits == 0 {
        return Outcome::Unsupported(format!(
            "kvm_exit never fired for this run's vCPU threads (enabled: {}); this host's KVM \
             does not emit it on its exit path{}",
            events.join(", "),
            pvm_hint()
        ));
    }
    let mut keys = share.keys;
    keys.truncate(KEYS_KEPT);
    Outcome::Measured(Measured {
        keys,
        exits: share.exits,
        unpaired: share.unpaired,
        note,
    })
}

/// A hint when the host's KVM is PVM (`kvm_pvm`): a paravirtual KVM that
/// runs guests without hardware virtualization.
fn pvm_hint() -> &'static str {
    if std::path::Path::new("/sys/module/kvm_pvm").exists() {
        " (kvm_pvm: a paravirtualized KVM without VMX/SVM)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_without_exits_is_unsupported_with_the_events_named() {
        let o = judge(TraceShare::default(), None, &["kvm_exit", "kvm_entry"]);
        match o {
            Outcome::Unsupported(why) => assert!(why.contains("kvm_exit, kvm_entry"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_default_list_names_catalog_scenarios_and_one_user_exit() {
        let list = default_scenarios();
        assert!(list.contains(&crate::arch::STAT_OVERHEAD_SCENARIO));
        assert!(list.len() >= 2, "{list:?}");
        for n in list {
            assert!(crate::catalog::find(n).is_some(), "{n}");
        }
    }
}
