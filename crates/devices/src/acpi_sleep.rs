//! The sleep registers of the hardware-reduced ACPI machine (ACPI 6.x,
//! 4.8.3.7 and 4.8.3.8): where a guest without PM1 blocks writes to power
//! off. Two byte-wide I/O ports, which the hardware-reduced FADT names as
//! SLEEP_CONTROL_REG and SLEEP_STATUS_REG ([`crate::acpi::AcpiBuilder::reduced`]).
//!
//! A write to the control register with SLP_EN (bit 5) set and SLP_TYP
//! (bits 4:2) equal to [`S5_SLP_TYP`] (the DSDT's `_S5`) stops the VM with
//! [`StopReason::PowerOff`]. Nothing else has an effect: the machine
//! declares no other sleep state, and nothing ever wakes it, so the status
//! register's WAK_STS reads 0 and a write to it (write 1 to clear) changes
//! nothing.

use trapline_bus::{AccessSizes, BusDevice, IoOutcome, StopReason};

use crate::pm_timer::S5_SLP_TYP;

/// SLEEP_CONTROL_REG's port. Next to the PIIX4 PM block's 0x600–0x60F,
/// which the hardware-reduced machine does not map.
pub const SLEEP_CONTROL_PORT: u16 = 0x610;
/// SLEEP_STATUS_REG's port.
pub const SLEEP_STATUS_PORT: u16 = SLEEP_CONTROL_PORT + 1;
/// Both registers, from [`SLEEP_CONTROL_PORT`].
pub const SLEEP_REGS_LEN: u64 = 2;

/// SLEEP_CONTROL_REG.SLP_EN.
const SLP_EN: u8 = 1 << 5;
/// SLEEP_CONTROL_REG.SLP_TYP: bits 4:2.
const SLP_TYP_SHIFT: u8 = 2;
const SLP_TYP_MASK: u8 = 0b111;

/// The two registers, mapped at [`SLEEP_CONTROL_PORT`].
#[derive(Debug, Default)]
pub struct SleepRegs;

impl BusDevice for SleepRegs {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        // Control is write-only (reads as 0); status has no wake to report.
        data.fill(0);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        match (offset, data.first()) {
            (0, Some(&v))
                if v & SLP_EN != 0 && (v >> SLP_TYP_SHIFT) & SLP_TYP_MASK == S5_SLP_TYP =>
            {
                IoOutcome::Stop(StopReason::PowerOff)
            }
            _ => IoOutcome::Continue,
        }
    }

    fn access_sizes(&self) -> AccessSizes {
        // Byte registers (the FADT's GAS says byte access); a wider access
        // is cut into bytes, each lane its own register.
        AccessSizes::BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slp_en_with_s5_powers_off() {
        let d = SleepRegs;
        let s5 = SLP_EN | S5_SLP_TYP << SLP_TYP_SHIFT;
        assert_eq!(
            d.write(0, 0, 0, &[s5]),
            IoOutcome::Stop(StopReason::PowerOff)
        );
        // Linux's acpi_hw_extended_sleep writes exactly this for _S5 = 0.
        assert_eq!(s5, 0x20);
    }

    #[test]
    fn everything_else_is_ignored() {
        let d = SleepRegs;
        // SLP_TYP S5 without SLP_EN, other sleep types with it, the status
        // register, and every value at either port.
        for offset in 0..SLEEP_REGS_LEN {
            for v in 0..=u8::MAX {
                let s5_on_control = offset == 0
                    && v & SLP_EN != 0
                    && (v >> SLP_TYP_SHIFT) & SLP_TYP_MASK == S5_SLP_TYP;
                let expect = if s5_on_control {
                    IoOutcome::Stop(StopReason::PowerOff)
                } else {
                    IoOutcome::Continue
                };
                assert_eq!(
                    d.write(0, 0, offset, &[v]),
                    expect,
                    "offset {offset} value {v:#x}"
                );
            }
        }
        assert_eq!(d.write(0, 0, 0, &[]), IoOutcome::Continue);
        let mut b = [0xAA; 1];
        d.read(0, 0, 1, &mut b);
        assert_eq!(b, [0]);
    }

    #[test]
    fn hostile_accesses_never_panic_and_power_off_only_on_s5() {
        let d = SleepRegs;
        crate::hostile::each_access(0x5eed_0610, SLEEP_REGS_LEN, 20_000, |a| {
            let first = a.data.first().copied();
            let outcome = d.write(0, 0x610, a.offset, a.data);
            let s5 = a.offset == 0
                && first.is_some_and(|v| {
                    v & SLP_EN != 0 && (v >> SLP_TYP_SHIFT) & SLP_TYP_MASK == S5_SLP_TYP
                });
            assert_eq!(outcome == IoOutcome::Stop(StopReason::PowerOff), s5);
            d.read(0, 0x610, a.offset, a.data);
            assert!(a.data.iter().all(|&b| b == 0));
        });
    }
}
