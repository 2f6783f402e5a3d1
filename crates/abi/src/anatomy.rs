//! The anatomy of a user exit: where the run loop publishes its own clock
//! readings for the guest, and the arithmetic that splits one round trip
//! into its legs.
//!
//! Four stamps per access: the guest reads its clock just before the
//! access (`t0`) and just after it (`t3`); the VMM's run loop reads the
//! host's clock when KVM_RUN returns (`t1`) and just before it enters
//! KVM_RUN again (`t2`), and publishes both into this vCPU's slot of the
//! exit-stamp mailbox, a page of guest RAM at a fixed address
//! ([`ANATOMY_MAILBOX`] on x86, `VIRT_ANATOMY_MAILBOX` on arm64), before it
//! re-enters. With the guest's clock minus the host's (`offset`, read once
//! from KVM: x86's `KVM_VCPU_TSC_OFFSET`, arm64's timer-count register
//! beside a host counter read) the legs are:
//!
//! - exit: `t1 + offset - t0` (guest → VMM: the world switch out, KVM's
//!   exit handling, the return to user space);
//! - VMM: `t2 - t1` (the VMM's own handling);
//! - entry: `t3 - (t2 + offset)` (VMM → guest: the ioctl, KVM's entry
//!   path, the world switch in);
//!
//! and they add up to the round trip `t3 - t0` exactly, by construction;
//! what the lab checks is that the legs' medians add up to the probe's
//! ordinary per-iteration cost (see [`sum_check`]). The guest's probe does
//! the same arithmetic in C (`common/probe/anatomy.c`); the raw-KVM floor
//! does it here.

contract! {
ANATOMY_DEFINES;
/// Bytes of one vCPU's slot in the exit-stamp mailbox (one cache line,
/// so two vCPUs never share one); vCPU `i`'s slot is at `mailbox + i *
/// ANATOMY_SLOT_SIZE`.
ANATOMY_SLOT_SIZE: u64 = 64;
/// Offset in a slot of the publish count (u64): the run loop adds one each
/// time it publishes, after writing the stamps, so an access that made
/// exactly one exit sees it move by one.
ANATOMY_SEQ: u64 = 0;
/// Offset of `t1`: the host clock when KVM_RUN returned (u64).
ANATOMY_T1: u64 = 8;
/// Offset of `t2`: the host clock just before KVM_RUN is entered again.
ANATOMY_T2: u64 = 16;
/// Offset of the guest's clock minus the host's (u64, modulo 2^64).
ANATOMY_OFFSET: u64 = 24;
/// Offset of the offset's uncertainty, in clock ticks (u64).
ANATOMY_OFFSET_ERR: u64 = 32;
/// Offset of how the offset was found ([`ClockAlign`] as a u64).
ANATOMY_ALIGN: u64 = 40;
/// Bytes of the mailbox: one slot per vCPU trapline can give a machine.
ANATOMY_MAILBOX_LEN: u64 = ANATOMY_SLOT_SIZE * crate::MAX_VCPUS as u64;
/// Iterations of each path in the probe's anatomy pass.
ANATOMY_ITERATIONS: u64 = 2048;
/// The pass goes in chunks of this many accesses, each stamped chunk after
/// a timed batch of as many with the scenario's own loop, so the path's
/// ordinary cost per iteration is measured beside its legs, in the same
/// VM and moment (the median batch is the round trip the legs must add
/// up to). Small batches, many of them: on a loaded host a batch that a
/// preemption lands in is an outlier the median leaves out, where one long
/// batch would carry it.
ANATOMY_BATCH: u64 = 16;
/// The anatomy pass's histograms per path, in this order in the block the
/// guest hands over: exit, VMM, entry, round trip.
ANATOMY_LEGS: u64 = 4;
/// Marks an anatomy block the guest filled ("ANATOMY\0" in ASCII).
ANATOMY_MAGIC: u64 = 0x0059_4d4f_5441_4e41;
}

/// The table above, for [`crate::c_header`].
pub(crate) const C_DEFINES: &[(&str, u64)] = ANATOMY_DEFINES;

/// The head of the block an [`UcallKind::Anatomy`](crate::UcallKind)
/// points at; [`ANATOMY_LEGS`] `struct guest_hist`s follow it (exit, VMM,
/// entry, round trip), in the guest's clock ticks.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnatomyHeader {
    /// [`ANATOMY_MAGIC`].
    pub magic: u64,
    /// [`ClockAlign`] as the mailbox said.
    pub align: u64,
    /// The offset's uncertainty the mailbox said, in ticks.
    pub offset_err: u64,
    /// Accesses made.
    pub iterations: u64,
    /// Accesses whose legs were recorded (exactly one publish, in order).
    pub recorded: u64,
    /// Accesses with one publish whose stamps were out of order on the
    /// common time line (only their round trip is recorded).
    pub misordered: u64,
    /// Accesses with no publish or more than one (another exit came in
    /// between, or the mailbox is not armed): round trip only.
    pub stale: u64,
    /// The median over the pass's batches of the scenario's own loop of
    /// their cycles per iteration (0: the path has no such loop).
    pub batch: u64,
    /// The median cost of the two stamps themselves with nothing between
    /// them (exit and entry each hold about half of it: on a nested host
    /// the guest's clock read may itself trap to the outer hypervisor).
    pub stamp_cost: u64,
}

