//! Per-vCPU exit counters.
//!
//! Each vCPU owns one [`ExitCounters`] and is its only writer, so a counter
//! bump is a relaxed load and store (a plain `inc` on x86, no lock prefix);
//! other threads read a consistent-enough snapshot at any time.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::exit_kind::ExitKind;

/// One vCPU's counters. Written only by its vCPU thread.
#[derive(Debug, Default)]
pub struct ExitCounters {
    counts: [AtomicU64; ExitKind::COUNT],
}

impl ExitCounters {
    /// Count one event. Must only be called from the owning vCPU thread:
    /// the load/store pair is not an atomic increment, which is what keeps
    /// it free of a locked instruction.
    #[inline(always)]
    pub fn bump(&self, kind: ExitKind) {
        self.add(kind, 1);
    }

    /// Count `n` events (same single-writer rule as [`Self::bump`]).
    #[inline(always)]
    pub fn add(&self, kind: ExitKind, n: u64) {
        let c = &self.counts[kind as usize];
        c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
    }

    /// Read the current values.
    pub fn snapshot(&self) -> ExitSnapshot {
        ExitSnapshot {
            counts: std::array::from_fn(|i| self.counts[i].load(Relaxed)),
        }
    }
}

/// A copy of one vCPU's counters at a point in time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExitSnapshot {
    counts: [u64; ExitKind::COUNT],
}

impl ExitSnapshot {
    /// The count of one kind.
    pub fn get(&self, kind: ExitKind) -> u64 {
        self.counts[kind as usize]
    }

    /// Counts since `earlier`.
    pub fn since(&self, earlier: &ExitSnapshot) -> ExitSnapshot {
        ExitSnapshot {
            counts: std::array::from_fn(|i| self.counts[i].wrapping_sub(earlier.counts[i])),
        }
    }

    /// Sum of every kind that is an exit of its own.
    pub fn total_exits(&self) -> u64 {
        ExitKind::ALL
            .iter()
            .filter(|k| k.is_exit())
            .map(|k| self.get(*k))
            .sum()
    }

    /// Element-wise sum (for adding up vCPUs).
    pub fn plus(&self, other: &ExitSnapshot) -> ExitSnapshot {
        ExitSnapshot {
            counts: std::array::from_fn(|i| self.counts[i].wrapping_add(other.counts[i])),
        }
    }

    /// The same counts with `n` fewer of `kind` (never below zero): takes
    /// a known access that is not part of what was timed out of a window.
    pub fn without(&self, kind: ExitKind, n: u64) -> ExitSnapshot {
        let mut s = *self;
        s.counts[kind as usize] = s.counts[kind as usize].saturating_sub(n);
        s
    }

    /// The same counts with `kind`'s set to `count` (building a snapshot
    /// from saved counts).
    pub fn with_count(&self, kind: ExitKind, count: u64) -> ExitSnapshot {
        let mut s = *self;
        s.counts[kind as usize] = count;
        s
    }

    /// (name, count) pairs of the non-zero kinds.
    pub fn nonzero(&self) -> Vec<(&'static str, u64)> {
        ExitKind::ALL
            .iter()
            .filter(|k| self.get(**k) != 0)
            .map(|k| (k.name(), self.get(*k)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_takes_some_of_one_kind_and_never_goes_below_zero() {
        let c = ExitCounters::default();
        c.bump(ExitKind::PioWrite);
        c.bump(ExitKind::PioWrite);
        c.bump(ExitKind::MmioRead);
        let s = c.snapshot();
        assert_eq!(s.without(ExitKind::PioWrite, 1).get(ExitKind::PioWrite), 1);
        assert_eq!(s.without(ExitKind::PioWrite, 5).get(ExitKind::PioWrite), 0);
        assert_eq!(s.without(ExitKind::PioWrite, 1).get(ExitKind::MmioRead), 1);
        assert_eq!(s.without(ExitKind::PioRead, 1), s);
    }

    #[test]
    fn counts_and_differences() {
        let c = ExitCounters::default();
        c.bump(ExitKind::PioWrite);
        let a = c.snapshot();
        c.bump(ExitKind::PioWrite);
        c.add(ExitKind::CoalescedEntries, 5);
        c.bump(ExitKind::UnmappedPio);
        let d = c.snapshot().since(&a);
        assert_eq!(d.get(ExitKind::PioWrite), 1);
        assert_eq!(d.get(ExitKind::CoalescedEntries), 5);
        assert_eq!(d.total_exits(), 1);
        assert_eq!(d.plus(&d).get(ExitKind::PioWrite), 2);
        assert_eq!(d.nonzero().len(), 3);
    }

    #[test]
    fn with_count_sets_one_kind() {
        let s = ExitSnapshot::default()
            .with_count(ExitKind::Hlt, 3)
            .with_count(ExitKind::Hlt, 7);
        assert_eq!(s.get(ExitKind::Hlt), 7);
        assert_eq!(s.nonzero(), [("hlt", 7)]);
        assert_eq!(s.with_count(ExitKind::Hlt, 0), ExitSnapshot::default());
    }
}
