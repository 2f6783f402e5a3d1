//! Installing the lab into an x86 `pc` machine: the probe devices and the
//! user-space doorbell on the buses, then the fast paths the fixtures ask
//! for, all on the x86 probe addresses of the ABI (`PROBE_*`, ports and
//! MMIO pages).

use std::sync::Arc;

use trapline_abi as abi;
use trapline_fastpath::{CoalescedZone, Datamatch, IoEvent, IrqFd, ReadOnlyRegion, Space};
use trapline_machine::{ExtensionContext, MachineError};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use super::probe::{ProbeDevice, ProbeSpace};
use super::user_doorbell::Doorbell;
use super::{Lab, LabFixtures};

/// The probe devices (every probe address, so that a fast path that leaks
/// to user space is counted) and the user-space doorbell.
pub(super) fn devices(
    ctx: &mut ExtensionContext<'_>,
) -> Result<(Arc<ProbeDevice>, Arc<ProbeDevice>, EventFd), MachineError> {
    let probe_pio = Arc::new(ProbeDevice::new(ProbeSpace::Pio));
    let probe_mmio = Arc::new(ProbeDevice::new(ProbeSpace::Mmio));
    // The probe devices cover the lab's ports up to the PV doorbell,
    // which belongs to pci-testdev.
    let probe_ports = abi::PROBE_PIO_USER_PORT as u64;
    let probe_len = abi::PV_DOORBELL_PORT as u64 - probe_ports;
    ctx.pio
        .insert("probe", probe_ports, probe_len, probe_pio.clone())?;
    let probe_pages = abi::DOORBELL_MMIO_USER - abi::PROBE_MMIO_BASE;
    ctx.mmio.insert(
        "probe",
        abi::PROBE_MMIO_BASE,
        probe_pages,
        probe_mmio.clone(),
    )?;
    ctx.mmio.insert(
        "probe-ro-memslot",
        abi::PROBE_RO_MEMSLOT,
        abi::PROBE_PAGE_SIZE,
        probe_mmio.clone(),
    )?;
    let host = |source| MachineError::Host {
        what: "eventfd",
        source,
    };
    let doorbell_fd = EventFd::new(EFD_NONBLOCK).map_err(host)?;
    let doorbell = Arc::new(Doorbell::new(doorbell_fd.try_clone().map_err(host)?));
    ctx.mmio.insert(
        "doorbell",
        abi::DOORBELL_MMIO_USER,
        2 * abi::PROBE_PAGE_SIZE,
        doorbell,
    )?;
    Ok((probe_pio, probe_mmio, doorbell_fd))
}

/// The KVM fast paths the fixtures ask for, kept in `lab`.
pub(super) fn fastpaths(
    ctx: &mut ExtensionContext<'_>,
    lab_fixtures: LabFixtures,
    lab: &mut Lab,
) -> Result<(), MachineError> {
    let fd = ctx.vm().fd().clone();
    // Without "any length" KVM refuses a length-0 MMIO ioeventfd: the MMIO
    // wildcards (probe and doorbell) then match the value the probe writes,
    // 32 bits wide.
    let mmio_any = if ctx.kvm().has_ioeventfd_any_length() {
        Datamatch::Any
    } else {
        Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
    };
    if lab_fixtures.floor {
        ctx.set_fast_port(abi::PROBE_PIO_FLOOR_PORT);
    }
    if lab_fixtures.ioeventfds {
        let dm = Datamatch::U32(abi::PROBE_DATAMATCH_VALUE);
        let events = [
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
        ];
        for (name, space, addr, m) in events {
            lab.ioevents
                .insert(name, IoEvent::register(fd.clone(), space, addr, m)?);
        }
    }
    if lab_fixtures.coalesced {
        lab._zones.push(CoalescedZone::register(
            fd.clone(),
            Space::Mmio,
            abi::PROBE_MMIO_COALESCED,
            abi::PROBE_PAGE_SIZE as u32,
        )?);
        lab._zones.push(CoalescedZone::register(
            fd.clone(),
            Space::Pio,
            abi::PROBE_PIO_COALESCED_PORT.into(),
            4,
        )?);
        ctx.use_coalesced_ring();
    }
    if lab_fixtures.doorbells {
        let pv = Datamatch::U32(abi::DOORBELL_PV_IDENTITY);
        let doorbells = [
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
            ("doorbell-pv", Space::Pio, abi::PV_DOORBELL_PORT.into(), pv),
        ];
        for (name, space, addr, m) in doorbells {
            lab.ioevents
                .insert(name, IoEvent::register(fd.clone(), space, addr, m)?);
        }
    }
    if lab_fixtures.irqfd && ctx.vm().config().irqchip.has_ioapic_and_pic() {
        lab.irqfd = Some(IrqFd::register(fd.clone(), abi::IRQFD_GSI)?);
    }
    if lab_fixtures.ro_memslot {
        let ro = ReadOnlyRegion::map(
            fd,
            ctx.vm().alloc_slot(),
            abi::PROBE_RO_MEMSLOT,
            abi::PROBE_PAGE_SIZE as usize,
        )?;
        ro.write(0, &abi::PROBE_READ_VALUE.to_le_bytes());
        lab._ro = Some(ro);
    }
    Ok(())
}
