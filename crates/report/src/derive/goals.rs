//! The headline values and their verdict against trapline's goals: the
//! user-exit premium over raw KVM's, trapline's own cycles per exit, the
//! floor gap per in-kernel path, the profile's overhead, start-up CPU time
//! and memory beyond guest RAM. The one place a goal is judged: the
//! report's derived values carry the verdict ([`Report::judge_goals`]), and
//! the summary and the views read it from here.
//!
//! A verdict takes the spread into account: a value whose whole range
//! (medians ± MADs, carried through the arithmetic) is within the goal has
//! met it, one whose whole range is beyond has missed it, and one whose
//! range straddles the goal cannot be resolved by this run.

use crate::derive::ladder::{self, VS_TRAPLINE_PC_GOAL};
use crate::derive::startfloor;
use crate::derive::{
    names, HANDLING_PER_USER_EXIT, PREMIUM_RATIO_RAW_KVM_GOAL, PREMIUM_RATIO_RAW_KVM_VMM,
    STAT_OVERHEAD_SHARE, STAT_OVERHEAD_SHARE_GOAL, VMM_CPU_TO_FIRST_KVM_RUN, VMM_RSS_BEYOND_GUEST,
};
use crate::fmt;
use crate::model::{Goal, Report, ValueRange, TRAPLINE_VMM};
use crate::unit::Unit;

pub use crate::model::Verdict;

/// A footprint value with its goal and Firecracker's promise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootprintGoal {
    /// The derived value's name.
    pub name: &'static str,
    /// What it measures, in words.
    pub what: &'static str,
    /// A short label for charts.
    pub short: &'static str,
    /// The derived value's unit in the report.
    pub unit: Unit,
    /// The unit as shown.
    pub shown_unit: Unit,
    /// trapline's goal: at most this.
    pub goal: f64,
    /// Firecracker's published promise: at most this.
    pub firecracker: f64,
}

/// The goals and Firecracker's figures (see [`FIRECRACKER_SOURCE`](crate::views::vmm::FIRECRACKER_SOURCE)). The only
/// copy of them in the code.
pub const FOOTPRINT_GOALS: [FootprintGoal; 2] = [
    FootprintGoal {
        name: VMM_CPU_TO_FIRST_KVM_RUN,
        what: "CPU time from exec to the first KVM_RUN",
        short: "CPU-ms to first KVM_RUN",
        unit: Unit::Millis,
        shown_unit: Unit::CpuMillis,
        goal: 1.0,
        firecracker: 8.0,
    },
    FootprintGoal {
        name: VMM_RSS_BEYOND_GUEST,
        what: "resident memory beyond guest RAM",
        short: "MiB beyond guest RAM",
        unit: Unit::MiB,
        shown_unit: Unit::MiB,
        goal: 2.0,
        firecracker: 5.0,
    },
];

/// How a headline value is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    /// TSC cycles: `399 cyc`.
    Cycles,
    /// A ratio: `1.01x`.
    Ratio,
    /// A ratio written as a percentage: `4.2 %`.
    Percent,
    /// One of the footprint's units (CPU-ms, MiB): `1.55 MiB`.
    Unit(Unit),
}

impl Amount {
    /// `v` with its unit.
    pub fn show(self, v: f64) -> String {
        if !v.is_finite() {
            return "-".to_string();
        }
        match self {
            Amount::Cycles => format!("{} cyc", fmt::cycles(v)),
            Amount::Ratio => fmt::ratio_x(v),
            Amount::Percent => format!("{:.1} %", v * 100.0),
            Amount::Unit(u) => format!("{v:.2} {u}"),
        }
    }

    /// A range `lo..hi` with the unit once (`lo..` when it has no top).
    /// ASCII, so a terminal's columns are its bytes.
    pub fn range(self, (lo, hi): (f64, f64)) -> String {
        let bare = |v: f64| match self {
            Amount::Cycles => fmt::cycles(v),
            Amount::Ratio => fmt::significant(v),
            Amount::Percent => format!("{:.0}", v * 100.0),
            Amount::Unit(_) => format!("{v:.2}"),
        };
        let unit = match self {
            Amount::Cycles | Amount::Unit(_) => "",
            Amount::Ratio => "x",
            Amount::Percent => " %",
        };
        if hi.is_finite() {
            format!("{}..{}{unit}", bare(lo), bare(hi))
        } else {
            format!("{}..{unit}", bare(lo))
        }
    }

