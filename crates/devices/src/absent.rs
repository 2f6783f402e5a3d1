//! Stand-ins for the interrupt controllers and timer a VM was built
//! without (`--irqchip split|none`, `--no-pit`). A guest that touches one
//! would otherwise read all-ones, see its writes vanish and wait forever for
//! an interrupt; instead the first access, read or write, ends the run with
//! a message that names the device and the flag that gives the VM one.

use trapline_bus::{fill_all_ones, AbsentDevice, AccessSizes, BusDevice, IoOutcome, StopReason};

/// Where each absent device is: (device, bus, base, length).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbsentRange {
    /// The device.
    pub device: AbsentDevice,
    /// Port I/O (else MMIO).
    pub pio: bool,
    /// First address.
    pub base: u64,
    /// Length in bytes.
    pub len: u64,
}

const fn r(device: AbsentDevice, pio: bool, base: u64, len: u64) -> AbsentRange {
    AbsentRange {
        device,
        pio,
        base,
        len,
    }
}

const PIC: [AbsentRange; 3] = [
    r(AbsentDevice::Pic, true, 0x20, 2),
    r(AbsentDevice::Pic, true, 0xa0, 2),
    r(AbsentDevice::Pic, true, 0x4d0, 2),
];
const PIT: [AbsentRange; 2] = [
    r(AbsentDevice::Pit, true, 0x40, 4),
    r(AbsentDevice::Pit, true, 0x61, 1),
];
const IOAPIC: [AbsentRange; 1] = [r(
    AbsentDevice::Ioapic,
    false,
    trapline_abi::IOAPIC_BASE,
    trapline_abi::IOAPIC_LEN,
)];
const LAPIC: [AbsentRange; 1] = [r(
    AbsentDevice::Lapic,
    false,
    trapline_abi::LAPIC_BASE,
    trapline_abi::LAPIC_LEN,
)];

/// The ranges of `device`, as a PC has them.
pub fn ranges(device: AbsentDevice) -> &'static [AbsentRange] {
    match device {
        AbsentDevice::Pic => &PIC,
        AbsentDevice::Pit => &PIT,
        AbsentDevice::Ioapic => &IOAPIC,
        AbsentDevice::Lapic => &LAPIC,
    }
}

/// An absent device: any access stops the VM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Absent(pub AbsentDevice);

impl BusDevice for Absent {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        // The run stops right after this read (`read_stops`).
        fill_all_ones(data);
    }

    fn read_stops(&self) -> Option<StopReason> {
        Some(StopReason::AbsentDevice(self.0))
    }

    fn write(&self, _vcpu: usize, _base: u64, _offset: u64, _data: &[u8]) -> IoOutcome {
        IoOutcome::Stop(StopReason::AbsentDevice(self.0))
    }

    fn access_sizes(&self) -> AccessSizes {
        // Any access stops the VM: it need not be cut first.
        AccessSizes::ANY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_stop_with_the_device_and_reads_are_all_ones() {
        for d in [
            AbsentDevice::Pic,
            AbsentDevice::Pit,
            AbsentDevice::Ioapic,
            AbsentDevice::Lapic,
        ] {
            let dev = Absent(d);
            assert_eq!(
                dev.write(0, 0, 0, &[1]),
                IoOutcome::Stop(StopReason::AbsentDevice(d))
            );
            let mut b = [0u8; 4];
            dev.read(0, 0, 3, &mut b);
            assert_eq!(b, [0xff; 4]);
            assert_eq!(dev.read_stops(), Some(StopReason::AbsentDevice(d)));
            assert!(!ranges(d).is_empty());
            assert!(!d.remedy().is_empty() && d.what().contains("0x"));
        }
    }
}
