//! Where the lab sits on an arm64 `virt` machine: the `VIRT_PROBE_*` pages
//! of trapline's window (64 KiB each) and the doorbells' (MMIO only: arm64
//! has no port I/O, so the PIO probe exists but nothing can reach it), the
//! irqfd on `VIRT_IRQFD_SPI` (the vGIC is initialized by then), and KVM's
//! SMCCC filter forwarding the probe's user hypercall where KVM has one.

use trapline_abi as abi;
use trapline_fastpath::{Datamatch, Space};
use trapline_machine::{ExtensionContext, MachineError};

pub(crate) use abi::{
    VIRT_DOORBELL_MMIO_USER as DOORBELL_MMIO_USER,
    VIRT_PROBE_MMIO_COALESCED as PROBE_MMIO_COALESCED,
    VIRT_PROBE_MMIO_DATAMATCH as PROBE_MMIO_DATAMATCH, VIRT_PROBE_MMIO_USER as PROBE_MMIO_USER,
    VIRT_PROBE_MMIO_WILDCARD as PROBE_MMIO_WILDCARD, VIRT_PROBE_RO_MEMSLOT as PROBE_RO_MEMSLOT,
};

/// The size of a probe page.
pub(crate) const PROBE_PAGE: u64 = abi::VIRT_TRAPLINE_PAGE;

/// What the probe device covers (space, base, length): every probe page.
pub(crate) const PROBE_RANGES: [(Space, u64, u64); 1] = [(
    Space::Mmio,
    abi::VIRT_PROBE_FIRST,
    abi::VIRT_PROBE_DEVICE_LEN,
)];

/// The probe's ioeventfds (`mmio_any` is the MMIO wildcard's match).
pub(crate) fn ioeventfds(mmio_any: Datamatch) -> Vec<(&'static str, Space, u64, Datamatch)> {
    vec![
        (
            "mmio-wildcard",
            Space::Mmio,
            abi::VIRT_PROBE_MMIO_WILDCARD,
            mmio_any,
        ),
        (
            "mmio-datamatch",
            Space::Mmio,
            abi::VIRT_PROBE_MMIO_DATAMATCH,
            Datamatch::U32(abi::PROBE_DATAMATCH_VALUE),
        ),
    ]
}

/// The doorbells' ioeventfds: the MMIO one, and PV as x86 defines it (the
/// doorbell's identity, matched by a 32-bit datamatch ioeventfd) on an
/// MMIO page for want of ports.
pub(crate) fn doorbells(mmio_any: Datamatch) -> Vec<(&'static str, Space, u64, Datamatch)> {
    vec![
        (
            "doorbell-mmio",
            Space::Mmio,
            abi::VIRT_DOORBELL_MMIO_KERNEL,
            mmio_any,
        ),
        (
            "doorbell-pv",
            Space::Mmio,
            abi::VIRT_DOORBELL_PV_MMIO,
            Datamatch::U32(abi::DOORBELL_PV_IDENTITY),
        ),
    ]
}

/// The coalesced zone (space, address, size): the MMIO page.
pub(crate) const COALESCED_ZONES: [(Space, u64, u32); 1] = [(
    Space::Mmio,
    abi::VIRT_PROBE_MMIO_COALESCED,
    abi::VIRT_TRAPLINE_PAGE as u32,
)];

/// The SPI the irqfd is bound to (the vGIC is always there).
pub(crate) fn irqfd_gsi(_ctx: &ExtensionContext<'_>) -> Option<u32> {
    Some(abi::VIRT_IRQFD_SPI)
}

/// The path only arm64 has: `hypercall-user`, the probe's SMCCC id
/// forwarded to trapline, where this host's KVM has the filter (the runner
/// reports the scenario unsupported, with the reason, where it has not).
pub(crate) fn own_paths(ctx: &mut ExtensionContext<'_>, _floor: bool) -> Result<(), MachineError> {
    let fd = ctx.vm().fd();
    if trapline_kvm::smccc::filter_offered(fd).is_none() {
        trapline_kvm::smccc::forward_to_user(fd, abi::SMCCC_PROBE_USER_FN, 1)?;
    }
    Ok(())
}
