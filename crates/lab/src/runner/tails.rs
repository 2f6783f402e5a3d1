//! Each scenario's tails across repeats: the recorded passes' histograms
//! (read back and checked by the ucall pump) merged into one, and the
//! report's summary of it (p50 … max, the stamp pair, the buckets).

use trapline_abi::{Histogram, TAILS_SAMPLE_CAP};
use trapline_report::{Tails, PERCENTILES};

use crate::pump::TailsBlock;

/// One scenario's recorded passes so far.
#[derive(Default)]
pub(crate) struct TailsAcc {
    hist: Histogram,
    /// Each repeat's stamp pair cost.
    stamps: Vec<u64>,
    repeats: u32,
    self_stamped: bool,
    /// The first reason a repeat's pass was not taken.
    error: Option<String>,
}

impl TailsAcc {
    /// Takes one repeat's pass, whose final timed batch had `final_n`
    /// iterations; `block` is `None` when the guest sent none. Returns the
    /// iterations the pass made (the host's counters include them).
    pub(crate) fn absorb(
        &mut self,
        block: Option<&TailsBlock>,
        final_n: u64,
        self_stamped: bool,
    ) -> u64 {
        self.self_stamped = self_stamped;
        let Some(b) = block else {
            self.error
                .get_or_insert_with(|| "the probe sent no recorded pass".into());
            return 0;
        };
        let want = final_n.min(TAILS_SAMPLE_CAP);
        match &b.hist {
            Ok(_) if b.planned != want => {
                self.error.get_or_insert_with(|| {
                    format!(
                        "the recorded pass planned {} iterations, not min({final_n}, {TAILS_SAMPLE_CAP})",
                        b.planned
                    )
                });
            }
            Ok(h) => {
                self.hist.merge(h);
                self.stamps.push(b.stamp);
                self.repeats += 1;
            }
            Err(e) => {
                self.error.get_or_insert_with(|| e.clone());
            }
        }
        b.planned
    }

    /// The report's summary; `None` when no repeat sent a pass and none
    /// failed (a peer, or a scenario that never ran).
    pub(crate) fn finish(self) -> Option<Tails> {
        if self.repeats == 0 && self.error.is_none() {
            return None;
        }
        let h = &self.hist;
        let q = |q: f64| h.quantile(q).unwrap_or(0);
        let mut stamps = self.stamps;
        stamps.sort_unstable();
        let [p50, p90, p99, p999] = PERCENTILES.map(|(_, p)| q(p));
        Some(Tails {
            count: h.count(),
            repeats: self.repeats,
            cap: TAILS_SAMPLE_CAP,
            self_stamped: self.self_stamped,
            min: h.min().unwrap_or(0),
            p50,
            p90,
            p99,
            p999,
            max: h.max().unwrap_or(0),
            mean: h.mean().unwrap_or(0.0),
            stamp: stamps.get(stamps.len() / 2).copied().unwrap_or(0),
            overhead_pct: None,
            error: self.error,
            buckets: h.buckets().map(|(lo, hi, n)| [lo, hi, n]).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(values: &[u64], planned: u64) -> TailsBlock {
        let mut h = Histogram::new();
        for &v in values {
            h.record(v);
        }
        TailsBlock {
            scenario: 4,
            planned,
            stamp: 60,
            hist: Ok(h),
        }
    }

    #[test]
    fn repeats_merge_into_one_distribution() {
        let mut acc = TailsAcc::default();
        let a: Vec<u64> = (0..100).map(|i| 20_000 + i).collect();
        let b: Vec<u64> = (0..100).map(|i| 21_000 + i).chain([90_000]).collect();
        assert_eq!(acc.absorb(Some(&block(&a, 100)), 100, false), 100);
        assert_eq!(acc.absorb(Some(&block(&b, 101)), 101, false), 101);
        let t = acc.finish().unwrap();
        assert_eq!((t.count, t.repeats, t.min, t.max), (201, 2, 20_000, 90_000));
        assert!(t.p50 <= t.p99 && t.p99 <= t.max, "{t:?}");
        assert_eq!(t.stamp, 60);
        assert_eq!(t.buckets.iter().map(|b| b[2]).sum::<u64>(), 201);
        assert!(t.error.is_none());
    }

    #[test]
    fn a_bad_or_missing_pass_is_that_scenarios_error() {
        let mut acc = TailsAcc::default();
        let bad = TailsBlock {
            scenario: 4,
            planned: 10,
            stamp: 0,
            hist: Err("the histogram block at 0xfffff000 is not inside guest RAM".into()),
        };
        assert_eq!(acc.absorb(Some(&bad), 10, false), 10);
        let t = acc.finish().unwrap();
        assert_eq!(t.count, 0);
        assert!(t.label().contains("not inside guest RAM"), "{}", t.label());

        // A pass that recorded other than min(final batch, cap).
        let mut acc = TailsAcc::default();
        acc.absorb(Some(&block(&[5, 6], 2)), 100, false);
        assert!(acc.finish().unwrap().error.unwrap().contains("planned 2"));

        let mut acc = TailsAcc::default();
        assert_eq!(acc.absorb(None, 100, false), 0);
        assert!(acc.finish().unwrap().error.is_some());

        // Nothing sent and nothing failed: no tails at all (a peer).
        assert!(TailsAcc::default().finish().is_none());
    }
}
