//! The device side of a bus.

use crate::access::AccessSizes;

/// Why a device asks the VM to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// isa-debug-exit: the guest wrote this value; the process status is
    /// `(value << 1) | 1`, QEMU's convention.
    DebugExit(u32),
    /// The guest powered the machine off (ACPI S5, Bochs shutdown port).
    PowerOff,
    /// The guest asked for a reset; trapline has no firmware to reset into,
    /// so this ends the run like QEMU's `-no-reboot`.
    Reset,
    /// The guest touched an interrupt controller or timer the VM was built
    /// without (`--irqchip split|none`, `--no-pit`).
    AbsentDevice(AbsentDevice),
    /// The guest entered ACPI S3 (suspend to RAM): every vCPU stops, the
    /// machine waits for a wake event and resumes the guest at its FACS
    /// waking vector. Not the end of the run.
    Suspend,
    /// The guest's console output could not be written (its reader closed
    /// the pipe, the disk is full): the OS error number. Nothing more
    /// the guest prints could be kept, so the run ends and says so.
    OutputFailed {
        /// The OS error number of the failed write.
        errno: i32,
    },
}

/// An interrupt controller or timer a VM may be built without.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbsentDevice {
    /// The two 8259 PICs (ports 0x20-0x21, 0xA0-0xA1, ELCR 0x4D0-0x4D1).
    Pic,
    /// The 8254 PIT (ports 0x40-0x43, port B at 0x61).
    Pit,
    /// The IOAPIC (MMIO 0xFEC00000).
    Ioapic,
    /// The local APIC page (MMIO 0xFEE00000).
    Lapic,
}

impl AbsentDevice {
    /// The device and where it lives, in words.
    pub fn what(self) -> &'static str {
        match self {
            AbsentDevice::Pic => "the 8259 PIC (ports 0x20-0x21, 0xa0-0xa1, 0x4d0-0x4d1)",
            AbsentDevice::Pit => "the 8254 PIT (ports 0x40-0x43, 0x61)",
            AbsentDevice::Ioapic => "the IOAPIC (MMIO 0xfec00000)",
            AbsentDevice::Lapic => "the local APIC (MMIO 0xfee00000)",
        }
    }

    /// The `trapline run` flag that gives the VM the device.
    pub fn remedy(self) -> &'static str {
        match self {
            AbsentDevice::Pic | AbsentDevice::Ioapic => "--irqchip kernel",
            AbsentDevice::Pit => "--irqchip kernel without --no-pit",
            AbsentDevice::Lapic => "--irqchip kernel or --irqchip split",
        }
    }
}

/// What the vCPU loop does after a device handled an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum IoOutcome {
    /// Resume the guest.
    Continue,
    /// Stop the whole VM for this reason.
    Stop(StopReason),
}

/// A device on a PIO or MMIO bus.
///
/// `offset` is relative to the base of the range the device was inserted
/// at; `base` is that base (a device mapped twice can tell the mappings
/// apart). `vcpu` is the index of the calling vCPU.
///
/// The bus cuts every guest access into the pieces the device's
/// [`AccessSizes`] allow (see there), so `data.len()` is a power of two in
/// `min..=max`, naturally aligned unless the device takes unaligned pieces.
/// A piece starts inside the range but may run past its end, as in QEMU;
/// devices still accept every width and offset when called directly,
/// returning all-ones (or their documented value) for what they do not
/// implement.
pub trait BusDevice: Send + Sync {
    /// A guest read; fill all of `data`.
    fn read(&self, vcpu: usize, base: u64, offset: u64, data: &mut [u8]);
    /// A guest write.
    fn write(&self, vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome;
    /// The accesses the device takes in one call: what QEMU's
    /// `MemoryRegionOps` declare for the same device. Asked once, when the
    /// device is put on a bus.
    fn access_sizes(&self) -> AccessSizes;
    /// Whether every read, once answered, stops the VM (a device the VM
    /// was built without). Asked once, when the device is put on a bus.
    fn read_stops(&self) -> Option<StopReason> {
        None
    }
}

/// Fill a read buffer with all-ones: what an unclaimed bus line reads as.
#[inline]
pub fn fill_all_ones(data: &mut [u8]) {
    data.fill(0xff);
}
