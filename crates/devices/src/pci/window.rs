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

/// Routes accesses inside the PCI I/O range to I/O BARs: port accesses on
/// x86, where the window is mapped on the port bus at the ports
/// themselves; MMIO accesses on arm64, where the PCI I/O space is a memory
/// window (QEMU virt's `VIRT_PCIE_PIO`) and port `p` is at `cpu_base + p`.
pub struct PciIoWindow {
    bus: Arc<PciBus>,
    /// Subtracted from the bus address to give the port: 0 on the port
    /// bus, the window's CPU address when memory-mapped.
    cpu_base: u64,
}

impl PciIoWindow {
    /// A window onto `bus`'s I/O BARs, mapped on the port bus.
    pub fn new(bus: Arc<PciBus>) -> Self {
        Self { bus, cpu_base: 0 }
    }

    /// A window onto `bus`'s I/O BARs whose port 0 is at MMIO address
    /// `cpu_base`.
    pub fn memory_mapped(bus: Arc<PciBus>, cpu_base: u64) -> Self {
        Self { bus, cpu_base }
    }

    /// The port an access at bus address `addr` reaches.
    #[inline]
    fn port(&self, base: u64, offset: u64) -> u64 {
        base.wrapping_add(offset).wrapping_sub(self.cpu_base)
    }
}

impl BusDevice for PciIoWindow {
    #[inline]
    fn read(&self, vcpu: usize, base: u64, offset: u64, data: &mut [u8]) {
        self.bus
            .bar_read(Space::Pio, vcpu, self.port(base, offset), data);
    }

    #[inline]
    fn write(&self, vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        self.bus
            .bar_write(Space::Pio, vcpu, self.port(base, offset), data)
    }

    fn access_sizes(&self) -> AccessSizes {
        BAR_SIZES
    }
}
