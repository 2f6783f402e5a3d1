//! The lab's own devices and fast paths on the probe addresses of the ABI,
//! installed into a machine through its extension point
//! ([`trapline_machine::MachineExtension`]): a plain `trapline run` builds
//! its machine without them, and depends on nothing else of the lab.
//!
//! ```text
//!  LabFixtures ──install──▶ Lab (probe devices, doorbell, fast paths)
//!                            ├─ handles(&Machine)   before the run: eventfds, memory
//!                            └─ readout(&RunReport) after it: write and ioeventfd counts
//! ```
//!
//! What they do is the same on both architectures (`install`); where they
//! sit (ports and 4 KiB pages on x86, 64 KiB pages of trapline's window on
//! arm64's `virt`) and which fast paths exist is each architecture's
//! (`arch`).

mod arch;
mod install;
pub mod probe;
pub mod user_doorbell;

use std::collections::BTreeMap;
use std::sync::Arc;

use trapline_fastpath::{CoalescedZone, IoEvent, IrqFd, ReadOnlyRegion};
use trapline_machine::{Machine, RunReport};
use vmm_sys_util::eventfd::EventFd;

use probe::ProbeDevice;

/// Which of the lab's fast paths a machine gets. The probe devices and the
/// user-space doorbell are always installed with the lab; the fast paths
/// are what a scenario needs on top.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LabFixtures {
    /// Serve PROBE_PIO_FLOOR_PORT in the run loop itself (vmm-floor-pio).
    pub floor: bool,
    /// ioeventfds on the wildcard and datamatch probe port and pages.
    pub ioeventfds: bool,
    /// Coalesced zones on the coalesced probe port and page.
    pub coalesced: bool,
    /// The read-only memslot page.
    pub ro_memslot: bool,
    /// Doorbell ioeventfds (seed 002): any-length MMIO page, PIO port, and
    /// the PV port matching the doorbell identity.
    pub doorbells: bool,
    /// An irqfd bound to `trapline_abi::IRQFD_GSI` (needs the irqchip).
    pub irqfd: bool,
}

impl LabFixtures {
    /// Everything on.
    pub fn all() -> Self {
        Self {
            floor: true,
            ioeventfds: true,
            coalesced: true,
            ro_memslot: true,
            doorbells: true,
            irqfd: true,
        }
    }
}

/// What the lab installed into one machine: the machine keeps it (so the
/// fast paths stay registered while the VM runs) and hands it back in its
/// [`RunReport`].
pub struct Lab {
    probe_pio: Arc<ProbeDevice>,
    probe_mmio: Arc<ProbeDevice>,
    /// Signalled by the user-space doorbell device.
    doorbell_user: EventFd,
    /// The ioeventfds by name (counted after the run).
    ioevents: BTreeMap<&'static str, IoEvent>,
    /// Held, never read: registered while they live.
    _zones: Vec<CoalescedZone>,
    /// Held, never read: the read-only memslot is mapped while it lives.
    _ro: Option<ReadOnlyRegion>,
    irqfd: Option<IrqFd>,
}

/// What the lab uses while the VM runs: the doorbells' eventfds (for its
/// consumer thread), the irqfd (for its injector thread) and guest memory.
pub struct LabHandles {
    /// (name, eventfd) of each doorbell: `doorbell-user-mmio` (signalled by
    /// the lab's device) and the KVM ones `doorbell-mmio`, `doorbell-pio`,
    /// `doorbell-pv`.
    pub doorbells: Vec<(&'static str, EventFd)>,
    /// The irqfd bound to `IRQFD_GSI`.
    pub irqfd: Option<EventFd>,
    /// Guest RAM.
    pub memory: vm_memory::GuestMemoryMmap,
}

/// What the lab reads back after a run to check its scenarios.
pub struct LabReadout {
    /// The PIO probe device (write counts per register).
    pub probe_pio: Arc<ProbeDevice>,
    /// The MMIO probe device.
    pub probe_mmio: Arc<ProbeDevice>,
    /// How many times each lab ioeventfd fired, by name
    /// (`pio-wildcard`, `pio-datamatch`, `mmio-wildcard`, `mmio-datamatch`,
    /// and the `doorbell-*` ones).
    pub ioevent_counts: BTreeMap<&'static str, u64>,
}

/// Why the lab's handles could not be had.
#[derive(Debug, thiserror::Error)]
pub enum HandlesError {
    /// The machine was built without the lab's extension.
    #[error(
        "the machine has no lab devices: build it with `MachineConfig::extension` set to the lab's `LabFixtures`"
    )]
    NotInstalled,
    /// An eventfd could not be duplicated for a helper thread.
    #[error("duplicating an eventfd for the lab's helper threads: {0}")]
    Dup(#[source] std::io::Error),
}

/// Duplicated handles for the lab's helper threads, from a machine built
/// with the lab's extension.
pub fn handles(machine: &Machine) -> Result<LabHandles, HandlesError> {
    let lab = machine
        .extension::<Lab>()
        .ok_or(HandlesError::NotInstalled)?;
    let dup = |fd: &EventFd| fd.try_clone().map_err(HandlesError::Dup);
    let mut doorbells = vec![("doorbell-user-mmio", dup(&lab.doorbell_user)?)];
    for (name, ev) in &lab.ioevents {
        if name.starts_with("doorbell-") {
            doorbells.push((*name, dup(ev.eventfd())?));
        }
    }
    let irqfd = match &lab.irqfd {
        Some(i) => Some(dup(i.eventfd())?),
        None => None,
    };
    Ok(LabHandles {
        doorbells,
        irqfd,
        memory: machine.vm().memory().clone(),
    })
}

/// The lab's counts after a run (`None`: the machine had no lab). Each
/// ioeventfd's count is drained: a second readout sees only new fires.
pub fn readout(report: &RunReport) -> Option<LabReadout> {
    let lab = report.extension.as_ref()?.downcast_ref::<Lab>()?;
    Some(LabReadout {
        probe_pio: lab.probe_pio.clone(),
        probe_mmio: lab.probe_mmio.clone(),
        ioevent_counts: lab
            .ioevents
            .iter()
            .map(|(k, v)| (*k, v.take_count()))
            .collect(),
    })
}