    /// A goal's bound (at most this): `1.10x`, `5 %`, `3 CPU-ms`.
    pub fn bound(self, v: f64) -> String {
        match self {
            Amount::Percent => format!("{} %", fmt::raw((v * 1e5).round() / 1e3)),
            Amount::Ratio => format!("{v:.2}x"),
            Amount::Cycles => format!("{} cyc", fmt::cycles(v)),
            Amount::Unit(u) => format!("{} {u}", fmt::raw(v)),
        }
    }
}

/// One headline value against its goal.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalCheck {
    /// What it is, in a few words.
    pub label: String,
    /// How it is written.
    pub amount: Amount,
    /// This run's value.
    pub value: f64,
    /// The value's range from the spreads of what it was computed from,
    /// when they are known.
    pub range: Option<(f64, f64)>,
    /// The goal: at most this.
    pub goal: f64,
    /// The value against the goal.
    pub verdict: Verdict,
    /// The derived value it judges, when the report has one by that name.
    pub derived: Option<String>,
}

impl GoalCheck {
    fn new(
        derived: impl Into<String>,
        label: impl Into<String>,
        amount: Amount,
        value: f64,
        range: Option<(f64, f64)>,
        goal: f64,
    ) -> Option<Self> {
        if !value.is_finite() {
            return None;
        }
        Some(Self {
            derived: Some(derived.into()),
            label: label.into(),
            amount,
            value,
            range,
            goal,
            verdict: Verdict::at_most(value, range, goal),
        })
    }
}

/// A value with its spread (median and MAD, or sums of them).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Spread {
    value: f64,
    spread: f64,
}

impl Spread {
    /// Gross median and MAD of `vmm:name`, when measured.
    fn gross(report: &Report, vmm: &str, name: &str) -> Option<Spread> {
        let s = report.scenario(vmm, name).filter(|s| s.is_measured())?;
        let st = s.stats.as_ref()?;
        Some(Spread {
            value: st.median,
            spread: st.mad,
        })
    }

    fn minus(self, other: Spread) -> Spread {
        Spread {
            value: self.value - other.value,
            spread: self.spread + other.spread,
        }
    }

    /// `self / other` with the range the spreads allow (the top open when
    /// the denominator's range reaches zero); `None` unless `other` is
    /// positive.
    fn over(self, other: Spread) -> Option<(f64, (f64, f64))> {
        if other.value <= 0.0 {
            return None;
        }
        let low_den = other.value - other.spread;
        let lo = (self.value - self.spread) / (other.value + other.spread);
        let hi = if low_den > 0.0 {
            (self.value + self.spread) / low_den
        } else {
            f64::INFINITY
        };
        Some((self.value / other.value, (lo, hi)))
    }
}

/// `pio-user-out − pio-kernel-wildcard` on `vmm`, with its spread; where
/// there is no port I/O (arm64), `mmio-user-write − mmio-kernel-wildcard`.
fn premium(report: &Report, vmm: &str) -> Option<Spread> {
    let (user, kernel) = user_exit_pair(report, vmm);
    let user = Spread::gross(report, vmm, user)?;
    let kernel = Spread::gross(report, vmm, kernel)?;
    Some(user.minus(kernel))
}

/// The user exit and its in-kernel counterpart the premium is taken on:
/// PIO where `vmm` has `pio-user-out`, else MMIO (arm64), as
/// [`crate::derive::standard`] takes them.
fn user_exit_pair(report: &Report, vmm: &str) -> (&'static str, &'static str) {
    if report.scenario(vmm, names::PIO_USER_OUT).is_some() {
        (names::PIO_USER_OUT, names::PIO_KERNEL_WILDCARD)
    } else {
        (names::MMIO_USER_WRITE, names::MMIO_KERNEL_WILDCARD)
    }
}

