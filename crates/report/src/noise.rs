//! Noise a reader can see: whether a scenario's repeats say the host was
//! busy while it ran (a wide spread, or a few repeats far from the rest),
//! or that they fall into two clusters (bimodal: something changed between
//! VMs), and what to do about it — as hyperfine warns of outliers.
//!
//! Within one VM, the recorded distribution (a scenario's tails) adds two
//! more: two modes and a heavy tail ([`assess_tails`]).
//!
//! Pure arithmetic over one scenario's per-repeat values; the model
//! stores the flags ([`crate::model::ScenarioResult::noise`]) so every
//! format shows the same ones.

use serde::{Deserialize, Serialize};

use crate::stats::{median_sorted, Stats};

/// A scenario is noisy when its MAD is more than this share of its median.
pub const NOISY_MAD_SHARE: f64 = 0.05;
/// A repeat is an outlier when it is further from the median than this
/// many MADs…
pub const OUTLIER_MADS: f64 = 5.0;
/// …and further than this share of the median (a MAD of zero would
/// otherwise make any difference an outlier).
pub const OUTLIER_SHARE: f64 = 0.10;
/// Two clusters of repeats are bimodal when the gap between them is more
/// than this many times the wider cluster's own range…
pub const BIMODAL_GAP_OVER_CLUSTER: f64 = 3.0;
/// …and more than this share of the median.
pub const BIMODAL_GAP_SHARE: f64 = 0.10;
/// Fewer repeats than this say nothing about noise.
pub const MIN_REPEATS: usize = 3;
/// Each cluster of a bimodal split has at least this many repeats.
const MIN_CLUSTER: usize = 2;

/// What kind of noise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseKind {
    /// The MAD is a large share of the median: every repeat moved.
    Spread,
    /// A few repeats are far from the rest (the min–max range is wide
    /// while the MAD is not).
    Outliers,
    /// The repeats fall into two clusters.
    Bimodal,
    /// The recorded distribution (its tails) has two modes: a second peak
    /// of at least [`MODE_SHARE`] of the values, at least [`MODE_GAP`] away
    /// from the main one, with a valley under half the smaller peak between.
    #[serde(rename = "two-modes")]
    TwoModes,
    /// The recorded distribution's p99 is at least [`HEAVY_TAIL_RATIO`]
    /// times its p50: the slowest 1 % cost far more than the typical one.
    #[serde(rename = "heavy-tail")]
    HeavyTail,
}

impl NoiseKind {
    /// `spread`, `outliers` or `bimodal`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoiseKind::Spread => "spread",
            NoiseKind::Outliers => "outliers",
            NoiseKind::Bimodal => "bimodal",
            NoiseKind::TwoModes => "two-modes",
            NoiseKind::HeavyTail => "heavy-tail",
        }
    }

    /// What to do about it, in one sentence.
    pub fn advice(self) -> &'static str {
        match self {
            NoiseKind::Spread | NoiseKind::Outliers => {
                "the host was busy while it ran: re-run on a quiet host (nothing else running, \
                 load average near 0) or with more repeats (--repeat 10)"
            }
            NoiseKind::TwoModes => {
                "its iterations fall into two groups within one VM (a slow path some take, \
                 or the host preempting the vCPU): see its histogram (--view tails, HTML), \
                 and re-run pinned (taskset -c) on a quiet host"
            }
            NoiseKind::HeavyTail => {
                "a few iterations are far slower than the rest (interrupts, preemption, the \
                 outer hypervisor on a nested host): compare its p99 with the p50 and re-run \
                 on a quiet host"
            }
            NoiseKind::Bimodal => {
                "its repeats fall into two clusters, so something changed between VMs (CPU \
                 frequency, the CPU it ran on, a neighbour): pin the run to one CPU (taskset -c), \
                 fix the CPU frequency, and re-run with more repeats"
            }
        }
    }
}

impl NoiseKind {
    /// Whether it is about one VM's distribution (its tails), not the repeats.
    pub fn is_shape(self) -> bool {
        matches!(self, NoiseKind::TwoModes | NoiseKind::HeavyTail)
    }
}

