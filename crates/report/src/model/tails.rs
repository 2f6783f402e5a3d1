//! A scenario's tails: the distribution of its recorded pass.
//!
//! After a scenario's timed batches the probe runs a recorded pass of
//! min(final batch's iterations, the ABI's `TAILS_SAMPLE_CAP`) iterations,
//! each stamped alone with the probe's clock around its one operation and
//! counted in a log-linear histogram (64 buckets per power of two: a
//! reported percentile is within 0.78 % of the value it stands for); the
//! lab reads the histogram back and merges the repeats'. The values are
//! raw per-iteration cycles: each includes the stamp pair around it
//! ([`Tails::stamp`], an empty stamped iteration), which the net view
//! subtracts. irqfd's values are its injections' own latencies, taken from
//! the stamps its batch already has (no stamp pair to subtract).
//!
//! Only trapline's probe VMs record tails: a peer (QEMU, kvmtool) gives a
//! serial line only, so its rows carry none ("not recorded").

use serde::{Deserialize, Serialize};

/// The recording overhead's goal: the recorded pass's mean per iteration
/// at most this many percent above the timed batches' (the issue's "≤ 2 %
/// of a user exit's cost"). A scenario over it records a stamp-dominated
/// sample, and says so.
pub const OVERHEAD_GOAL_PCT: f64 = 2.0;

/// The percentiles every rendering shows, with their column names.
pub const PERCENTILES: [(&str, f64); 4] =
    [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)];

/// One scenario's recorded distribution, merged across repeats.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tails {
    /// Values recorded in all (each repeat: min(its final batch, `cap`)).
    pub count: u64,
    /// Repeats whose pass was read back.
    pub repeats: u32,
    /// The most a repeat records (the ABI's `TAILS_SAMPLE_CAP`).
    pub cap: u64,
    /// irqfd: each injection's latency from the batch's own stamps, not a
    /// stamped loop iteration.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub self_stamped: bool,
    /// Smallest value, exact.
    pub min: u64,
    /// Median (bucket midpoint, within 0.78 %).
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest value, exact.
    pub max: u64,
    /// Mean, exact.
    pub mean: f64,
    /// The stamp pair's own cost: the guest's median empty stamped
    /// iteration (noop with one iteration), the median over the repeats.
    pub stamp: u64,
    /// The recorded pass's mean over the timed batches' median, per
    /// iteration, in percent of the latter (filled by
    /// [`Report::finish`](crate::model::Report)); `None` without a median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_pct: Option<f64>,
    /// Why some repeat's pass could not be read back (the first reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The non-empty buckets: `[lowest value, highest value, count]`, in
    /// value order (the histogram itself, for charts and the noise verdict).
    #[serde(default)]
    pub buckets: Vec<[u64; 3]>,
}

impl Tails {
    /// The percentile values in [`PERCENTILES`] order, then the max.
    pub fn row(&self) -> [u64; 5] {
        [self.p50, self.p90, self.p99, self.p999, self.max]
    }

    /// [`Tails::row`] less the stamp pair (the net view); `None` for a
    /// self-stamped scenario, whose values carry no stamp pair.
    pub fn net_row(&self) -> Option<[i64; 5]> {
        (!self.self_stamped).then(|| {
            self.row().map(|v| {
                i64::try_from(v).unwrap_or(i64::MAX) - i64::try_from(self.stamp).unwrap_or(0)
            })
        })
    }

    /// Whether anything was recorded.
    pub fn recorded(&self) -> bool {
        self.count > 0
    }

    /// Fills [`Tails::overhead_pct`] against the timed batches' median
    /// cycles per iteration.
    pub fn set_overhead(&mut self, timed_median: Option<f64>) {
        self.overhead_pct = timed_median
            .filter(|m| *m > 0.0 && self.recorded())
            .map(|m| (self.mean - m) / m * 100.0);
    }

    /// Whether the recording overhead is within [`OVERHEAD_GOAL_PCT`].
    pub fn within_goal(&self) -> Option<bool> {
        self.overhead_pct.map(|p| p <= OVERHEAD_GOAL_PCT)
    }

    /// What the sample is, for people: `4,096 of every iteration's` …
    pub fn label(&self) -> String {
        if !self.recorded() {
            return match &self.error {
                Some(e) => format!("not recorded: {e}"),
                None => "not recorded".into(),
            };
        }
        let what = if self.self_stamped {
            "injection latencies from the batch's own stamps"
        } else {
            "stamped iterations"
        };
        let over = match (self.within_goal(), self.overhead_pct) {
            (Some(false), Some(p)) => format!(
                "; stamp-dominated sample: stamping adds {p:.0} % to this op (goal {OVERHEAD_GOAL_PCT:.0} %)"
            ),
            _ => String::new(),
        };
        format!(
            "{} {what} over {} repeat{} (at most {} each){over}",
            crate::fmt::grouped(self.count as f64),
            self.repeats,
            if self.repeats == 1 { "" } else { "s" },
            crate::fmt::grouped(self.cap as f64)
        )
    }
}