/// trapline's user-exit premium over the bare KVM_RUN loop's.
fn premium_vs_raw_kvm(report: &Report) -> Option<GoalCheck> {
    let ours = premium(report, TRAPLINE_VMM)?;
    let raw = premium(report, names::RAW_KVM_VMM)?;
    let (ratio, range) = ours.over(raw)?;
    // The report's own value when it has one (the same medians).
    let value = report
        .derived(PREMIUM_RATIO_RAW_KVM_VMM)
        .map_or(ratio, |d| d.value);
    GoalCheck::new(
        PREMIUM_RATIO_RAW_KVM_VMM,
        "user-exit premium / raw KVM's",
        Amount::Ratio,
        value,
        Some(range),
        PREMIUM_RATIO_RAW_KVM_GOAL,
    )
}

/// trapline's own cycles per user exit (the profile's TSC pair), against
/// what the premium's goal leaves it: a tenth of the bare loop's premium.
fn own_cycles_per_exit(report: &Report) -> Option<GoalCheck> {
    let h = report
        .scenario(TRAPLINE_VMM, user_exit_pair(report, TRAPLINE_VMM).0)
        .filter(|s| s.is_measured())?
        .handling
        .as_ref()?;
    let raw = premium(report, names::RAW_KVM_VMM)?;
    let value = report
        .derived(HANDLING_PER_USER_EXIT)
        .map_or(h.median, |d| d.value);
    GoalCheck::new(
        HANDLING_PER_USER_EXIT,
        "own cycles per user exit",
        Amount::Cycles,
        value,
        Some((h.median - h.mad, h.median + h.mad)),
        (PREMIUM_RATIO_RAW_KVM_GOAL - 1.0) * raw.value,
    )
}

/// Words for an in-kernel path.
fn path_words(path: &str) -> &str {
    match path {
        "pio-kernel-wildcard" => "PIO ioeventfd",
        "mmio-kernel-wildcard" => "MMIO ioeventfd",
        "ram-read" => "RAM read",
        "mmio-vgic-read" => "vGIC MMIO read",
        other => other,
    }
}

/// trapline's gross cycles on `path` over `trapline-pc`'s.
fn floor_gap(report: &Report, path: &str) -> Option<GoalCheck> {
    let ours = Spread::gross(report, TRAPLINE_VMM, path)?;
    let top = ladder::for_report(report);
    let pc = Spread::gross(report, top.top, path)?;
    let (ratio, range) = ours.over(pc)?;
    let value = ladder::vs_trapline_pc(report, path).unwrap_or(ratio);
    GoalCheck::new(
        top.vs_name(path),
        format!("floor gap: {}", path_words(path)),
        Amount::Ratio,
        value,
        Some(range),
        VS_TRAPLINE_PC_GOAL,
    )
}

/// What the exit profile adds per user exit, as a share of the premium.
fn stat_overhead(report: &Report) -> Option<GoalCheck> {
    let user = user_exit_pair(report, TRAPLINE_VMM).0;
    let on = Spread::gross(report, TRAPLINE_VMM, user)?;
    let off = Spread::gross(report, names::UNPROFILED_VMM, user)?;
    let (share, range) = on.minus(off).over(premium(report, TRAPLINE_VMM)?)?;
    let value = report
        .derived(STAT_OVERHEAD_SHARE)
        .map_or(share, |d| d.value);
    GoalCheck::new(
        STAT_OVERHEAD_SHARE,
        "--stat profile overhead / premium",
        Amount::Percent,
        value,
        Some(range),
        STAT_OVERHEAD_SHARE_GOAL,
    )
}

/// The footprint values (medians over fresh processes; no spread kept).
fn footprint(report: &Report) -> Vec<GoalCheck> {
    FOOTPRINT_GOALS
        .iter()
        .filter_map(|g| footprint_check(report, g))
        .collect()
}

/// The footprint value `g` against its goal, when the report has it in
/// its unit and finite.
pub fn footprint_check(report: &Report, g: &FootprintGoal) -> Option<GoalCheck> {
    let d = report
        .derived(g.name)
        .filter(|d| d.unit == g.unit.as_str())?;
    GoalCheck::new(
        g.name,
        g.what,
        Amount::Unit(g.shown_unit),
        d.value,
        None,
        g.goal,
    )
}

