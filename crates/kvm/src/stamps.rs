//! The exit-stamp mailbox (the anatomy of a user exit, see
//! `trapline_abi::ANATOMY_SLOT_SIZE`): when the lab arms it, the run loop
//! reads the host's clock when KVM_RUN returns (`t1`) and just before it
//! enters KVM_RUN again (`t2`), and writes both into this vCPU's slot in
//! guest RAM before re-entering, so the guest can split its own round
//! trip into exit, VMM and entry legs.
//!
//! Unarmed it costs the run loop one predictable branch per exit on a
//! local `Option`. Armed: two clock reads and four plain stores into a
//! cache line of guest RAM only this vCPU writes (no lock, allocation or
//! log). The guest reads the slot after KVM_RUN has re-entered it; the
//! entry is a full barrier between the two, so plain stores are enough.

use kvm_ioctls::{VcpuExit, VcpuFd};
use trapline_abi::{self as abi, ClockAlign};
use vm_memory::{GuestAddress, GuestMemoryBackend, GuestMemoryMmap};

use crate::arch;

/// What arms a vCPU's slot: the mailbox's guest-physical address and the
/// clock offset KVM gives for that vCPU, read on the thread that builds
/// the machine (before the vCPU thread's seccomp filter, which allows no
/// attribute reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StampMailbox {
    gpa: u64,
    offset: u64,
    err: u64,
    align: ClockAlign,
}

impl StampMailbox {
    /// The mailbox at `gpa`, with `vcpu`'s clock offset ("not aligned"
    /// when KVM gives none).
    pub fn new(vcpu: &VcpuFd, gpa: u64) -> Self {
        let (offset, err, align) =
            arch::clock_offset(vcpu).unwrap_or((0, u64::MAX, ClockAlign::None));
        Self {
            gpa,
            offset,
            err,
            align,
        }
    }
}

/// One vCPU's armed slot.
pub(crate) struct ExitStamps {
    /// The slot's first byte in the host's mapping of guest RAM (64-byte
    /// aligned, inside one region: checked when armed).
    slot: *mut u64,
    /// Publishes so far.
    seq: u64,
    /// When the last KVM_RUN returned.
    t1: u64,
}

impl ExitStamps {
    /// Arm vCPU `index`'s slot of `mailbox` and write its clock offset
    /// into it. `None` when the slot is not in RAM.
    pub(crate) fn arm(
        memory: &GuestMemoryMmap,
        mailbox: &StampMailbox,
        index: usize,
    ) -> Option<Self> {
        let gpa = mailbox
            .gpa
            .checked_add(index as u64 * abi::ANATOMY_SLOT_SIZE)?;
        let end = GuestAddress(gpa + abi::ANATOMY_SLOT_SIZE - 1);
        let first = memory.get_host_address(GuestAddress(gpa)).ok()?;
        let last = memory.get_host_address(end).ok()?;
        // One region holds the whole slot, and it is aligned for u64s.
        if last as usize - first as usize != abi::ANATOMY_SLOT_SIZE as usize - 1
            || !(first as usize).is_multiple_of(8)
        {
            return None;
        }
        let s = Self {
            slot: first.cast::<u64>(),
            seq: 0,
            t1: 0,
        };
        s.put(abi::ANATOMY_SEQ, 0);
        s.put(abi::ANATOMY_T1, 0);
        s.put(abi::ANATOMY_T2, 0);
        s.put(abi::ANATOMY_OFFSET, mailbox.offset);
        s.put(abi::ANATOMY_OFFSET_ERR, mailbox.err);
        s.put(abi::ANATOMY_ALIGN, mailbox.align as u64);
        Some(s)
    }

    /// Write the u64 at byte `offset` of the slot.
    #[inline(always)]
    fn put(&self, offset: u64, v: u64) {
        // SAFETY: `slot` points at ANATOMY_SLOT_SIZE bytes of mapped guest
        // RAM, 8-byte aligned (checked in `arm`), and every offset the
        // ABI names is a u64 inside it; guest RAM stays mapped while the
        // vCPU runs. The guest may read it concurrently only while this
        // vCPU is outside KVM_RUN, i.e. never: this vCPU is the guest
        // reading it.
        unsafe { self.slot.add((offset / 8) as usize).write_volatile(v) }
    }

    /// Publish the last exit's stamps and enter KVM_RUN; stamp its return.
    #[inline(always)]
    pub(crate) fn run<'a>(
        &mut self,
        vcpu: &'a mut VcpuFd,
    ) -> Result<VcpuExit<'a>, kvm_ioctls::Error> {
        self.put(abi::ANATOMY_T1, self.t1);
        let t2 = trapline_bus::cycles();
        self.put(abi::ANATOMY_T2, t2);
        self.seq += 1;
        self.put(abi::ANATOMY_SEQ, self.seq);
        let r = vcpu.run();
        self.t1 = trapline_bus::cycles();
        r
    }
}

// SAFETY: the pointer is into guest RAM that outlives the vCPU thread
// holding this; only that thread writes through it.
unsafe impl Send for ExitStamps {}
