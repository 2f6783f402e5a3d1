//! Log-linear histograms: fixed memory, bounded relative error.
//!
//! A value below [`HIST_SUB_COUNT`] has a bucket of its own (exact). Above
//! that, each power of two `[2^e, 2^(e+1))` is cut into [`HIST_SUB_COUNT`]
//! equal buckets, so a bucket is never wider than `1/HIST_SUB_COUNT` of its
//! lower bound. A value reported as its bucket's midpoint is therefore within
//! `1 / (2 * HIST_SUB_COUNT)` = 0.78 % of the value recorded (the lab's
//! bound is 2 %), and the whole `u64` range needs [`HIST_BUCKETS`] counters.
//!
//! The same arithmetic runs in three places: the guest's probe records into a
//! [`GuestHist`] in its own memory (C, `c/lib/hist.h`, from the constants the
//! generated header carries), trapline's run loop records its exit handling
//! (`--stat`), and the lab reads both back into a [`Histogram`]. Change a
//! constant here and all three follow.

use alloc::vec::Vec;

/// log2 of the buckets per power of two.
pub const HIST_SUB_BITS: u32 = 6;
/// Buckets per power of two (and the values recorded exactly: 0..HIST_SUB_COUNT).
pub const HIST_SUB_COUNT: u64 = 1 << HIST_SUB_BITS;
/// Buckets for the whole `u64` range: the exact ones, then one row of
/// `HIST_SUB_COUNT` per power of two from `2^HIST_SUB_BITS` to `2^63`.
pub const HIST_BUCKETS: usize = ((64 - HIST_SUB_BITS as usize) + 1) * HIST_SUB_COUNT as usize;
/// Marks a [`GuestHist`] the guest has initialised ("TRAPHIST" in ASCII).
pub const HIST_MAGIC: u64 = 0x5453_4948_5041_5254;

/// The bucket `value` is counted in.
#[must_use]
pub const fn hist_bucket(value: u64) -> usize {
    if value < HIST_SUB_COUNT {
        return value as usize;
    }
    let exp = 63 - value.leading_zeros(); // >= HIST_SUB_BITS
    let shift = exp - HIST_SUB_BITS;
    let sub = (value >> shift) & (HIST_SUB_COUNT - 1);
    ((shift as u64 + 1) * HIST_SUB_COUNT + sub) as usize
}

/// The smallest value counted in bucket `index` (`index < HIST_BUCKETS`).
#[must_use]
pub const fn hist_low(index: usize) -> u64 {
    let row = index as u64 / HIST_SUB_COUNT;
    let sub = index as u64 % HIST_SUB_COUNT;
    if row == 0 {
        return sub;
    }
    let shift = row - 1;
    (HIST_SUB_COUNT + sub) << shift
}

/// The largest value counted in bucket `index` (inclusive).
#[must_use]
pub const fn hist_high(index: usize) -> u64 {
    let row = index as u64 / HIST_SUB_COUNT;
    if row == 0 {
        return hist_low(index);
    }
    hist_low(index) + ((1u64 << (row - 1)) - 1)
}

/// The value a bucket stands for: its midpoint (within 0.78 % of any value in it).
#[must_use]
pub const fn hist_mid(index: usize) -> u64 {
    let low = hist_low(index);
    low + (hist_high(index) - low) / 2
}

/// How many buckets hold every value below `2^bits` (`bits` in
/// `HIST_SUB_BITS..=64`): a compact histogram that keeps only these (e.g.
/// `--stat`'s per-key ones, `u32` counters below 2^32 cycles) counts larger
/// values in its last bucket and converts with [`Histogram::from_bucket_counts`].
#[must_use]
pub const fn hist_buckets_below(bits: u32) -> usize {
    if bits >= 64 {
        return HIST_BUCKETS;
    }
    hist_bucket((1u64 << bits) - 1) + 1
}

/// A histogram as the guest keeps it in its own memory (`struct guest_hist`
/// in `c/lib/hist.h`; the generated header asserts the same size). The host
/// reads it back whole with [`Histogram::from_guest`].
#[repr(C)]
#[derive(Clone, Debug)]
pub struct GuestHist {
    /// [`HIST_MAGIC`] once the guest has cleared it.
    pub magic: u64,
    /// Values recorded.
    pub count: u64,
    /// Smallest value recorded (`u64::MAX` while empty).
    pub min: u64,
    /// Largest value recorded.
    pub max: u64,
    /// Sum of the values recorded (wraps only after 2^64 cycles).
    pub sum: u64,
    /// Per-bucket counts.
    pub counts: [u32; HIST_BUCKETS],
}

