//! What a vCPU exit was: the one name the exit counters ([`crate::ExitCounters`])
//! count under and the exit profile ([`crate::ExitProfile`]) keys by.
//!
//! Each kind has two spellings, both printed and both kept as they were:
//! [`ExitKind::name`] (the counters' names, which saved reports carry) and
//! [`ExitKind::perf_name`] (`perf kvm stat`'s words, in `--stat`'s keys).

/// What a vCPU exit was, or what happened inside one.
///
/// The order is the counters' index order and the order `--stat` lists
/// kinds in: reads before writes, PIO before MMIO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum ExitKind {
    /// KVM_EXIT_IO, IN.
    PioRead = 0,
    /// KVM_EXIT_IO, OUT.
    PioWrite,
    /// KVM_EXIT_MMIO, read.
    MmioRead,
    /// KVM_EXIT_MMIO, write.
    MmioWrite,
    /// KVM_EXIT_HLT (only without the in-kernel irqchip).
    Hlt,
    /// KVM_RUN returned EINTR or KVM_EXIT_INTR (a kick).
    Interrupted,
    /// KVM_EXIT_SHUTDOWN (a triple fault). Keyed by the profile; the
    /// counters leave it out, since the vCPU's loop ends there.
    Shutdown,
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
    /// KVM_EXIT_HYPERCALL: an SMCCC call KVM forwards to user space (arm64,
    /// through its SMCCC filter).
    Hypercall,
    /// Any other exit (internal error, system event, …).
    Other,
}

impl ExitKind {
    /// How many kinds there are.
    pub const COUNT: usize = ExitKind::Other as usize + 1;

    /// Every kind, in index order.
    pub const ALL: [ExitKind; ExitKind::COUNT] = [
        ExitKind::PioRead,
        ExitKind::PioWrite,
        ExitKind::MmioRead,
        ExitKind::MmioWrite,
        ExitKind::Hlt,
        ExitKind::Interrupted,
        ExitKind::Shutdown,
        ExitKind::UnmappedPio,
        ExitKind::UnmappedMmio,
        ExitKind::CoalescedEntries,
        ExitKind::FastPort,
        ExitKind::BadUcall,
        ExitKind::Hypercall,
        ExitKind::Other,
    ];

    /// The counters' name for it, as reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            ExitKind::PioRead => "pio-read",
            ExitKind::PioWrite => "pio-write",
            ExitKind::MmioRead => "mmio-read",
            ExitKind::MmioWrite => "mmio-write",
            ExitKind::Hlt => "hlt",
            ExitKind::Interrupted => "interrupted",
            ExitKind::Shutdown => "shutdown",
            ExitKind::UnmappedPio => "unmapped-pio",
            ExitKind::UnmappedMmio => "unmapped-mmio",
            ExitKind::CoalescedEntries => "coalesced-entries",
            ExitKind::FastPort => "floor",
            ExitKind::BadUcall => "bad-ucall",
            ExitKind::Hypercall => "hypercall",
            ExitKind::Other => "other",
        }
    }

    /// The kind whose [`Self::name`] is `name`, if any (reading a saved
    /// report back).
    pub fn from_name(name: &str) -> Option<ExitKind> {
        ExitKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// `perf kvm stat`'s word for it, as `--stat` prints it. The kinds the
    /// profile never keys (counts of something inside an exit, the fast
    /// port) have words of their own in the same style.
    pub fn perf_name(self) -> &'static str {
        match self {
            ExitKind::PioRead => "PIN",
            ExitKind::PioWrite => "POUT",
            ExitKind::MmioRead => "R",
            ExitKind::MmioWrite => "W",
            ExitKind::Hlt => "HLT",
            ExitKind::Interrupted => "INTR",
            ExitKind::Shutdown => "SHUTDOWN",
            ExitKind::UnmappedPio => "UNMAPPED-PIO",
            ExitKind::UnmappedMmio => "UNMAPPED-MMIO",
            ExitKind::CoalescedEntries => "COALESCED",
            ExitKind::FastPort => "FLOOR",
            ExitKind::BadUcall => "BAD-UCALL",
            ExitKind::Hypercall => "HYPERCALL",
            ExitKind::Other => "OTHER",
        }
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

    /// Whether it happens at an address (a port or a GPA), which the
    /// profile then keys it by.
    pub fn has_address(self) -> bool {
        self.is_pio()
            || matches!(
                self,
                ExitKind::MmioRead | ExitKind::MmioWrite | ExitKind::UnmappedMmio
            )
    }

    /// Whether that address is a port (else a GPA).
    pub fn is_pio(self) -> bool {
        matches!(
            self,
            ExitKind::PioRead | ExitKind::PioWrite | ExitKind::UnmappedPio | ExitKind::FastPort
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(ExitKind::ALL.is_sorted());
    }

    #[test]
    fn every_spelling_is_distinct() {
        for (i, a) in ExitKind::ALL.iter().enumerate() {
            for b in &ExitKind::ALL[i + 1..] {
                assert_ne!(a.name(), b.name());
                assert_ne!(a.perf_name(), b.perf_name());
            }
        }
    }

    #[test]
    fn addresses_are_ports_or_gpas() {
        assert!(ExitKind::PioRead.has_address() && ExitKind::PioRead.is_pio());
        assert!(ExitKind::MmioWrite.has_address() && !ExitKind::MmioWrite.is_pio());
        assert!(!ExitKind::Hlt.has_address());
        assert!(!ExitKind::Shutdown.has_address());
        for k in ExitKind::ALL {
            assert!(!k.is_pio() || k.has_address(), "{k:?}");
        }
    }
}
