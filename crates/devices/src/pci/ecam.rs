//! ECAM (PCIe enhanced configuration access, MMCONFIG) front end.

use std::sync::Arc;

use trapline_bus::{fill_all_ones, AccessSizes, BusDevice, IoOutcome};

use super::bus::{PciBus, ECAM_BUS_SIZE};

/// The ECAM MMIO device: offset = bus << 20 | devfn << 12 | register.
/// Only bus 0 exists; other buses in the window read all-ones and ignore
/// writes. Registers 0x100..0xfff (extended space) read all-ones, as a
/// conventional function behind ECAM does.
pub struct PciConfigMmio {
    bus: Arc<PciBus>,
    buses: u16,
}

impl PciConfigMmio {
    /// A front end for `bus` decoding `buses` bus numbers (1..=256; 0 is
    /// taken as 1).
    pub fn new(bus: Arc<PciBus>, buses: u16) -> Self {
        Self {
            bus,
            buses: buses.clamp(1, 256),
        }
    }

    /// Bytes to map: `buses` MiB.
    pub fn len(&self) -> u64 {
        u64::from(self.buses) * ECAM_BUS_SIZE as u64
    }

    /// Never empty.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// (devfn, register) for an offset on bus 0. An access that starts in
    /// one function's page stays in it: bytes past 0xfff are past 0xff too,
    /// so they read all-ones.
    fn target(offset: u64) -> Option<(u8, u64)> {
        (offset >> 20 == 0).then_some(((offset >> 12) as u8, offset & 0xfff))
    }
}

impl BusDevice for PciConfigMmio {
    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        match Self::target(offset) {
            Some((devfn, reg)) => self.bus.config_read(devfn, reg, data),
            None => fill_all_ones(data),
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        if let Some((devfn, reg)) = Self::target(offset) {
            self.bus.config_write(devfn, reg, data);
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's pcie_mmcfg_ops declare no sizes.
        AccessSizes::QEMU_DEFAULT
    }
}
