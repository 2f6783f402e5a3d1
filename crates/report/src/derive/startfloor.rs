//! trapline's start-up against the start-up floor: `trapline-start-floor`,
//! a program that does only what any KVM VMM must before its guest runs
//! (exec, /dev/kvm, the VM, its interrupt controller, guest RAM, one vCPU)
//! and prints the same footprint lines at four of trapline's marks. The
//! lab times both, interleaved, and keeps the floor's medians and
//! trapline's multiple of them as derived values; this module names them,
//! holds the goal, and reads them back for the views and the verdict.
//!
//! A span runs from one of the floor's marks to the next: trapline's span
//! is the sum of its own phases between the same two marks (see
//! [`super::startup::PHASES`]), taken per process before the median.

use crate::model::{Report, ValueRange, Verdict};
use crate::unit::Unit;

/// Prefix of the floor's median CPU time per span (unit [`Unit::Micros`]),
/// followed by the span's slug (the mark's, as [`super::startup::slug`]).
pub const CPU_PREFIX: &str = "vmm-startfloor:";
/// Prefix of the floor's median page faults per span ([`Unit::Count`]).
pub const FAULTS_PREFIX: &str = "vmm-startfloor-faults:";
/// Prefix of trapline's multiple of the floor per span ([`Unit::Ratio`]).
pub const MULTIPLE_PREFIX: &str = "vmm-startup-multiple:";
/// The floor's median CPU time from exec to its KVM_RUN (unit `ms`).
pub const FLOOR_CPU: &str = "vmm-startfloor-cpu-to-first-kvm-run";
/// The floor's median resident memory beyond guest RAM (unit `MiB`).
pub const FLOOR_RSS: &str = "vmm-startfloor-rss-beyond-guest";
/// trapline's CPU time to the first KVM_RUN over the floor's (unit `x`),
/// with the range the two medians' MADs allow.
pub const MULTIPLE: &str = "vmm-startup-multiple";
/// The goal for [`MULTIPLE`]: trapline's start within 1.3x of the floor.
pub const MULTIPLE_GOAL: f64 = 1.3;
/// The floor program's file name, beside the `trapline` executable.
pub const PROGRAM: &str = "trapline-start-floor";

/// Whether a derived value is one of the floor's (kept by
/// [`Report::finish`] like the footprint it is compared with).
pub fn is_floor_value(name: &str) -> bool {
    [
        CPU_PREFIX,
        FAULTS_PREFIX,
        MULTIPLE_PREFIX,
        FLOOR_CPU,
        FLOOR_RSS,
        MULTIPLE,
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// `trapline / floor` with the range their medians ± MADs allow.
pub fn multiple(trapline: (f64, f64), floor: (f64, f64)) -> Option<(f64, Option<ValueRange>)> {
    if !(floor.0 > 0.0 && trapline.0.is_finite()) {
        return None;
    }
    let range = ValueRange::over(
        ValueRange::around(trapline.0, trapline.1)?,
        ValueRange::around(floor.0, floor.1)?,
    );
    Some((trapline.0 / floor.0, range))
}

/// One span as a report holds it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SpanValue {
    /// The slug of the mark that ends it (`exec-to-main`, `vm`, …).
    pub span: String,
    /// The floor's median CPU time in it, µs.
    pub floor_us: f64,
    /// The floor's median page faults in it, when recorded.
    pub floor_faults: Option<f64>,
    /// trapline's multiple of it, when recorded.
    pub multiple: Option<f64>,
}

/// The spans a report holds, in the report's order.
pub fn spans(report: &Report) -> Vec<SpanValue> {
    let finite = |name: String, unit: Unit| {
        report
            .derived(&name)
            .filter(|d| d.unit == unit.as_str() && d.value.is_finite())
            .map(|d| d.value)
    };
    report
        .derived
        .iter()
        .filter_map(|d| {
            let span = d.name.strip_prefix(CPU_PREFIX)?;
            (d.unit == Unit::Micros.as_str() && d.value.is_finite()).then(|| SpanValue {
                span: span.to_string(),
                floor_us: d.value,
                floor_faults: finite(format!("{FAULTS_PREFIX}{span}"), Unit::Count),
                multiple: finite(format!("{MULTIPLE_PREFIX}{span}"), Unit::Ratio),
            })
        })
        .collect()
}

/// The whole comparison as a report holds it: the spans, then the totals.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// Span by span, in the floor's order.
    pub spans: Vec<SpanValue>,
    /// The floor's median CPU time to its KVM_RUN, ms.
    pub floor_cpu_ms: Option<f64>,
    /// The floor's median resident memory beyond guest RAM, MiB.
    pub floor_rss_mib: Option<f64>,
    /// trapline's multiple of the floor's total, with its verdict.
    pub multiple: Option<GoalValue>,
}

