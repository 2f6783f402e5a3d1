//! PCI on either platform: the bus from `trapline_devices::pci` (the same
//! config space, BARs and pci-testdev on both) with KVM's fast paths under
//! it, ioeventfds and the read-only ECAM shadow. Only where the CPU reaches
//! PCI port space differs: CPU ports on the PC, a memory window on `virt`
//! ([`IoSpace`]), so a port ioeventfd is a PIO one there and an MMIO one
//! here.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kvm_ioctls::VmFd;
use trapline_bus::BusBuilder;
use trapline_devices::pci::{
    IoEventHandle, IoEventRegistration, IoEventRegistry, IoSpace, PciBuilder, PciDevices,
    PciLayout, ShadowSink, Space,
};
use trapline_fastpath::{Datamatch, IoEvent, ReadOnlyRegion};
use trapline_kvm::Vm;

use crate::MachineError;

/// KVM ioeventfds for PCI device models.
struct KvmIoEvents {
    vm: Arc<VmFd>,
    any_length: bool,
    io_space: IoSpace,
}

/// One live registration; `fired` accumulates what each read of the
/// eventfd drained.
struct KvmIoEvent {
    ev: IoEvent,
    total: AtomicU64,
}

impl IoEventRegistration for KvmIoEvent {
    fn fired(&self) -> u64 {
        let n = self.ev.take_count();
        self.total.fetch_add(n, Ordering::Relaxed) + n
    }
}

/// The KVM datamatch for a device's request (see `registry`'s mapping).
/// `port` tells a PCI port (whatever bus carries it) from memory; `any_length`
/// whether KVM has length-0 MMIO ioeventfds.
fn datamatch(
    port: bool,
    any_length: bool,
    len: u32,
    value: Option<u64>,
) -> Result<Datamatch, String> {
    Ok(match (value, len) {
        // Ports: a wildcard of the device's width, as QEMU registers
        // them (see Datamatch::AnyOfLen for why not length 0); on arm64
        // that is an MMIO ioeventfd of the same width in the I/O window.
        // MMIO: length 0 ("any length", VMX's fast MMIO path) where KVM
        // has it; without it the registration fails and the device
        // serves the write in user space (and counts it), still correct.
        (None, l @ (1 | 2 | 4 | 8)) if port => Datamatch::AnyOfLen(l),
        (None, _) if any_length || port => Datamatch::Any,
        (None, _) => return Err("KVM lacks KVM_CAP_IOEVENTFD_ANY_LENGTH".into()),
        (Some(v), 1) => Datamatch::U8(v as u8),
        (Some(v), 2) => Datamatch::U16(v as u16),
        (Some(v), 4) => Datamatch::U32(v as u32),
        (Some(v), 8) => Datamatch::U64(v),
        (Some(_), l) => return Err(format!("datamatch of length {l} is not a KVM width")),
    })
}

/// Where KVM must watch for a device's request at `addr` of `space`.
fn kvm_space(io_space: IoSpace, space: Space, addr: u64) -> (trapline_fastpath::Space, u64) {
    let (space, addr) = match space {
        Space::Pio => io_space.cpu_address(addr),
        Space::Mmio => (Space::Mmio, addr),
    };
    let s = match space {
        Space::Pio => trapline_fastpath::Space::Pio,
        Space::Mmio => trapline_fastpath::Space::Mmio,
    };
    (s, addr)
}

impl IoEventRegistry for KvmIoEvents {
    fn add(
        &self,
        space: Space,
        addr: u64,
        len: u32,
        value: Option<u64>,
    ) -> Result<IoEventHandle, String> {
        let m = datamatch(space == Space::Pio, self.any_length, len, value)?;
        let (s, at) = kvm_space(self.io_space, space, addr);
        let ev = IoEvent::register(self.vm.clone(), s, at, m).map_err(|e| e.to_string())?;
        Ok(IoEventHandle::new(Box::new(KvmIoEvent {
            ev,
            total: AtomicU64::new(0),
        })))
    }
}

/// The ECAM shadow as a read-only memslot (orphan rule: a local newtype).
struct RoSink(ReadOnlyRegion);

impl ShadowSink for RoSink {
    fn write(&self, offset: usize, bytes: &[u8]) {
        self.0.write(offset, bytes);
    }
}

/// What the machine configuration asks of PCI.
pub(crate) struct PciOptions {
    /// pci-testdev at 00:02.0.
    pub pci_testdev: bool,
    /// Bus 0's ECAM mapped read-only over its shadow (seed 004).
    pub ecam_ro: bool,
    /// KVM has length-0 MMIO ioeventfds.
    pub any_length: bool,
}

/// Build the bus on `layout`, map its front ends (and pci-testdev's PV
/// doorbell) on the buses, and the read-only ECAM if asked.
pub(crate) fn build(
    vm: &Vm,
    layout: PciLayout,
    opts: &PciOptions,
    pio: &mut BusBuilder,
    mmio: &mut BusBuilder,
) -> Result<PciDevices, MachineError> {
    let mut pci = PciBuilder::new(layout);
    if opts.pci_testdev {
        pci.pci_testdev(Arc::new(KvmIoEvents {
            vm: vm.fd().clone(),
            any_length: opts.any_length,
            io_space: layout.io_space,
        }));
    }
    let pci = pci
        .build()
        .map_err(|e| MachineError::Config(format!("PCI: {e}")))?;
    pci.insert_into(pio, mmio)?;
    pci.insert_pv_doorbell(pio, mmio)?;
    if opts.ecam_ro {
        let ro = ReadOnlyRegion::map(
            vm.fd().clone(),
            vm.alloc_slot(),
            layout.ecam_base,
            pci.shadow.len(),
        )?;
        pci.shadow
            .attach(Arc::new(RoSink(ro)))
            .map_err(|e| MachineError::Config(format!("--ecam-ro: {e}")))?;
    }
    Ok(pci)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VIRT_IO: IoSpace = IoSpace::MemoryMapped {
        cpu_base: 0x3eff_0000,
        len: 0x1_0000,
    };

    #[test]
    fn a_port_ioeventfd_is_mmio_in_a_memory_mapped_io_window() {
        assert_eq!(
            kvm_space(VIRT_IO, Space::Pio, 0x1085),
            (trapline_fastpath::Space::Mmio, 0x3eff_1085)
        );
        assert_eq!(
            kvm_space(IoSpace::Ports, Space::Pio, 0xc085),
            (trapline_fastpath::Space::Pio, 0xc085)
        );
        assert_eq!(
            kvm_space(VIRT_IO, Space::Mmio, 0x1000_0801),
            (trapline_fastpath::Space::Mmio, 0x1000_0801)
        );
    }

    #[test]
    fn port_wildcards_keep_their_width_on_either_bus() {
        assert_eq!(datamatch(true, false, 1, None), Ok(Datamatch::AnyOfLen(1)));
        assert_eq!(datamatch(false, true, 0, None), Ok(Datamatch::Any));
        assert!(datamatch(false, false, 0, None).is_err());
        assert_eq!(datamatch(true, false, 4, Some(7)), Ok(Datamatch::U32(7)));
        assert!(datamatch(false, true, 3, Some(7)).is_err());
    }
}
