//! Where the lab sits on an x86 `pc` machine: the x86 probe addresses of
//! the ABI (`PROBE_*`: ports and 4 KiB MMIO pages), and the fast paths it
//! has there, port I/O's included.

use trapline_abi as abi;
use trapline_fastpath::{Datamatch, Space};
use trapline_machine::{ExtensionContext, MachineError};

pub(crate) use abi::{
    DOORBELL_MMIO_USER, PROBE_MMIO_COALESCED, PROBE_MMIO_DATAMATCH, PROBE_MMIO_USER,
    PROBE_MMIO_WILDCARD, PROBE_RO_MEMSLOT,
};

/// The size of a probe page.
pub(crate) const PROBE_PAGE: u64 = abi::PROBE_PAGE_SIZE;

/// What the probe devices cover (space, base, length): the lab's ports up
/// to the PV doorbell, which belongs to pci-testdev, and its MMIO pages up
/// to the user-space doorbell's.
pub(crate) const PROBE_RANGES: [(Space, u64, u64); 2] = [
    (
        Space::Pio,
        abi::PROBE_PIO_USER_PORT as u64,
        (abi::PV_DOORBELL_PORT - abi::PROBE_PIO_USER_PORT) as u64,
    ),
    (
        Space::Mmio,
        abi::PROBE_MMIO_BASE,
        abi::DOORBELL_MMIO_USER - abi::PROBE_MMIO_BASE,
    ),
];

/// The probe's ioeventfds (`mmio_any` is the MMIO wildcard's match).
pub(crate) fn ioeventfds(mmio_any: Datamatch) -> Vec<(&'static str, Space, u64, Datamatch)> {
    let dm = Datamatch::U32(abi::PROBE_DATAMATCH_VALUE);
    vec![
        (
            "pio-wildcard",
            Space::Pio,
            abi::PROBE_PIO_WILDCARD_PORT.into(),
            Datamatch::AnyOfLen(4),
        ),
        (
            "pio-datamatch",
            Space::Pio,
            abi::PROBE_PIO_DATAMATCH_PORT.into(),
            dm,
        ),
        (
            "mmio-wildcard",
            Space::Mmio,
            abi::PROBE_MMIO_WILDCARD,
            mmio_any,
        ),
        ("mmio-datamatch", Space::Mmio, abi::PROBE_MMIO_DATAMATCH, dm),
    ]
}

/// The doorbells' ioeventfds (seed 002): any-length MMIO page, PIO port,
/// and the PV port matching the doorbell identity.
pub(crate) fn doorbells(mmio_any: Datamatch) -> Vec<(&'static str, Space, u64, Datamatch)> {
    vec![
        (
            "doorbell-mmio",
            Space::Mmio,
            abi::DOORBELL_MMIO_KERNEL,
            mmio_any,
        ),
        (
            "doorbell-pio",
            Space::Pio,
            abi::DOORBELL_PIO_PORT.into(),
            Datamatch::AnyOfLen(4),
        ),
        (
            "doorbell-pv",
            Space::Pio,
            abi::PV_DOORBELL_PORT.into(),
            Datamatch::U32(abi::DOORBELL_PV_IDENTITY),
        ),
    ]
}

/// The coalesced zones (space, address, size): the MMIO page and the port.
pub(crate) const COALESCED_ZONES: [(Space, u64, u32); 2] = [
    (
        Space::Mmio,
        abi::PROBE_MMIO_COALESCED,
        abi::PROBE_PAGE_SIZE as u32,
    ),
    (Space::Pio, abi::PROBE_PIO_COALESCED_PORT as u64, 4),
];

/// The GSI the irqfd is bound to, where the machine has the IOAPIC and
/// PIC that route it.
pub(crate) fn irqfd_gsi(ctx: &ExtensionContext<'_>) -> Option<u32> {
    ctx.vm()
        .config()
        .irqchip
        .has_ioapic_and_pic()
        .then_some(abi::IRQFD_GSI)
}

/// The fast path only x86 has: PROBE_PIO_FLOOR_PORT served in the run loop
/// itself (vmm-floor-pio).
pub(crate) fn own_paths(ctx: &mut ExtensionContext<'_>, floor: bool) -> Result<(), MachineError> {
    if floor {
        ctx.set_fast_port(abi::PROBE_PIO_FLOOR_PORT);
    }
    Ok(())
}
