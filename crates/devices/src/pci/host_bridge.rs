//! The host bridge at 00:00.0.

use super::config::ConfigSpace;
use super::device::PciDevice;

/// Red Hat's vendor ID (QEMU's PCI devices).
pub const REDHAT_VENDOR: u16 = 0x1b36;
/// QEMU's generic "PCIe host bridge" device ID (gpex). Chosen over Intel's
/// i440FX/Q35 IDs so no guest applies chipset quirks to a chipset trapline
/// does not model.
pub const HOST_BRIDGE_DEVICE: u16 = 0x0008;
/// Class 06 (bridge), subclass 00 (host bridge).
pub const HOST_BRIDGE_CLASS: u32 = 0x06_00_00;
/// QEMU's default subsystem vendor (Red Hat/Qumranet) for every device.
pub const QEMU_SUBSYSTEM_VENDOR: u16 = 0x1af4;
/// QEMU's default subsystem ID.
pub const QEMU_SUBSYSTEM_ID: u16 = 0x1100;

/// A host bridge with no BARs: it only makes bus 0 look like a PCI bus to
/// guests that check for one at 00:00.0.
#[derive(Debug, Default)]
pub struct HostBridge;

impl PciDevice for HostBridge {
    fn name(&self) -> &'static str {
        "host-bridge"
    }

    fn config_template(&self) -> ConfigSpace {
        let mut c = ConfigSpace::new(REDHAT_VENDOR, HOST_BRIDGE_DEVICE, HOST_BRIDGE_CLASS, 0);
        c.set_subsystem(QEMU_SUBSYSTEM_VENDOR, QEMU_SUBSYSTEM_ID);
        c
    }
}
