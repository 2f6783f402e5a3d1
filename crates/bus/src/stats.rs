//! Per-vCPU exit counters.
//!
//! Each vCPU owns one [`ExitCounters`] and is its only writer, so a counter
//! bump is a relaxed load and store (a plain `inc` on x86, no lock prefix);
//! other threads read a consistent-enough snapshot at any time.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a vCPU exit was, for counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum ExitKind {
    /// KVM_EXIT_IO, IN.
    PioRead = 0,
    /// KVM_EXIT_IO, OUT.
    PioWrite,
    /// KVM_EXIT_MMIO, read.
    MmioRead,
    /// KVM_EXIT_MMIO, write.
    MmioWrite,
    /// KVM_EXIT_HLT.
    Hlt,
    /// KVM_RUN returned EINTR or KVM_EXIT_INTR (a kick).
    Interrupted,
    /// PIO read or write to an address with no device.
    UnmappedPio,
    /// MMIO read or write to an address with no device.
    UnmappedMmio,
    /// Entries drained from the coalesced MMIO/PIO ring.
    CoalescedEntries,
    /// OUTs served by the run loop's fast port, before any bus lookup (a
    /// run-loop option a machine extension may set; the lab's
    /// vmm-floor-pio measures the VMM's floor with it). Named `floor` in
    /// reports, as saved reports already spell it.
    FastPort,
    /// Malformed ucall messages.
    BadUcall,
    /// Any other exit.
    Other,
}

/// Number of [`ExitKind`] values.
pub const EXIT_KINDS: usize = ExitKind::Other as usize + 1;

impl ExitKind {
    /// Every kind, in index order.
    pub const ALL: [ExitKind; EXIT_KINDS] = [
        ExitKind::PioRead,
        ExitKind::PioWrite,
        ExitKind::MmioRead,
        ExitKind::MmioWrite,
        ExitKind::Hlt,
        ExitKind::Interrupted,
        ExitKind::UnmappedPio,
        ExitKind::UnmappedMmio,
        ExitKind::CoalescedEntries,
        ExitKind::FastPort,
        ExitKind::BadUcall,
        ExitKind::Other,
    ];

    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            ExitKind::PioRead => "pio-read",
            ExitKind::PioWrite => "pio-write",
            ExitKind::MmioRead => "mmio-read",
            ExitKind::MmioWrite => "mmio-write",
            ExitKind::Hlt => "hlt",
            ExitKind::Interrupted => "interrupted",
            ExitKind::UnmappedPio => "unmapped-pio",
            ExitKind::UnmappedMmio => "unmapped-mmio",
            ExitKind::CoalescedEntries => "coalesced-entries",
            ExitKind::FastPort => "floor",
            ExitKind::BadUcall => "bad-ucall",
            ExitKind::Other => "other",
        }
    }

    /// The kind whose [`Self::name`] is `name`, if any (reading a saved
    /// report back).
    pub fn from_name(name: &str) -> Option<ExitKind> {
        ExitKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether this kind is an exit of its own (as opposed to a count of
    /// something that happened inside another exit).
    pub fn is_exit(self) -> bool {
        !matches!(
            self,
            ExitKind::UnmappedPio
                | ExitKind::UnmappedMmio
                | ExitKind::CoalescedEntries
                | ExitKind::BadUcall
        )
    }
}

/// One vCPU's counters. Written only by its vCPU thread.
#[derive(Debug, Default)]
pub struct ExitCounters {
    counts: [AtomicU64; EXIT_KINDS],
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
    counts: [u64; EXIT_KINDS],
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

    #[test]
    fn names_read_back_to_their_kinds() {
        for k in ExitKind::ALL {
            assert_eq!(ExitKind::from_name(k.name()), Some(k));
        }
        assert_eq!(ExitKind::from_name("pio_write"), None);
        assert_eq!(ExitKind::from_name(""), None);
    }

    #[test]
    fn kinds_are_indexed_in_order() {
        for (i, k) in ExitKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
        }
    }
}
