//! What the guest sees at the local APIC page when KVM does not claim it.
//!
//! With an in-kernel LAPIC, accesses to 0xFEE00000–0xFEE00FFF reach
//! userspace only when the guest has hardware-disabled its APIC
//! (APIC_BASE.EN = 0) or switched it to x2APIC mode. apic.flat then writes
//! 0xFF over the page and expects LVR and TPR to read 0xFFFFFFFF, as under
//! QEMU (spec §3.5b). So: reads are all-ones, writes are dropped. QEMU
//! treats such writes as MSIs; trapline deliberately injects nothing, since
//! no test relies on it and a stray interrupt would abort a test.

use trapline_bus::{fill_all_ones, AccessSizes, BusDevice, IoOutcome};

/// Guest-physical base of the xAPIC page.
pub const LAPIC_PAGE_BASE: u64 = trapline_abi::LAPIC_BASE;
/// Its length: one 4 KiB page.
pub const LAPIC_PAGE_LEN: u64 = trapline_abi::LAPIC_LEN;

/// Map at [`LAPIC_PAGE_BASE`] with length [`LAPIC_PAGE_LEN`] on the MMIO bus.
#[derive(Clone, Copy, Debug, Default)]
pub struct LapicFallback;

impl BusDevice for LapicFallback {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        fill_all_ones(data);
    }

    fn write(&self, _vcpu: usize, _base: u64, _offset: u64, _data: &[u8]) -> IoOutcome {
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's kvm_apic_io_ops declare no sizes.
        AccessSizes::QEMU_DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_ones_after_writes() {
        let dev = LapicFallback;
        for offset in (0..LAPIC_PAGE_LEN).step_by(4) {
            assert_eq!(
                dev.write(0, LAPIC_PAGE_BASE, offset, &[0xff; 4]),
                IoOutcome::Continue
            );
        }
        // LVR (0x30) and TPR (0x80), as apic.flat checks them.
        for offset in [0x30, 0x80] {
            let mut buf = [0u8; 4];
            dev.read(0, LAPIC_PAGE_BASE, offset, &mut buf);
            assert_eq!(u32::from_le_bytes(buf), 0xffff_ffff);
        }
        for width in [0, 1, 2, 8, 64] {
            let mut buf = vec![0u8; width];
            dev.read(1, LAPIC_PAGE_BASE, LAPIC_PAGE_LEN - 1, &mut buf);
            assert!(buf.iter().all(|&b| b == 0xff));
            assert_eq!(
                dev.write(1, LAPIC_PAGE_BASE, u64::MAX, &buf),
                IoOutcome::Continue
            );
        }
    }
}