/// Size of a [`GuestHist`] in guest memory.
pub const GUEST_HIST_SIZE: usize = core::mem::size_of::<GuestHist>();

impl GuestHist {
    /// The block as the guest's memory holds it (little-endian, `#[repr(C)]`
    /// order), decoded without trusting it: [`Histogram::from_guest`] checks it.
    /// `None` unless `raw` is exactly [`GUEST_HIST_SIZE`] bytes.
    #[must_use]
    pub fn from_bytes(raw: &[u8]) -> Option<alloc::boxed::Box<Self>> {
        if raw.len() != GUEST_HIST_SIZE {
            return None;
        }
        let word = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&raw[i * 8..i * 8 + 8]);
            u64::from_le_bytes(b)
        };
        let mut g = alloc::boxed::Box::new(Self {
            magic: word(0),
            count: word(1),
            min: word(2),
            max: word(3),
            sum: word(4),
            counts: [0; HIST_BUCKETS],
        });
        for (c, b) in g.counts.iter_mut().zip(raw[40..].chunks_exact(4)) {
            *c = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Some(g)
    }
}

/// Why a guest's histogram could not be read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistError {
    /// The block lacks [`HIST_MAGIC`]: the guest never initialised it (or the address is wrong).
    NoMagic,
    /// The bucket counts do not add up to the count the guest claims.
    Inconsistent,
    /// Its min and max do not lie in its lowest and highest non-empty buckets.
    BadBounds,
}

impl core::fmt::Display for HistError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoMagic => f.write_str(
                "the guest's histogram lacks its magic (not initialised, or a wrong address)",
            ),
            Self::Inconsistent => {
                f.write_str("the guest's histogram counts do not add up to its total")
            }
            Self::BadBounds => f.write_str(
                "the guest's histogram min and max do not lie in its lowest and highest buckets",
            ),
        }
    }
}

/// A host-side histogram: counts per bucket plus exact count, min, max and sum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram ([`HIST_BUCKETS`] counters).
    #[must_use]
    pub fn new() -> Self {
        Self {
            counts: alloc::vec![0; HIST_BUCKETS],
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    /// Counts one value.
    pub fn record(&mut self, value: u64) {
        self.counts[hist_bucket(value)] += 1;
        self.count += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.sum += u128::from(value);
    }

    /// Adds every value `other` counted.
    pub fn merge(&mut self, other: &Self) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
    }

    /// The histogram a guest kept, checked: magic present, buckets adding up to its count.
    ///
    /// # Errors
    /// [`HistError`] when the block is not an initialised, consistent histogram
    /// (a hostile or broken guest: the host never trusts it further).
    pub fn from_guest(g: &GuestHist) -> Result<Self, HistError> {
        if g.magic != HIST_MAGIC {
            return Err(HistError::NoMagic);
        }
        let counts: Vec<u64> = g.counts.iter().map(|&c| u64::from(c)).collect();
        if counts.iter().sum::<u64>() != g.count {
            return Err(HistError::Inconsistent);
        }
        let (min, max) = if g.count == 0 {
            (u64::MAX, 0)
        } else {
            // A quantile is clamped to [min, max]: both must be where the
            // buckets say, or a hostile block could make the host's clamp panic.
            let lowest = counts.iter().position(|&c| c > 0);
            let highest = counts.iter().rposition(|&c| c > 0);
            match (lowest, highest) {
                (Some(lo), Some(hi)) if hist_bucket(g.min) == lo && hist_bucket(g.max) == hi => {
                    (g.min, g.max)
                }
                _ => return Err(HistError::BadBounds),
            }
        };
        Ok(Self {
            counts,
            count: g.count,
            min,
            max,
            sum: u128::from(g.sum),
        })
    }

    /// A histogram from the first buckets' counts (a compact histogram that
    /// kept fewer than [`HIST_BUCKETS`]) and its exact min, max and sum.
    ///
    /// # Errors
    /// [`HistError::Inconsistent`] when there are more than [`HIST_BUCKETS`]
    /// counts or they do not add up to `count`.
    pub fn from_bucket_counts(
        bucket_counts: impl IntoIterator<Item = u64>,
        count: u64,
        min: u64,
        max: u64,
        sum: u128,
    ) -> Result<Self, HistError> {
        let mut counts = alloc::vec![0; HIST_BUCKETS];
        let mut total = 0u64;
        for (i, c) in bucket_counts.into_iter().enumerate() {
            let slot = counts.get_mut(i).ok_or(HistError::Inconsistent)?;
            *slot = c;
            total = total.checked_add(c).ok_or(HistError::Inconsistent)?;
        }
        if total != count {
            return Err(HistError::Inconsistent);
        }
        let (min, max) = if count == 0 {
            (u64::MAX, 0)
        } else {
            (min, max)
        };
        Ok(Self {
            counts,
            count,
            min,
            max,
            sum,
        })
    }

    /// Values recorded.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest value recorded, exact (`None` while empty).
    #[must_use]
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest value recorded, exact (`None` while empty).
    #[must_use]
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// Mean of the values recorded, exact (`None` while empty).
    #[must_use]
    #[allow(clippy::cast_precision_loss)] // a mean of cycle counts: f64 is the answer's type
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The value at quantile `q` (0..=1): the midpoint of the bucket holding
    /// the `ceil(q * count)`-th smallest value, clamped to the exact min and
    /// max (so `quantile(1.0)` is the max). `None` while empty.
    #[must_use]
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
        // ceil(q * count) without std's float functions (this crate is no_std).
        let exact = q * self.count as f64;
        let floor = exact as u64;
        let rank = if (floor as f64) < exact {
            floor + 1
        } else {
            floor
        }
        .clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(hist_mid(i).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The non-empty buckets as (lowest value, highest value, count), in value order.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (hist_low(i), hist_high(i), c))
    }
}

