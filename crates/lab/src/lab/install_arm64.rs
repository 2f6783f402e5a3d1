//! Installing the lab into an arm64 `virt` machine: the probe device on
//! the `VIRT_PROBE_*` pages of trapline's window, then the fast paths the
//! fixtures ask for on those pages and the doorbells' (MMIO only: arm64 has
//! no port I/O), the irqfd on `VIRT_IRQFD_SPI` (the vGIC is initialized by
//! then), and KVM's SMCCC filter forwarding the probe's user hypercall where
//! KVM has one.

use std::sync::Arc;

use trapline_abi as abi;
use trapline_fastpath::{CoalescedZone, Datamatch, IoEvent, IrqFd, ReadOnlyRegion, Space};
use trapline_machine::{ExtensionContext, MachineError};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use super::probe::{ProbeDevice, ProbeSpace};
use super::user_doorbell::Doorbell;
use super::{Lab, LabFixtures};

/// The probe device on every probe page (so that a fast path that leaks
/// to user space is counted) and on the read-only memslot's page (the PIO
/// probe exists but nothing can reach it), and the user-space doorbell
/// over both doorbell pages.
pub(super) fn devices(
    ctx: &mut ExtensionContext<'_>,
) -> Result<(Arc<ProbeDevice>, Arc<ProbeDevice>, EventFd), MachineError> {
    let probe_pio = Arc::new(ProbeDevice::new(ProbeSpace::Pio));
    let probe_mmio = Arc::new(ProbeDevice::new(ProbeSpace::Mmio));
    ctx.mmio.insert(
        "probe",
        abi::VIRT_PROBE_FIRST,
        abi::VIRT_PROBE_DEVICE_LEN,
        probe_mmio.clone(),
    )?;
    ctx.mmio.insert(
        "probe-ro-memslot",
        abi::VIRT_PROBE_RO_MEMSLOT,
        abi::VIRT_TRAPLINE_PAGE,
        probe_mmio.clone(),
    )?;
    let host = |source| MachineError::Host {
        what: "eventfd",
        source,
    };
    let doorbell_fd = EventFd::new(EFD_NONBLOCK).map_err(host)?;
    let doorbell = Arc::new(Doorbell::with_page(
        doorbell_fd.try_clone().map_err(host)?,
        abi::VIRT_TRAPLINE_PAGE,
    ));
    ctx.mmio.insert(
        "doorbell",
        abi::VIRT_DOORBELL_MMIO_USER,
        2 * abi::VIRT_TRAPLINE_PAGE,
        doorbell,
    )?;
    Ok((probe_pio, probe_mmio, doorbell_fd))
}

/// The KVM fast paths the fixtures ask for, kept in `lab`.
pub(super) fn fastpaths(
    ctx: &mut ExtensionContext<'_>,
    fixtures: LabFixtures,
    lab: &mut Lab,
) -> Result<(), MachineError> {
    let fd = ctx.vm().fd().clone();
    let mmio_any = if ctx.kvm().has_ioeventfd_any_length() {
        Datamatch::Any
    } else {
        Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
    };
    if fixtures.ioeventfds {
        let events = [
            ("mmio-wildcard", abi::VIRT_PROBE_MMIO_WILDCARD, mmio_any),
            (
                "mmio-datamatch",
                abi::VIRT_PROBE_MMIO_DATAMATCH,
                Datamatch::U32(abi::PROBE_DATAMATCH_VALUE),
            ),
        ];
        for (name, addr, m) in events {
            lab.ioevents
                .insert(name, IoEvent::register(fd.clone(), Space::Mmio, addr, m)?);
        }
    }
    if fixtures.doorbells {
        // PV as x86 defines it (the doorbell's identity, matched by a
        // 32-bit datamatch ioeventfd), on an MMIO page for want of ports.
        let doorbells = [
            ("doorbell-mmio", abi::VIRT_DOORBELL_MMIO_KERNEL, mmio_any),
            (
                "doorbell-pv",
                abi::VIRT_DOORBELL_PV_MMIO,
                Datamatch::U32(abi::DOORBELL_PV_IDENTITY),
            ),
        ];
        for (name, addr, m) in doorbells {
            lab.ioevents
                .insert(name, IoEvent::register(fd.clone(), Space::Mmio, addr, m)?);
        }
    }
    if fixtures.coalesced {
        lab._zones.push(CoalescedZone::register(
            fd.clone(),
            Space::Mmio,
            abi::VIRT_PROBE_MMIO_COALESCED,
            abi::VIRT_TRAPLINE_PAGE as u32,
        )?);
        ctx.use_coalesced_ring();
    }
    if fixtures.irqfd {
        lab.irqfd = Some(IrqFd::register(fd.clone(), abi::VIRT_IRQFD_SPI)?);
    }
    // hypercall-user: the probe's SMCCC id forwarded to trapline, where
    // this host's KVM has the filter (the runner reports the scenario
    // unsupported, with the reason, where it has not).
    if trapline_kvm::smccc::filter_offered(&fd).is_none() {
        trapline_kvm::smccc::forward_to_user(&fd, abi::SMCCC_PROBE_USER_FN, 1)?;
    }
    if fixtures.ro_memslot {
        let ro = ReadOnlyRegion::map(
            fd,
            ctx.vm().alloc_slot(),
            abi::VIRT_PROBE_RO_MEMSLOT,
            abi::VIRT_TRAPLINE_PAGE as usize,
        )?;
        ro.write(0, &abi::PROBE_READ_VALUE.to_le_bytes());
        lab._ro = Some(ro);
    }
    Ok(())
}