impl std::fmt::Display for NoiseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding about a scenario's repeats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoiseFlag {
    /// What kind.
    pub kind: NoiseKind,
    /// The numbers behind it, short: `MAD 12 % of the median`, `1 of 5
    /// repeats > 5 MADs off (max 712,345)`, `2 + 3 repeats around 1,020
    /// and 1,510`.
    pub detail: String,
}

impl NoiseFlag {
    /// `kind: detail`.
    pub fn text(&self) -> String {
        format!("{}: {}", self.kind, self.detail)
    }
}

/// A cycles value in a detail: whole numbers grouped.
fn amount(v: f64) -> String {
    crate::fmt::cycles(v)
}

/// The flags for one scenario's per-repeat values (cycles per iteration);
/// empty when they look clean or are too few to tell. A bimodal split is
/// reported instead of the outliers it would also produce.
pub fn assess(values: &[f64]) -> Vec<NoiseFlag> {
    let Some(stats) = Stats::of(values) else {
        return Vec::new();
    };
    if stats.n < MIN_REPEATS || stats.median <= 0.0 {
        return Vec::new();
    }
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let mut out = Vec::new();
    let share = stats.mad / stats.median;
    if share > NOISY_MAD_SHARE {
        out.push(NoiseFlag {
            kind: NoiseKind::Spread,
            detail: format!(
                "MAD {:.0} % of the median (over {:.0} % is noisy)",
                share * 100.0,
                NOISY_MAD_SHARE * 100.0
            ),
        });
    }
    if let Some((low, high)) = bimodal_split(&sorted, stats.median) {
        let centre = |c: &[f64]| median_sorted(c).unwrap_or(f64::NAN);
        out.push(NoiseFlag {
            kind: NoiseKind::Bimodal,
            detail: format!(
                "{} + {} repeats around {} and {} cycles",
                low.len(),
                high.len(),
                amount(centre(low)),
                amount(centre(high))
            ),
        });
        return out;
    }
    let far = (stats.mad * OUTLIER_MADS).max(stats.median * OUTLIER_SHARE);
    let outliers: Vec<f64> = sorted
        .iter()
        .copied()
        .filter(|v| (v - stats.median).abs() > far)
        .collect();
    if !outliers.is_empty() {
        let shown: Vec<String> = outliers.iter().map(|v| amount(*v)).collect();
        out.push(NoiseFlag {
            kind: NoiseKind::Outliers,
            detail: format!(
                "{} of {} repeats far from the median of {} ({}; min–max spans {:.0} % of it)",
                outliers.len(),
                stats.n,
                amount(stats.median),
                shown.join(", "),
                (stats.max - stats.min) / stats.median * 100.0
            ),
        });
    }
    out
}

/// A second mode holds at least this share of the recorded values.
pub const MODE_SHARE: f64 = 0.05;
/// …and its peak is at least this factor away from the main one (20 %).
pub const MODE_GAP: f64 = 1.2;
/// Bins per power of two the distribution is smoothed into before its
/// modes are looked for (each about 9 % wide).
const MODE_BINS_PER_OCTAVE: f64 = 8.0;
/// A distribution has a heavy tail when its p99 is at least this many
/// times its p50.
pub const HEAVY_TAIL_RATIO: f64 = 2.0;
/// Fewer recorded values than this say nothing about a distribution's shape.
pub const MIN_TAIL_VALUES: u64 = 100;

/// The flags a scenario's recorded distribution raises: two modes, a
/// heavy tail (definitions at [`NoiseKind::TwoModes`] and
/// [`NoiseKind::HeavyTail`]); empty with too few values.
pub fn assess_tails(t: &crate::model::tails::Tails) -> Vec<NoiseFlag> {
    let mut out = Vec::new();
    if t.count < MIN_TAIL_VALUES || t.p50 == 0 {
        return out;
    }
    if let Some((main, second, share)) = two_modes(&t.buckets, t.count) {
        out.push(NoiseFlag {
            kind: NoiseKind::TwoModes,
            detail: format!(
                "peaks near {} and {} cycles, the second holding {:.0} % of {} values",
                amount(main),
                amount(second),
                share * 100.0,
                crate::fmt::grouped(t.count as f64)
            ),
        });
    }
    let ratio = t.p99 as f64 / t.p50 as f64;
    if ratio >= HEAVY_TAIL_RATIO {
        out.push(NoiseFlag {
            kind: NoiseKind::HeavyTail,
            detail: format!(
                "p99 {} is {ratio:.1}x the p50 {} (max {})",
                amount(t.p99 as f64),
                amount(t.p50 as f64),
                amount(t.max as f64)
            ),
        });
    }
    out
}

