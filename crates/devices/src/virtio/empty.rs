//! A virtio-mmio transport with no device behind it, as QEMU's `virt`
//! machine has 32 of: MagicValue reads "virt", Version the legacy layout
//! (1, QEMU's default on `virt`), VendorID trapline's, and every other
//! register 0, so DeviceID 0 tells a driver nothing is there. Writes are
//! ignored. kvm-unit-tests' micro-bench reads such a DeviceID to time an
//! exit to user space; Linux probes every transport the device tree names
//! and skips the empty ones.
//!
//! Any width is answered as QEMU answers it (its empty-transport path comes
//! before its width check): an access at the offset of MagicValue, Version
//! or VendorID reads that value's low bytes, any other offset reads 0.

use trapline_bus::{AccessSizes, BusDevice, IoOutcome};

use super::mmio::{MAGIC, VENDOR_ID};

/// Version of the legacy register layout (virtio 1.x §4.2.4).
pub const LEGACY_VERSION: u32 = 1;

/// The empty transport; stateless, so one may be mapped at every slot.
#[derive(Clone, Copy, Debug, Default)]
pub struct EmptyTransport;

impl EmptyTransport {
    /// The register at `offset`.
    pub fn register(offset: u64) -> u32 {
        match offset {
            0x00 => MAGIC,
            0x04 => LEGACY_VERSION,
            0x0C => VENDOR_ID,
            _ => 0,
        }
    }
}

impl BusDevice for EmptyTransport {
    fn access_sizes(&self) -> AccessSizes {
        // QEMU's virtio-mmio region declares none: 1 to 4 bytes, aligned.
        AccessSizes::QEMU_DEFAULT
    }

    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        let value = u64::from(Self::register(offset)).to_le_bytes();
        for (i, b) in data.iter_mut().enumerate() {
            *b = value.get(i).copied().unwrap_or(0);
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, _offset: u64, _data: &[u8]) -> IoOutcome {
        IoOutcome::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostile::each_access;

    fn r32(off: u64) -> u32 {
        let mut b = [0xAA; 4];
        EmptyTransport.read(0, 0, off, &mut b);
        u32::from_le_bytes(b)
    }

    #[test]
    fn identifies_as_an_empty_legacy_transport() {
        assert_eq!(r32(0x00), u32::from_le_bytes(*b"virt"));
        assert_eq!(r32(0x04), 1);
        assert_eq!(r32(0x08), 0, "DeviceID 0: no device");
        assert_eq!(r32(0x0C), VENDOR_ID);
        for off in (0x10..0x200).step_by(4) {
            if off != 0x0C {
                assert_eq!(r32(off), 0, "offset {off:#x}");
            }
        }
    }

    #[test]
    fn writes_change_nothing_and_narrow_reads_take_low_bytes() {
        let _ = EmptyTransport.write(0, 0, 0x08, &7u32.to_le_bytes());
        let _ = EmptyTransport.write(0, 0, 0x70, &0xFu32.to_le_bytes());
        assert_eq!((r32(0x08), r32(0x70)), (0, 0));
        let mut b = [0u8; 1];
        EmptyTransport.read(0, 0, 0, &mut b);
        assert_eq!(b, *b"v");
        EmptyTransport.read(0, 0, 1, &mut b);
        assert_eq!(b, [0]);
    }

    #[test]
    fn hostile_reads_of_any_width_are_answered() {
        each_access(0x0A00, 0x200, 10_000, |a| {
            EmptyTransport.read(0, 0, a.offset, a.data);
            let want = u64::from(EmptyTransport::register(a.offset)).to_le_bytes();
            for (i, &b) in a.data.iter().enumerate() {
                assert_eq!(b, want.get(i).copied().unwrap_or(0));
            }
        });
    }
}
