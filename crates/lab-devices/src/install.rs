//! Installing the lab into a machine being built: the probe devices and the
//! user-space doorbell on the buses, then the fast paths the fixtures ask
//! for, all on the probe addresses of the ABI. What each architecture has
//! and where is its `arch` module's; the steps both share are here.

use std::collections::BTreeMap;
use std::sync::Arc;

use trapline_abi as abi;
use trapline_fastpath::{CoalescedZone, Datamatch, IoEvent, IrqFd, ReadOnlyRegion, Space};
use trapline_kvm::VmFd;
use trapline_machine::{ExtensionContext, ExtensionHandle, MachineError, MachineExtension};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use crate::arch;
use crate::probe::{ProbeDevice, ProbeSpace};
use crate::user_doorbell::Doorbell;
use crate::{Lab, LabFixtures};

impl MachineExtension for LabFixtures {
    fn install(
        self: Box<Self>,
        ctx: &mut ExtensionContext<'_>,
    ) -> Result<ExtensionHandle, MachineError> {
        let fixtures = *self;
        let (probe_pio, probe_mmio, doorbell_user) = devices(ctx)?;
        let mut lab = Lab {
            probe_pio,
            probe_mmio,
            doorbell_user,
            ioevents: BTreeMap::new(),
            _zones: Vec::new(),
            _ro: None,
            irqfd: None,
        };
        fastpaths(ctx, fixtures, &mut lab)?;
        Ok(Box::new(lab))
    }
}

/// The probe devices on every probe address (so that a fast path that
/// leaks to user space is counted) and on the read-only memslot's page,
/// and the user-space doorbell over both doorbell pages; returns the
/// doorbell's eventfd with them.
fn devices(
    ctx: &mut ExtensionContext<'_>,
) -> Result<(Arc<ProbeDevice>, Arc<ProbeDevice>, EventFd), MachineError> {
    let probe_pio = Arc::new(ProbeDevice::new(ProbeSpace::Pio));
    let probe_mmio = Arc::new(ProbeDevice::new(ProbeSpace::Mmio));
    for (space, base, len) in arch::PROBE_RANGES {
        match space {
            Space::Pio => ctx.pio.insert("probe", base, len, probe_pio.clone())?,
            Space::Mmio => ctx.mmio.insert("probe", base, len, probe_mmio.clone())?,
        }
    }
    ctx.mmio.insert(
        "probe-ro-memslot",
        arch::PROBE_RO_MEMSLOT,
        arch::PROBE_PAGE,
        probe_mmio.clone(),
    )?;
    let host = |source| MachineError::Host {
        what: "eventfd",
        source,
    };
    let doorbell_fd = EventFd::new(EFD_NONBLOCK).map_err(host)?;
    let doorbell = Arc::new(Doorbell::with_page(
        doorbell_fd.try_clone().map_err(host)?,
        arch::PROBE_PAGE,
    ));
    ctx.mmio.insert(
        "doorbell",
        arch::DOORBELL_MMIO_USER,
        2 * arch::PROBE_PAGE,
        doorbell,
    )?;
    Ok((probe_pio, probe_mmio, doorbell_fd))
}

/// The KVM fast paths the fixtures ask for, kept in `lab`, at the
/// architecture's addresses.
fn fastpaths(
    ctx: &mut ExtensionContext<'_>,
    fixtures: LabFixtures,
    lab: &mut Lab,
) -> Result<(), MachineError> {
    let vm = ctx.vm().fd().clone();
    // Without "any length" KVM refuses a length-0 MMIO ioeventfd: the MMIO
    // wildcards (probe and doorbell) then match the value the probe writes,
    // 32 bits wide.
    let mmio_any = if ctx.kvm().has_ioeventfd_any_length() {
        Datamatch::Any
    } else {
        Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
    };
    if fixtures.ioeventfds {
        lab.register_ioevents(&vm, arch::ioeventfds(mmio_any))?;
    }
    if fixtures.coalesced {
        for (space, addr, size) in arch::COALESCED_ZONES {
            lab._zones
                .push(CoalescedZone::register(vm.clone(), space, addr, size)?);
        }
        ctx.use_coalesced_ring();
    }
    if fixtures.doorbells {
        lab.register_ioevents(&vm, arch::doorbells(mmio_any))?;
    }
    if fixtures.irqfd {
        if let Some(gsi) = arch::irqfd_gsi(ctx) {
            lab.irqfd = Some(IrqFd::register(vm.clone(), gsi)?);
        }
    }
    arch::own_paths(ctx, fixtures.floor)?;
    if fixtures.ro_memslot {
        let ro = ReadOnlyRegion::map(
            vm,
            ctx.vm().alloc_slot(),
            arch::PROBE_RO_MEMSLOT,
            arch::PROBE_PAGE as usize,
        )?;
        ro.write(0, &abi::PROBE_READ_VALUE.to_le_bytes());
        lab._ro = Some(ro);
    }
    Ok(())
}

impl Lab {
    /// Registers each of `events` (name, address space, address, match)
    /// on `vm` and keeps it by name.
    fn register_ioevents(
        &mut self,
        vm: &Arc<VmFd>,
        events: Vec<(&'static str, Space, u64, Datamatch)>,
    ) -> Result<(), MachineError> {
        for (name, space, addr, m) in events {
            self.ioevents
                .insert(name, IoEvent::register(vm.clone(), space, addr, m)?);
        }
        Ok(())
    }
}