/// The main and second peaks (bin centres, cycles) and the second's share,
/// when the buckets smoothed into [`MODE_BINS_PER_OCTAVE`] bins show two modes.
fn two_modes(buckets: &[[u64; 3]], count: u64) -> Option<(f64, f64, f64)> {
    use std::collections::BTreeMap;
    let mut bins: BTreeMap<i64, u64> = BTreeMap::new();
    for [low, high, n] in buckets {
        let mid = (*low as f64 + *high as f64) / 2.0;
        let bin = (mid.max(1.0).log2() * MODE_BINS_PER_OCTAVE).floor() as i64;
        *bins.entry(bin).or_default() += n;
    }
    let at = |b: i64| bins.get(&b).copied().unwrap_or(0);
    // A peak's mass: its bin and its two neighbours.
    let mass = |b: i64| at(b - 1) + at(b) + at(b + 1);
    let peaks: Vec<i64> = bins
        .keys()
        .copied()
        .filter(|&b| at(b) > at(b - 1) && at(b) >= at(b + 1))
        .collect();
    let main = *peaks.iter().max_by_key(|&&b| (at(b), -b))?;
    let min_gap = (MODE_GAP.log2() * MODE_BINS_PER_OCTAVE).ceil() as i64;
    let second = peaks
        .iter()
        .copied()
        .filter(|&b| (b - main).abs() >= min_gap)
        .filter(|&b| mass(b) as f64 >= MODE_SHARE * count as f64)
        .filter(|&b| {
            let (lo, hi) = (b.min(main), b.max(main));
            let valley = (lo + 1..hi).map(at).min().unwrap_or(0);
            (valley as f64) < 0.5 * at(b).min(at(main)) as f64
        })
        .max_by_key(|&b| at(b))?;
    let centre = |b: i64| 2f64.powf((b as f64 + 0.5) / MODE_BINS_PER_OCTAVE);
    Some((
        centre(main),
        centre(second),
        mass(second) as f64 / count as f64,
    ))
}