/// [`MULTIPLE`] with its range and verdict.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct GoalValue {
    /// The multiple.
    pub value: f64,
    /// The range the MADs allow, when known.
    pub range: Option<ValueRange>,
    /// Against [`MULTIPLE_GOAL`].
    pub verdict: Verdict,
}

/// The comparison, or `None` when the report holds no floor value.
pub fn comparison(report: &Report) -> Option<Comparison> {
    let value = |name: &str, unit: Unit| {
        report
            .derived(name)
            .filter(|d| d.unit == unit.as_str() && d.value.is_finite())
            .map(|d| d.value)
    };
    let c = Comparison {
        spans: spans(report),
        floor_cpu_ms: value(FLOOR_CPU, Unit::Millis),
        floor_rss_mib: value(FLOOR_RSS, Unit::MiB),
        // The verdict as judged once into the derived value
        // (`Report::judge_goals`, see `goals::startfloor_check`); a report
        // that was not judged gets the same rule here.
        multiple: report
            .derived(MULTIPLE)
            .filter(|d| d.unit == Unit::Ratio.as_str() && d.value.is_finite())
            .map(|d| GoalValue {
                value: d.value,
                range: d.range,
                verdict: d.goal.as_ref().map_or_else(
                    || Verdict::at_most(d.value, d.range.map(ValueRange::bounds), MULTIPLE_GOAL),
                    |g| g.verdict,
                ),
            }),
    };
    (!c.spans.is_empty() || c.floor_cpu_ms.is_some()).then_some(c)
}

/// Why a report with start-up phases has no floor to compare them with.
pub const NOT_MEASURED_WHY: &str = "not measured: no trapline-start-floor results in this run (the lab runs the floor program when it is beside the trapline executable: `cargo build --release` builds both)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Derived, HostInfo, ToolInfo};

    fn d(name: &str, value: f64, unit: Unit, range: Option<ValueRange>) -> Derived {
        Derived {
            name: name.to_string(),
            value,
            unit: unit.as_str().to_string(),
            formula: String::new(),
            note: None,
            range,
            goal: None,
        }
    }

    #[test]
    fn the_multiple_carries_both_spreads() {
        let (m, r) = multiple((1.5, 0.1), (1.0, 0.1)).unwrap();
        assert_eq!(m, 1.5);
        let r = r.unwrap();
        assert!((r.low - 1.4 / 1.1).abs() < 1e-12);
        assert!((r.high.unwrap() - 1.6 / 0.9).abs() < 1e-12);
        assert!(multiple((1.0, 0.0), (0.0, 0.0)).is_none());
        assert!(multiple((f64::NAN, 0.0), (1.0, 0.0)).is_none());
    }

    #[test]
    fn spans_and_the_verdict_come_from_the_derived_values() {
        let mut r = Report::new(
            ToolInfo::new("trapline", "0"),
            HostInfo::default(),
            Default::default(),
        );
        r.derived = vec![
            d("vmm-startfloor:exec-to-main", 300.0, Unit::Micros, None),
            d(
                "vmm-startfloor-faults:exec-to-main",
                25.0,
                Unit::Count,
                None,
            ),
            d("vmm-startup-multiple:exec-to-main", 1.2, Unit::Ratio, None),
            d("vmm-startfloor:vm", 400.0, Unit::Micros, None),
            d("vmm-startfloor:vcpus", f64::NAN, Unit::Micros, None),
            d(MULTIPLE, 1.9, Unit::Ratio, ValueRange::around(1.9, 0.2)),
        ];
        let s = spans(&r);
        assert_eq!(s.len(), 2, "a NaN span is left out");
        assert_eq!(s[0].floor_faults, Some(25.0));
        assert_eq!(s[0].multiple, Some(1.2));
        assert_eq!(s[1].multiple, None);
        let verdict = |r: &Report| comparison(r).unwrap().multiple.unwrap().verdict;
        assert_eq!(verdict(&r), Verdict::Missed);
        r.derived[5].range = ValueRange::around(1.4, 0.2);
        assert_eq!(verdict(&r), Verdict::WithinSpread);
        assert_eq!(
            super::super::goals::startfloor_check(&r).unwrap().verdict,
            Verdict::WithinSpread
        );
        assert!(is_floor_value("vmm-startfloor:vm"));
        assert!(is_floor_value(MULTIPLE));
        assert!(!is_floor_value("vmm-startup:vm"));
    }
}