/// Bytes of an [`AnatomyHeader`].
pub const ANATOMY_HEADER_SIZE: usize = core::mem::size_of::<AnatomyHeader>();

/// The C side of [`AnatomyHeader`], for the generated header.
pub(crate) const C_STRUCTS: &str = "struct anatomy_header {\n    unsigned long long magic, align, offset_err, iterations, recorded, misordered, stale, batch, stamp_cost;\n} __attribute__((aligned(8)));\n_Static_assert(sizeof(struct anatomy_header) == 72, \"anatomy_header layout\");\n";

c_enum! {
    /// How the guest's clock was put on the host's time line (the
    /// mailbox's [`ANATOMY_ALIGN`] word).
    pub enum ClockAlign {
        /// Not aligned: only the round trip is meaningful.
        None = 0 "ANATOMY_ALIGN_NONE",
        /// x86: KVM_VCPU_TSC_OFFSET read with KVM_GET_DEVICE_ATTR (exact,
        /// where the guest's TSC runs at the host's rate).
        TscOffset = 1 "ANATOMY_ALIGN_TSC_OFFSET",
        /// arm64: the vCPU's KVM_REG_ARM_TIMER_CNT read between two host
        /// counter reads (error: half the bracket).
        TimerCount = 2 "ANATOMY_ALIGN_TIMER_COUNT",
    }
}

impl ClockAlign {
    /// Decode the mailbox word; unknown values are `None`.
    #[must_use]
    pub const fn from_raw(raw: u64) -> Self {
        match raw {
            1 => Self::TscOffset,
            2 => Self::TimerCount,
            _ => Self::None,
        }
    }

    /// How it is said in a report.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Self::None => "not aligned",
            Self::TscOffset => "KVM_VCPU_TSC_OFFSET",
            Self::TimerCount => "KVM_REG_ARM_TIMER_CNT beside CNTVCT_EL0",
        }
    }
}

/// One access's four stamps: `t0`/`t3` in the guest's clock, `t1`/`t2`
/// in the host's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamps {
    /// Guest, just before the access.
    pub t0: u64,
    /// Host, when KVM_RUN returned.
    pub t1: u64,
    /// Host, just before KVM_RUN was entered again.
    pub t2: u64,
    /// Guest, just after the access.
    pub t3: u64,
}

/// One access's legs, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Legs {
    /// Guest → VMM.
    pub exit: u64,
    /// The VMM's own handling.
    pub vmm: u64,
    /// VMM → guest.
    pub entry: u64,
    /// `t3 - t0`: the sum of the three.
    pub round: u64,
}

/// Split one access with the guest-minus-host `offset`; `None` when the
/// stamps are out of order on the common time line (a leg would be
/// negative: the offset is wrong, the guest's clock runs at another rate,
/// or the stamps are not of the same exit).
#[must_use]
pub const fn legs(s: Stamps, offset: u64) -> Option<Legs> {
    let g1 = s.t1.wrapping_add(offset);
    let g2 = s.t2.wrapping_add(offset);
    let exit = g1.wrapping_sub(s.t0) as i64;
    let vmm = s.t2.wrapping_sub(s.t1) as i64;
    let entry = s.t3.wrapping_sub(g2) as i64;
    if exit < 0 || vmm < 0 || entry < 0 {
        return None;
    }
    Some(Legs {
        exit: exit as u64,
        vmm: vmm as u64,
        entry: entry as u64,
        round: s.t3.wrapping_sub(s.t0),
    })
}

/// What the stamps alone say about the offset: every access bounds it
/// from below by `t0 - t1` (the exit leg is not negative) and from above
/// by `t3 - t2` (nor is the entry leg). Returns `(low, high)` as signed
/// offsets, or `None` with no stamps. The window is as wide as the
/// shortest exit leg plus the shortest entry leg, so it cannot replace
/// KVM's offset; it checks it (the offset must fall inside).
pub fn offset_window(stamps: impl IntoIterator<Item = Stamps>) -> Option<(i64, i64)> {
    let mut w: Option<(i64, i64)> = None;
    for s in stamps {
        let low = s.t0.wrapping_sub(s.t1) as i64;
        let high = s.t3.wrapping_sub(s.t2) as i64;
        w = Some(match w {
            None => (low, high),
            Some((l, h)) => (l.max(low), h.min(high)),
        });
    }
    w
}

/// The legs' medians against the probe's own round trip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SumCheck {
    /// exit + VMM + entry medians.
    pub sum: f64,
    /// The round trip they are checked against.
    pub round: f64,
    /// `(sum - round) / round`, in percent.
    pub gap_pct: f64,
}

