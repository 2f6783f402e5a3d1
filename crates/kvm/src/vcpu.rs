//! What a vCPU's loop runs with ([`VcpuContext`]) and how it ended
//! ([`VcpuEnd`]): the types the run loop ([`crate::run`]) and the exit
//! decoder ([`mod@crate::dispatch`]) share, so neither imports the other's.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use trapline_bus::{Bus, ExitCounters, ExitProfile, StopReason};
use trapline_fastpath::CoalescedRing;
use vm_memory::GuestMemoryMmap;

use crate::crash::CpuDump;
use crate::stamps::StampMailbox;

/// What one vCPU needs to run.
pub struct VcpuContext {
    /// vCPU index (= APIC ID).
    pub index: usize,
    /// Port I/O bus (frozen).
    pub pio: Arc<Bus>,
    /// MMIO bus (frozen).
    pub mmio: Arc<Bus>,
    /// This vCPU's counters; this thread is their only writer.
    pub counters: Arc<ExitCounters>,
    /// The fast port, if any: an OUT there is counted as
    /// [`trapline_bus::ExitKind::FastPort`] and resumed
    /// right here, before any bus lookup or device call, which is the
    /// least a VMM can do per exit (the lab prices trapline's own floor
    /// with it, `vmm-floor-pio`). INs and other ports take the normal path.
    /// `None` adds nothing but one compare per OUT.
    pub fast_port: Option<u16>,
    /// The VM's coalesced ring, drained before any exit is dispatched.
    pub ring: Option<Arc<CoalescedRing>>,
    /// Set by the controller before it kicks this vCPU.
    pub stop: Arc<AtomicBool>,
    /// Guest RAM, read only when KVM cannot run the guest, to show the
    /// instruction bytes at RIP (see [`crate::crash`]).
    pub memory: Option<GuestMemoryMmap>,
    /// `--stat`: this vCPU's exit profile (this thread is its only
    /// writer). `None` runs the loop without a single extra instruction.
    pub profile: Option<Arc<ExitProfile>>,
    /// The exit-stamp mailbox, when the lab arms it (the anatomy of a
    /// user exit, [`StampMailbox`]): the run loop publishes each exit's
    /// KVM_RUN return and re-entry clock there. `None` costs one
    /// predictable branch per exit.
    pub exit_stamps: Option<StampMailbox>,
}

/// Why a vCPU's loop ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VcpuEnd {
    /// The controller stopped it.
    Stopped,
    /// A device asked to stop the VM.
    Device(StopReason),
    /// KVM_EXIT_SHUTDOWN: the guest triple-faulted.
    TripleFault {
        /// Guest RIP at the time, if readable.
        rip: Option<u64>,
    },
    /// KVM_EXIT_INTERNAL_ERROR.
    InternalError {
        /// The suberror code ([`crate::crash::suberror_name`] names it).
        suberror: u32,
        /// The `ndata` words KVM added (their meaning depends on the
        /// suberror, e.g. the exit reason and qualification).
        data: Vec<u64>,
        /// The vCPU's registers and the code at RIP.
        dump: CpuDump,
    },
    /// KVM_EXIT_FAIL_ENTRY.
    FailEntry {
        /// Hardware entry failure reason.
        reason: u64,
        /// The vCPU's registers and the code at RIP.
        dump: CpuDump,
    },
    /// KVM_EXIT_SYSTEM_EVENT (shutdown/reset/crash requested via KVM).
    SystemEvent {
        /// The event type.
        kind: u32,
    },
    /// An MMIO access KVM could not decode (arm64: no valid syndrome);
    /// `what` is one line naming the PC, the address and the instruction
    /// word.
    Undecodable {
        /// The line.
        what: String,
    },
    /// An exit trapline does not handle.
    Unhandled {
        /// Its description.
        what: String,
    },
    /// KVM_RUN itself failed.
    RunError {
        /// The errno.
        errno: i32,
    },
}