/// Every headline value the report has, in a fixed order.
pub fn goal_checks(report: &Report) -> Vec<GoalCheck> {
    let mut out: Vec<GoalCheck> = [premium_vs_raw_kvm(report), own_cycles_per_exit(report)]
        .into_iter()
        .flatten()
        .collect();
    out.extend(
        ladder::for_report(report)
            .kernel_paths
            .iter()
            .filter_map(|p| floor_gap(report, p)),
    );
    out.extend(stat_overhead(report));
    out.extend(footprint(report));
    out.extend(startfloor_check(report));
    out
}

/// Start-up against the start-up floor: [`startfloor::MULTIPLE`] against
/// [`startfloor::MULTIPLE_GOAL`].
pub fn startfloor_check(report: &Report) -> Option<GoalCheck> {
    let d = report
        .derived(startfloor::MULTIPLE)
        .filter(|d| d.unit == Unit::Ratio.as_str() && d.value.is_finite())?;
    let range = d.range.map(ValueRange::bounds);
    Some(GoalCheck {
        label: "start-up / the start-up floor's".to_string(),
        amount: Amount::Ratio,
        value: d.value,
        range,
        goal: startfloor::MULTIPLE_GOAL,
        verdict: Verdict::at_most(d.value, range, startfloor::MULTIPLE_GOAL),
        derived: Some(startfloor::MULTIPLE.to_string()),
    })
}

impl Report {
    /// Sets each derived value's goal and verdict (see [`goal_checks`]);
    /// [`Report::finish`] calls it, and a
    /// caller that adds values with a goal afterwards (the footprint) calls
    /// it again.
    pub fn judge_goals(&mut self) {
        let checks = goal_checks(self);
        for d in &mut self.derived {
            d.goal = checks
                .iter()
                .find(|c| c.derived.as_deref() == Some(d.name.as_str()))
                .map(|c| Goal {
                    at_most: c.goal,
                    verdict: c.verdict,
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_needs_the_whole_spread_on_one_side() {
        assert_eq!(Verdict::at_most(1.0, Some((0.9, 1.04)), 1.05), Verdict::Met);
        assert_eq!(
            Verdict::at_most(1.2, Some((1.1, 1.3)), 1.05),
            Verdict::Missed
        );
        assert_eq!(
            Verdict::at_most(1.0, Some((0.6, 1.6)), 1.05),
            Verdict::WithinSpread
        );
        assert_eq!(Verdict::at_most(3.5, None, 4.0), Verdict::Met);
        assert_eq!(Verdict::at_most(4.5, None, 4.0), Verdict::Missed);
    }

    #[test]
    fn a_ratio_carries_both_spreads() {
        let a = Spread {
            value: 100.0,
            spread: 10.0,
        };
        let b = Spread {
            value: 50.0,
            spread: 5.0,
        };
        let (r, (lo, hi)) = a.over(b).unwrap();
        assert_eq!(r, 2.0);
        assert!((lo - 90.0 / 55.0).abs() < 1e-12 && (hi - 110.0 / 45.0).abs() < 1e-12);
        let wide = Spread {
            value: 50.0,
            spread: 60.0,
        };
        assert_eq!(a.over(wide).unwrap().1 .1, f64::INFINITY);
        assert!(a
            .over(Spread {
                value: 0.0,
                spread: 1.0
            })
            .is_none());
    }

    #[test]
    fn amounts_are_written_with_their_unit_in_ascii() {
        assert_eq!(Amount::Ratio.show(1.013), "1.01x");
        assert_eq!(Amount::Ratio.range((0.61, 1.58)), "0.61..1.58x");
        assert_eq!(Amount::Ratio.bound(1.1), "1.10x");
        assert_eq!(Amount::Percent.show(0.042), "4.2 %");
        assert_eq!(Amount::Percent.range((-0.32, 3.48)), "-32..348 %");
        assert_eq!(Amount::Percent.bound(0.05), "5 %");
        assert_eq!(Amount::Cycles.show(399.0), "399 cyc");
        assert_eq!(Amount::Cycles.range((357.0, 1441.0)), "357..1,441");
        assert_eq!(Amount::Unit(Unit::MiB).bound(4.0), "4 MiB");
        assert_eq!(Amount::Unit(Unit::CpuMillis).show(1.554), "1.55 CPU-ms");
        assert_eq!(Amount::Ratio.range((0.5, f64::INFINITY)), "0.50..x");
    }
}
