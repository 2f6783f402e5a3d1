//! Summary statistics over per-iteration cycle counts.

use serde::{Deserialize, Serialize};

/// Summary of a set of samples.
///
/// `mad` is the raw median absolute deviation, `median(|xᵢ − median|)`,
/// without the 1.4826 normal-consistency factor. `stddev` is the sample
/// standard deviation (divisor n − 1), 0 for a single sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Number of samples summarized.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Median absolute deviation from the median.
    pub mad: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
}

impl Stats {
    /// Summarizes `values`, ignoring non-finite ones; `None` when nothing
    /// finite is left.
    pub fn of(values: &[f64]) -> Option<Stats> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = median_sorted(&sorted)?;
        let mut deviations: Vec<f64> = sorted.iter().map(|v| (v - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        let mad = median_sorted(&deviations)?;
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            let ss: f64 = sorted.iter().map(|v| (v - mean) * (v - mean)).sum();
            (ss / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Stats {
            n,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            mad,
            mean,
            stddev,
        })
    }

    /// Whether `[min, max]` of the two overlap.
    pub fn overlaps(&self, other: &Stats) -> bool {
        self.min <= other.max && other.min <= self.max
    }
}

/// Median of an already sorted slice; `None` when empty.
pub fn median_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => sorted.get(n / 2).copied(),
        _ => Some((sorted.get(n / 2 - 1)? + sorted.get(n / 2)?) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn empty_is_none() {
        assert_eq!(Stats::of(&[]), None);
        assert_eq!(Stats::of(&[f64::NAN, f64::INFINITY]), None);
    }

    #[test]
    fn single_sample() {
        let s = Stats::of(&[42.0]).unwrap();
        assert_eq!(
            s,
            Stats {
                n: 1,
                median: 42.0,
                min: 42.0,
                max: 42.0,
                mad: 0.0,
                mean: 42.0,
                stddev: 0.0
            }
        );
    }

    #[test]
    fn odd_count() {
        // sorted 1 2 3 4 100: median 3; |dev| 2 1 0 1 97 -> sorted 0 1 1 2 97, MAD 1.
        // mean 110/5 = 22; ss = 441+400+361+324+6084 = 7610; var 7610/4 = 1902.5.
        let s = Stats::of(&[100.0, 3.0, 1.0, 4.0, 2.0]).unwrap();
        assert_eq!(s.n, 5);
        assert!(close(s.median, 3.0));
        assert!(close(s.mad, 1.0));
        assert!(close(s.min, 1.0));
        assert!(close(s.max, 100.0));
        assert!(close(s.mean, 22.0));
        assert!(close(s.stddev, 1902.5f64.sqrt()));
    }

    #[test]
    fn even_count() {
        // sorted 10 20 30 40: median 25; |dev| 15 5 5 15 -> MAD 10.
        // mean 25; ss = 225+25+25+225 = 500; var 500/3.
        let s = Stats::of(&[40.0, 10.0, 30.0, 20.0]).unwrap();
        assert!(close(s.median, 25.0));
        assert!(close(s.mad, 10.0));
        assert!(close(s.mean, 25.0));
        assert!(close(s.stddev, (500.0f64 / 3.0).sqrt()));
    }

    #[test]
    fn ignores_non_finite() {
        let s = Stats::of(&[1.0, f64::NAN, 3.0]).unwrap();
        assert_eq!(s.n, 2);
        assert!(close(s.median, 2.0));
    }

    #[test]
    fn overlap() {
        let a = Stats::of(&[1.0, 2.0]).unwrap();
        let b = Stats::of(&[2.0, 3.0]).unwrap();
        let c = Stats::of(&[2.5, 3.0]).unwrap();
        assert!(a.overlaps(&b));
        assert!(!a.overlaps(&c));
    }
}
