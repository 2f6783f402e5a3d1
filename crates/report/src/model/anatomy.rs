//! The anatomy of user exits (`--view anatomy`): for each user path, on
//! trapline and on the raw-KVM floor, one access split into three legs —
//! exit (guest → VMM), the VMM's own handling, entry (VMM → guest) — each
//! with its spread, and the check that the legs' medians add up to the
//! path's round trip (see `trapline_abi::anatomy` for the stamps and the
//! arithmetic, docs/bench.md for the method and its limits).

use serde::{Deserialize, Serialize};
use trapline_abi::{sum_check, Histogram, SumCheck, ANATOMY_SUM_TOLERANCE_PCT};

use super::{Report, TRAPLINE_VMM};

/// The anatomy pass of one run: every path measured, on each VMM.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Anatomy {
    /// Accesses stamped per path and VMM.
    pub iterations: u64,
    /// How each side's clocks were aligned, or why they were not (one
    /// line each).
    #[serde(default)]
    pub notes: Vec<String>,
    /// One entry per path and VMM, trapline's first.
    #[serde(default)]
    pub paths: Vec<AnatomyPath>,
}

/// One user path on one VMM.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AnatomyPath {
    /// The path's scenario name (`pio-user-out`, …).
    pub name: String,
    /// `trapline`, or the floor's rung (`raw-kvm`).
    pub vmm: String,
    /// How the clocks were put on one time line (`KVM_VCPU_TSC_OFFSET`,
    /// …), or `not aligned`.
    pub align: String,
    /// The alignment's error in clock ticks, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align_error: Option<u64>,
    /// Why there are no legs (or no numbers at all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Accesses stamped.
    #[serde(default)]
    pub accesses: u64,
    /// Accesses split into legs (one exit each, every leg in order).
    #[serde(default)]
    pub split: u64,
    /// Guest → VMM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<Spread>,
    /// The VMM's own handling (KVM_RUN's return to its next entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handling: Option<Spread>,
    /// VMM → guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<Spread>,
    /// The stamped round trip of every access (split or not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip: Option<Spread>,
    /// The path's ordinary cost per iteration measured beside its legs,
    /// in the same VM: trapline's, the median of timed batches of the
    /// scenario's own loop between the stamped chunks (the floor has
    /// none: see [`Self::scenario_per_iteration`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_iteration: Option<f64>,
    /// The same VMM's scenario of that name in this run (its median over
    /// repeats from its timed batches, other VMs, another moment), when
    /// the run measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_per_iteration: Option<f64>,
    /// The median cost of the two clock reads with nothing between them:
    /// exit and entry each hold about half of it, so the check takes it
    /// off the legs' sum (on a nested host a clock read may trap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp_cost: Option<u64>,
}

/// A distribution's summary, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Values recorded.
    pub count: u64,
    /// Smallest.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

impl Spread {
    /// The summary of `h` (within the histogram's 0.78 %); `None` while empty.
    pub fn of(h: &Histogram) -> Option<Self> {
        Some(Spread {
            count: h.count(),
            min: h.min()?,
            p50: h.quantile(0.5)?,
            p90: h.quantile(0.9)?,
            p99: h.quantile(0.99)?,
            max: h.max()?,
        })
    }
}

/// What a path's legs are checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundTripSource {
    /// Timed batches beside the legs, in the same VM.
    Batches,
    /// The run's scenario of that name (other VMs, another moment).
    Scenario,
    /// The stamped round trip's own median (no scenario measured it).
    Stamped,
}

impl AnatomyPath {
    /// Whether the path has legs.
    pub fn has_legs(&self) -> bool {
        self.exit.is_some() && self.handling.is_some() && self.entry.is_some()
    }

    /// The legs' medians against the path's round trip, and what that
    /// round trip is: its scenario's timed batches where the run has them,
    /// else the stamped round trip's median.
    pub fn sum_check(&self) -> Option<(SumCheck, RoundTripSource)> {
        let (e, h, n) = (self.exit?, self.handling?, self.entry?);
        let (round, source) = match (
            self.per_iteration,
            self.scenario_per_iteration,
            self.round_trip,
        ) {
            (Some(p), _, _) => (p, RoundTripSource::Batches),
            (None, Some(p), _) => (p, RoundTripSource::Scenario),
            (None, None, Some(r)) => (r.p50 as f64, RoundTripSource::Stamped),
            (None, None, None) => return None,
        };
        // The batches hold no stamps: the stamps' own cost comes off the legs.
        let stamps = match source {
            RoundTripSource::Stamped => 0.0,
            _ => self.stamp_cost.unwrap_or(0) as f64,
        };
        sum_check(
            e.p50 as f64 - stamps / 2.0,
            h.p50 as f64,
            n.p50 as f64 - stamps / 2.0,
            round,
        )
        .map(|c| (c, source))
    }

    /// Whether the legs add up within the lab's tolerance.
    pub fn adds_up(&self) -> Option<bool> {
        self.sum_check()
            .map(|(c, _)| c.within(ANATOMY_SUM_TOLERANCE_PCT))
    }

    /// Whether this is trapline's row.
    pub fn is_trapline(&self) -> bool {
        self.vmm == TRAPLINE_VMM
    }
}

impl Report {
    /// Keep `anatomy` in the report, with each path's scenario of the
    /// same VMM where the run measured it.
    pub fn attach_anatomy(&mut self, mut anatomy: Anatomy) {
        for p in &mut anatomy.paths {
            p.scenario_per_iteration = self
                .scenario(&p.vmm, &p.name)
                .and_then(super::ScenarioResult::median);
        }
        self.anatomy = Some(anatomy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(p50: u64) -> Option<Spread> {
        Some(Spread {
            count: 10,
            min: p50 - 1,
            p50,
            p90: p50 + 1,
            p99: p50 + 2,
            max: p50 + 3,
        })
    }

    fn path(per_iteration: Option<f64>) -> AnatomyPath {
        AnatomyPath {
            name: "pio-user-out".into(),
            vmm: "trapline".into(),
            align: "KVM_VCPU_TSC_OFFSET".into(),
            accesses: 10,
            split: 10,
            exit: spread(9_000),
            handling: spread(100),
            entry: spread(8_000),
            round_trip: spread(17_200),
            per_iteration,
            stamp_cost: Some(40),
            ..AnatomyPath::default()
        }
    }

    #[test]
    fn the_legs_are_checked_against_the_batches_else_the_stamped_round_trip() {
        let (c, src) = path(Some(17_500.0)).sum_check().unwrap();
        assert_eq!(src, RoundTripSource::Batches);
        assert_eq!(c.sum, 17_100.0 - 40.0, "the stamps' cost comes off");
        assert!(path(Some(17_500.0)).adds_up().unwrap());
        assert!(!path(Some(19_000.0)).adds_up().unwrap(), "10 % short");
        let (c, src) = path(None).sum_check().unwrap();
        assert_eq!((src, c.round), (RoundTripSource::Stamped, 17_200.0));
        let no_legs = AnatomyPath {
            exit: None,
            ..path(None)
        };
        assert!(no_legs.sum_check().is_none() && !no_legs.has_legs());
    }

    #[test]
    fn a_spread_reads_a_histogram_within_its_bound() {
        let mut h = Histogram::new();
        for v in 1000..2000u64 {
            h.record(v);
        }
        let s = Spread::of(&h).unwrap();
        assert_eq!((s.count, s.min, s.max), (1000, 1000, 1999));
        assert!((s.p50 as f64 - 1500.0).abs() / 1500.0 < 0.01, "{s:?}");
        assert!(Spread::of(&Histogram::new()).is_none());
    }
}