/// The two clusters when sorted `values` split at their widest gap into
/// two groups of at least [`MIN_CLUSTER`] each, the gap far wider than
/// either group's own range.
fn bimodal_split(sorted: &[f64], median: f64) -> Option<(&[f64], &[f64])> {
    if sorted.len() < 2 * MIN_CLUSTER {
        return None;
    }
    let (at, gap) = sorted
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, w[1] - w[0]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (low, high) = sorted.split_at(at);
    if low.len() < MIN_CLUSTER || high.len() < MIN_CLUSTER {
        return None;
    }
    let range = |c: &[f64]| c.last().copied().unwrap_or(0.0) - c.first().copied().unwrap_or(0.0);
    let widest = range(low).max(range(high));
    (gap > widest * BIMODAL_GAP_OVER_CLUSTER && gap > median * BIMODAL_GAP_SHARE)
        .then_some((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(values: &[f64]) -> Vec<NoiseKind> {
        assess(values).into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn clean_repeats_have_no_flag() {
        assert!(kinds(&[1000.0, 1010.0, 990.0, 1020.0, 980.0]).is_empty());
        // Identical repeats: a MAD of zero is not noise.
        assert!(kinds(&[500.0; 5]).is_empty());
    }

    #[test]
    fn too_few_repeats_say_nothing() {
        assert!(kinds(&[100.0, 900.0]).is_empty());
        assert!(kinds(&[]).is_empty());
    }

    #[test]
    fn one_slow_repeat_is_an_outlier() {
        let flags = assess(&[9000.0, 9100.0, 8900.0, 9050.0, 700_000.0]);
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(flags[0].kind, NoiseKind::Outliers);
        assert!(flags[0].detail.starts_with("1 of 5 repeats"), "{flags:?}");
        assert!(flags[0].detail.contains("700,000"), "{flags:?}");
        // Small wobbles under 10 % of the median are no outliers, even
        // with a tiny MAD.
        assert!(kinds(&[1000.0, 1000.0, 1000.0, 1000.0, 1080.0]).is_empty());
    }

    #[test]
    fn a_wide_spread_is_noise() {
        assert_eq!(
            kinds(&[1000.0, 1200.0, 800.0, 1300.0, 700.0]),
            [NoiseKind::Spread]
        );
    }

    #[test]
    fn two_clusters_are_bimodal() {
        let flags = assess(&[1000.0, 1010.0, 1500.0, 1510.0, 1520.0]);
        let k: Vec<NoiseKind> = flags.iter().map(|f| f.kind).collect();
        assert!(k.contains(&NoiseKind::Bimodal), "{flags:?}");
        assert!(!k.contains(&NoiseKind::Outliers), "{flags:?}");
        let b = flags.iter().find(|f| f.kind == NoiseKind::Bimodal).unwrap();
        assert_eq!(b.detail, "2 + 3 repeats around 1,005 and 1,510 cycles");
        // One far repeat is an outlier, not a cluster.
        assert!(!kinds(&[1000.0, 1010.0, 1005.0, 1008.0, 1500.0]).contains(&NoiseKind::Bimodal));
        // Evenly spread repeats have no gap wider than their clusters.
        assert!(!kinds(&[1000.0, 1100.0, 1200.0, 1300.0, 1400.0]).contains(&NoiseKind::Bimodal));
    }

    fn tails(values: &[(u64, u64)]) -> crate::model::tails::Tails {
        // Buckets one value wide: enough for the shape tests.
        let count = values.iter().map(|v| v.1).sum();
        let mut sorted: Vec<u64> = values
            .iter()
            .flat_map(|&(v, n)| std::iter::repeat_n(v, n as usize))
            .collect();
        sorted.sort_unstable();
        let q = |q: f64| sorted[((q * count as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
        crate::model::tails::Tails {
            count,
            p50: q(0.5),
            p99: q(0.99),
            max: *sorted.last().unwrap(),
            buckets: values.iter().map(|&(v, n)| [v, v, n]).collect(),
            ..Default::default()
        }
    }

    fn tail_kinds(values: &[(u64, u64)]) -> Vec<NoiseKind> {
        assess_tails(&tails(values))
            .into_iter()
            .map(|f| f.kind)
            .collect()
    }

    #[test]
    fn a_narrow_distribution_raises_no_flag() {
        assert!(tail_kinds(&[(990, 100), (1000, 800), (1010, 95), (1500, 5)]).is_empty());
        // Too few values say nothing.
        assert!(tail_kinds(&[(1000, 10), (9000, 10)]).is_empty());
    }

    #[test]
    fn a_second_peak_is_two_modes() {
        let flags = assess_tails(&tails(&[(1000, 700), (1010, 100), (2000, 200)]));
        let b = flags
            .iter()
            .find(|f| f.kind == NoiseKind::TwoModes)
            .expect("two modes");
        assert!(b.detail.contains("holding 20 %"), "{flags:?}");
        // A shoulder within 20 % of the main peak is one mode.
        assert!(!tail_kinds(&[(1000, 700), (1100, 300)]).contains(&NoiseKind::TwoModes));
        // A second peak with under 5 % of the values is a tail, not a mode.
        assert!(!tail_kinds(&[(1000, 970), (2000, 30)]).contains(&NoiseKind::TwoModes));
    }

    #[test]
    fn a_slow_percent_is_a_heavy_tail() {
        assert!(tail_kinds(&[(1000, 980), (5000, 20)]).contains(&NoiseKind::HeavyTail));
        assert!(!tail_kinds(&[(1000, 995), (5000, 5)]).contains(&NoiseKind::HeavyTail));
    }

    #[test]
    fn every_kind_says_what_to_do() {
        for k in [
            NoiseKind::Spread,
            NoiseKind::Outliers,
            NoiseKind::Bimodal,
            NoiseKind::TwoModes,
            NoiseKind::HeavyTail,
        ] {
            assert!(k.advice().contains("re-run"), "{k}");
        }
    }
}
