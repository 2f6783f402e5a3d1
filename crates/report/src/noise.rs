//! Noise a reader can see: whether a scenario's repeats say the host was
//! busy while it ran (a wide spread, or a few repeats far from the rest),
//! or that they fall into two clusters (bimodal: something changed between
//! VMs), and what to do about it — as hyperfine warns of outliers.
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
}

impl NoiseKind {
    /// `spread`, `outliers` or `bimodal`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoiseKind::Spread => "spread",
            NoiseKind::Outliers => "outliers",
            NoiseKind::Bimodal => "bimodal",
        }
    }

    /// What to do about it, in one sentence.
    pub fn advice(self) -> &'static str {
        match self {
            NoiseKind::Spread | NoiseKind::Outliers => {
                "the host was busy while it ran: re-run on a quiet host (nothing else running, \
                 load average near 0) or with more repeats (--repeat 10)"
            }
            NoiseKind::Bimodal => {
                "its repeats fall into two clusters, so something changed between VMs (CPU \
                 frequency, the CPU it ran on, a neighbour): pin the run to one CPU (taskset -c), \
                 fix the CPU frequency, and re-run with more repeats"
            }
        }
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

    #[test]
    fn every_kind_says_what_to_do() {
        for k in [NoiseKind::Spread, NoiseKind::Outliers, NoiseKind::Bimodal] {
            assert!(k.advice().contains("re-run"), "{k}");
        }
    }
}
