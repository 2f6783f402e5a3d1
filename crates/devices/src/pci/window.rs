//! BAR windows: the two bus devices that route BAR accesses.
//!
//! The machine's buses are frozen, but guests may move BARs. So instead of
//! one bus mapping per BAR, the machine maps one [`PciMmioWindow`] over its
//! whole PCI MMIO hole and one [`PciIoWindow`] over its PCI I/O port range;
//! each access is routed by [`PciBus`] to the function whose enabled BAR
//! covers it *now* (lock-free). Nothing covered reads all-ones.

use std::sync::Arc;

use trapline_bus::{AccessSizes, BusDevice, IoOutcome};

use super::bus::PciBus;
use super::registry::Space;

/// How accesses to a BAR are cut: the sizes of pci-testdev's BARs in QEMU
/// (`.valid` undeclared; its `.impl` of one byte is the function's own
/// business, and trapline's pci-testdev handles a wider access as a run of
/// bytes).
const BAR_SIZES: AccessSizes = AccessSizes::QEMU_DEFAULT;

/// Routes memory accesses inside the PCI MMIO hole to memory BARs.
pub struct PciMmioWindow {
    bus: Arc<PciBus>,
}

impl PciMmioWindow {
    /// A window onto `bus`'s memory BARs.
    pub fn new(bus: Arc<PciBus>) -> Self {
        Self { bus }
    }
}

impl BusDevice for PciMmioWindow {
    #[inline]
    fn read(&self, vcpu: usize, base: u64, offset: u64, data: &mut [u8]) {
        self.bus
            .bar_read(Space::Mmio, vcpu, base.wrapping_add(offset), data);
    }

    #[inline]
    fn write(&self, vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        self.bus
            .bar_write(Space::Mmio, vcpu, base.wrapping_add(offset), data)
    }

    fn access_sizes(&self) -> AccessSizes {
        BAR_SIZES
    }
}

/// Routes port accesses inside the PCI I/O range to I/O BARs.
pub struct PciIoWindow {
    bus: Arc<PciBus>,
}

impl PciIoWindow {
    /// A window onto `bus`'s I/O BARs.
    pub fn new(bus: Arc<PciBus>) -> Self {
        Self { bus }
    }
}

impl BusDevice for PciIoWindow {
    #[inline]
    fn read(&self, vcpu: usize, base: u64, offset: u64, data: &mut [u8]) {
        self.bus
            .bar_read(Space::Pio, vcpu, base.wrapping_add(offset), data);
    }

    #[inline]
    fn write(&self, vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        self.bus
            .bar_write(Space::Pio, vcpu, base.wrapping_add(offset), data)
    }

    fn access_sizes(&self) -> AccessSizes {
        BAR_SIZES
    }
}