impl SumCheck {
    /// Whether the gap is within `tolerance_pct` either way.
    #[must_use]
    pub fn within(&self, tolerance_pct: f64) -> bool {
        self.gap_pct.abs() <= tolerance_pct
    }
}

/// The tolerance the lab holds the sum to, in percent.
pub const ANATOMY_SUM_TOLERANCE_PCT: f64 = 5.0;

/// Check the legs' medians against `round` (the probe's per-iteration
/// cost of the same access); `None` when `round` is not positive.
#[must_use]
pub fn sum_check(exit: f64, vmm: f64, entry: f64, round: f64) -> Option<SumCheck> {
    if round.is_nan() || round <= 0.0 {
        return None;
    }
    let sum = exit + vmm + entry;
    Some(SumCheck {
        sum,
        round,
        gap_pct: (sum - round) / round * 100.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guest clock 1_000_000 ahead of the host's.
    const OFF: u64 = 1_000_000;

    fn stamps(t0: u64, exit: u64, vmm: u64, entry: u64) -> Stamps {
        let t1 = t0 + exit - OFF;
        let t2 = t1 + vmm;
        Stamps {
            t0,
            t1,
            t2,
            t3: t2 + OFF + entry,
        }
    }

    #[test]
    fn legs_come_back_from_synthetic_stamps_and_add_up() {
        let s = stamps(5_000_000, 9_000, 100, 8_000);
        let l = legs(s, OFF).unwrap();
        assert_eq!(
            l,
            Legs {
                exit: 9_000,
                vmm: 100,
                entry: 8_000,
                round: 17_100
            }
        );
        assert_eq!(l.exit + l.vmm + l.entry, l.round);
    }

    #[test]
    fn a_guest_clock_behind_the_hosts_wraps_and_still_splits() {
        // offset negative: the guest's clock started later than the host's.
        let neg = 0u64.wrapping_sub(7_777);
        let s = Stamps {
            t0: 100,
            t1: 100 + 7_777 + 50,
            t2: 100 + 7_777 + 60,
            t3: 100 + 60 + 40,
        };
        let l = legs(s, neg).unwrap();
        assert_eq!((l.exit, l.vmm, l.entry, l.round), (50, 10, 40, 100));
    }

    #[test]
    fn a_wrong_offset_makes_a_leg_negative_and_is_refused() {
        let s = stamps(5_000_000, 9_000, 100, 8_000);
        assert!(legs(s, OFF + 9_001).is_none(), "entry would be negative");
        assert!(legs(s, OFF - 9_001).is_none(), "exit would be negative");
        let backwards = Stamps { t2: s.t1 - 1, ..s };
        assert!(legs(backwards, OFF).is_none(), "t2 before t1");
    }

    #[test]
    fn the_window_holds_the_true_offset_and_is_as_wide_as_the_shortest_legs() {
        let all = [
            stamps(1_000_000, 9_000, 100, 8_000),
            stamps(2_000_000, 7_000, 90, 9_500),
            stamps(3_000_000, 8_000, 120, 6_000),
        ];
        let (low, high) = offset_window(all).unwrap();
        assert!(low <= OFF as i64 && OFF as i64 <= high);
        assert_eq!(low, OFF as i64 - 7_000);
        assert_eq!(high, OFF as i64 + 6_000);
        assert!(offset_window([]).is_none());
    }

    #[test]
    fn the_sum_check_reports_the_gap_both_ways() {
        let c = sum_check(9_000.0, 100.0, 8_000.0, 17_100.0).unwrap();
        assert_eq!(c.sum, 17_100.0);
        assert!(c.gap_pct.abs() < 1e-9 && c.within(ANATOMY_SUM_TOLERANCE_PCT));
        let c = sum_check(9_000.0, 100.0, 8_000.0, 18_500.0).unwrap();
        assert!((c.gap_pct - (-7.567_567)).abs() < 1e-3, "{c:?}");
        assert!(!c.within(ANATOMY_SUM_TOLERANCE_PCT));
        let c = sum_check(9_000.0, 100.0, 8_000.0, 16_500.0).unwrap();
        assert!(c.within(ANATOMY_SUM_TOLERANCE_PCT), "{c:?}");
        assert!(sum_check(1.0, 1.0, 1.0, 0.0).is_none());
    }

    #[test]
    fn the_mailbox_fits_every_vcpu_and_each_slot_holds_its_words() {
        const { assert!(ANATOMY_ALIGN + 8 <= ANATOMY_SLOT_SIZE) };
        assert_eq!(ANATOMY_MAILBOX_LEN, 4096);
        assert_eq!(ANATOMY_HEADER_SIZE, 72, "C_STRUCTS says 72");
        assert_eq!(ClockAlign::from_raw(1), ClockAlign::TscOffset);
        assert_eq!(ClockAlign::from_raw(99), ClockAlign::None);
    }
}
