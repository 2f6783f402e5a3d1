//! Configuration mechanism #1: the CF8 address latch and the CFC data port.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use trapline_bus::{fill_all_ones, AccessSizes, BusDevice, IoOutcome};

use super::bus::PciBus;

/// First port of the mechanism (the address latch).
pub const CONFIG_ADDRESS_PORT: u16 = 0xcf8;
/// First data port.
pub const CONFIG_DATA_PORT: u16 = 0xcfc;
/// Ports covered: 0xCF8..=0xCFF.
pub const CONFIG_IO_LEN: u64 = 8;

/// CF8 bit 31: configuration cycles enabled.
const ENABLE: u32 = 1 << 31;

/// The 0xCF8..0xCFF port device.
///
/// The latch is one 32-bit register shared by all vCPUs, as on real
/// chipsets (guests serialise config access themselves). A data access at
/// port 0xCFC + p addresses register `(CF8 & 0xff) | p`: unlike the PCI
/// spec (which says CF8 bits 1:0 are zero), bits 1:0 of the latch are
/// honoured like QEMU does, because kvm-unit-tests reads the device ID with
/// `CF8|2` then `inw(0xCFC)` (spec §3.6).
pub struct PciConfigIo {
    bus: Arc<PciBus>,
    latch: AtomicU32,
}

impl PciConfigIo {
    /// A front end for `bus`.
    pub fn new(bus: Arc<PciBus>) -> Self {
        Self {
            bus,
            latch: AtomicU32::new(0),
        }
    }

    /// The current CF8 value.
    pub fn address(&self) -> u32 {
        self.latch.load(Ordering::Acquire)
    }

    /// The (devfn, register) a data access at data-port byte `port` (0..4)
    /// goes to, if the latch enables a cycle on bus 0.
    fn target(&self, port: u64) -> Option<(u8, u64)> {
        let cf8 = self.address();
        let bus = (cf8 >> 16) as u8;
        if cf8 & ENABLE == 0 || bus != 0 {
            return None;
        }
        Some(((cf8 >> 8) as u8, u64::from(cf8 & 0xff) | (port & 3)))
    }
}

impl BusDevice for PciConfigIo {
    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        match offset {
            0..=3 => {
                let cf8 = self.address().to_le_bytes();
                for (i, b) in data.iter_mut().enumerate() {
                    *b = usize::try_from(offset)
                        .ok()
                        .and_then(|o| cf8.get(o + i).copied())
                        .unwrap_or(0xff);
                }
            }
            4..=7 => match self.target(offset - 4) {
                Some((devfn, reg)) => self.bus.config_read(devfn, reg, data),
                None => fill_all_ones(data),
            },
            _ => fill_all_ones(data),
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        match offset {
            // Only a full dword write loads the latch (QEMU does the same);
            // byte writes such as Linux's `outb(1, 0xCFB)` probe are dropped.
            0 => {
                if let Ok(v) = <[u8; 4]>::try_from(data) {
                    self.latch.store(u32::from_le_bytes(v), Ordering::Release);
                }
            }
            4..=7 => {
                if let Some((devfn, reg)) = self.target(offset - 4) {
                    self.bus.config_write(devfn, reg, data);
                }
            }
            _ => {}
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's pci_host_conf_le_ops and pci_host_data_le_ops (0xCF8 and
        // 0xCFC, four ports each) declare no sizes; aligned pieces of at
        // most 4 bytes never cross from one to the other.
        AccessSizes::QEMU_DEFAULT
    }
}