/// The histogram constants as C `#define`s (the generated header's share).
pub(crate) const HIST_DEFINES: &[(&str, u64)] = &[
    ("HIST_SUB_BITS", HIST_SUB_BITS as u64),
    ("HIST_SUB_COUNT", HIST_SUB_COUNT),
    ("HIST_BUCKETS", HIST_BUCKETS as u64),
    ("HIST_MAGIC", HIST_MAGIC),
    ("GUEST_HIST_SIZE", GUEST_HIST_SIZE as u64),
];

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// xorshift64*: a fixed, seeded stream of values for the property tests.
    fn values(seed: u64, n: usize) -> impl Iterator<Item = u64> {
        let mut x = seed;
        (0..n).map(move |i| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
            // Spread over every magnitude, not only the top bits.
            r >> (i % 64)
        })
    }

    #[test]
    fn buckets_cover_u64_in_order_without_gaps() {
        assert_eq!(hist_low(0), 0);
        for i in 1..HIST_BUCKETS {
            assert_eq!(hist_low(i), hist_high(i - 1) + 1, "bucket {i}");
        }
        assert_eq!(hist_high(HIST_BUCKETS - 1), u64::MAX);
        assert_eq!(hist_bucket(u64::MAX), HIST_BUCKETS - 1);
    }

    #[test]
    fn every_value_falls_in_its_bucket_and_its_midpoint_is_within_the_bound() {
        let boundaries = (0..64).flat_map(|e| {
            let p = 1u64 << e;
            [p - 1, p, p + 1]
        });
        for v in values(0x9e37_79b9_7f4a_7c15, 200_000).chain(boundaries) {
            let i = hist_bucket(v);
            assert!(i < HIST_BUCKETS);
            assert!(hist_low(i) <= v && v <= hist_high(i), "{v} in bucket {i}");
            let mid = hist_mid(i);
            #[allow(clippy::cast_precision_loss)]
            let err = (mid as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(
                err <= 1.0 / (2.0 * HIST_SUB_COUNT as f64) + 1e-12,
                "{v}: midpoint {mid}, error {err}"
            );
            assert!(err <= 0.02);
        }
    }

    #[test]
    fn quantiles_are_within_the_bound_of_the_exact_order_statistics() {
        let mut sorted: std::vec::Vec<u64> =
            values(7, 50_000).map(|v| v % 10_000_000 + 1).collect();
        let mut h = Histogram::new();
        for &v in &sorted {
            h.record(v);
        }
        sorted.sort_unstable();
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )]
            let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            let exact = sorted[rank - 1];
            let got = h.quantile(q).unwrap();
            #[allow(clippy::cast_precision_loss)]
            let err = (got as f64 - exact as f64).abs() / exact as f64;
            assert!(err <= 0.02, "q {q}: {got} vs {exact}");
        }
        assert_eq!(h.quantile(1.0), h.max());
        assert_eq!(h.min(), sorted.first().copied());
    }

    #[test]
    fn merging_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for (i, v) in values(3, 10_000).enumerate() {
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
    }

    #[test]
    fn a_guest_block_is_checked_before_it_is_trusted() {
        // The block is ~15 KiB: keep it off the test thread's stack.
        let mut g = std::boxed::Box::new(GuestHist {
            magic: 0,
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            counts: [0; HIST_BUCKETS],
        });
        assert_eq!(Histogram::from_guest(&g), Err(HistError::NoMagic));
        g.magic = HIST_MAGIC;
        assert_eq!(Histogram::from_guest(&g).unwrap().count(), 0);
        g.counts[hist_bucket(1000)] = 2;
        g.count = 3;
        assert_eq!(Histogram::from_guest(&g), Err(HistError::Inconsistent));
        g.count = 2;
        g.min = 1000;
        g.max = 1001;
        g.sum = 2001;
        let h = Histogram::from_guest(&g).unwrap();
        assert_eq!((h.count(), h.min(), h.max()), (2, Some(1000), Some(1001)));
        // The bucket's midpoint (1003), clamped to what was recorded.
        assert_eq!(h.quantile(0.5), Some(1001));
    }

    #[test]
    fn a_block_whose_min_or_max_lies_outside_its_buckets_is_refused() {
        let mut g = std::boxed::Box::new(GuestHist {
            magic: HIST_MAGIC,
            count: 1,
            min: 500,
            max: 400, // min > max: a clamp on them would panic
            sum: 500,
            counts: [0; HIST_BUCKETS],
        });
        g.counts[hist_bucket(500)] = 1;
        assert_eq!(Histogram::from_guest(&g), Err(HistError::BadBounds));
        g.max = 500;
        assert!(Histogram::from_guest(&g).is_ok());
        g.min = 10;
        assert_eq!(Histogram::from_guest(&g), Err(HistError::BadBounds));
    }

    #[test]
    fn a_block_reads_back_from_its_bytes() {
        let mut raw = std::vec![0u8; GUEST_HIST_SIZE];
        raw[..8].copy_from_slice(&HIST_MAGIC.to_le_bytes());
        raw[8..16].copy_from_slice(&2u64.to_le_bytes());
        raw[16..24].copy_from_slice(&70u64.to_le_bytes());
        raw[24..32].copy_from_slice(&90u64.to_le_bytes());
        raw[32..40].copy_from_slice(&160u64.to_le_bytes());
        for v in [70u64, 90] {
            let o = 40 + 4 * hist_bucket(v);
            raw[o..o + 4].copy_from_slice(&1u32.to_le_bytes());
        }
        let g = GuestHist::from_bytes(&raw).unwrap();
        let h = Histogram::from_guest(&g).unwrap();
        assert_eq!((h.count(), h.min(), h.max()), (2, Some(70), Some(90)));
        assert!(GuestHist::from_bytes(&raw[1..]).is_none());
    }

    #[test]
    fn a_compact_histogram_converts_with_its_exact_min_max_and_sum() {
        assert_eq!(hist_buckets_below(64), HIST_BUCKETS);
        let n = hist_buckets_below(32);
        assert_eq!(hist_bucket(u64::from(u32::MAX)), n - 1);
        assert_eq!(hist_bucket(1 << 32), n);
        let mut all = Histogram::new();
        let mut compact = std::vec![0u64; n];
        for v in values(11, 5000).map(|v| v % 1_000_000) {
            all.record(v);
            compact[hist_bucket(v)] += 1;
        }
        let h = Histogram::from_bucket_counts(
            compact.iter().copied(),
            all.count(),
            all.min().unwrap(),
            all.max().unwrap(),
            all.sum,
        )
        .unwrap();
        assert_eq!(h, all);
        assert_eq!(
            Histogram::from_bucket_counts([1, 2], 4, 0, 1, 2),
            Err(HistError::Inconsistent)
        );
        let too_many = core::iter::repeat_n(0, HIST_BUCKETS + 1);
        assert_eq!(
            Histogram::from_bucket_counts(too_many, 0, 0, 0, 0),
            Err(HistError::Inconsistent)
        );
    }

    #[test]
    fn an_empty_histogram_has_no_quantiles() {
        let h = Histogram::new();
        assert_eq!(
            (h.quantile(0.5), h.min(), h.max(), h.mean()),
            (None, None, None, None)
        );
    }
}
