//! The machine's interrupt controllers and timer, as configured: KVM
//! creates what the VM has (`trapline_kvm::irqchip`); here every PC
//! interrupt controller or timer it does not have is put on the buses as
//! an absent device, so a guest that touches one ends the run with a
//! message naming it (status 14) instead of reading all-ones and waiting
//! forever for an interrupt.

use std::sync::Arc;

use trapline_bus::{AbsentDevice, BusBuilder};
use trapline_devices::absent::{self, Absent};
use trapline_kvm::Irqchip;

use crate::MachineError;

/// The devices a VM with `irqchip` (and the PIT if `pit`) lacks.
pub(crate) fn absent_devices(irqchip: Irqchip, pit: bool) -> Vec<AbsentDevice> {
    let mut v = Vec::new();
    if !irqchip.has_ioapic_and_pic() {
        v.extend([AbsentDevice::Pic, AbsentDevice::Ioapic]);
    }
    if !irqchip.has_lapic() {
        v.push(AbsentDevice::Lapic);
    }
    if !pit {
        v.push(AbsentDevice::Pit);
    }
    v
}

/// Put every absent device on its bus.
pub(crate) fn install_absent(
    irqchip: Irqchip,
    pit: bool,
    pio: &mut BusBuilder,
    mmio: &mut BusBuilder,
) -> Result<(), MachineError> {
    for device in absent_devices(irqchip, pit) {
        for r in absent::ranges(device) {
            let bus = if r.pio { &mut *pio } else { &mut *mmio };
            bus.insert(absent_name(device), r.base, r.len, Arc::new(Absent(device)))?;
        }
    }
    Ok(())
}

/// The bus name of an absent device (what `--stat` shows).
fn absent_name(device: AbsentDevice) -> &'static str {
    match device {
        AbsentDevice::Pic => "absent-pic",
        AbsentDevice::Pit => "absent-pit",
        AbsentDevice::Ioapic => "absent-ioapic",
        AbsentDevice::Lapic => "absent-lapic",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_absent_follows_the_configuration() {
        assert!(absent_devices(Irqchip::Kernel, true).is_empty());
        assert_eq!(absent_devices(Irqchip::Kernel, false), [AbsentDevice::Pit]);
        assert_eq!(
            absent_devices(Irqchip::Split, false),
            [AbsentDevice::Pic, AbsentDevice::Ioapic, AbsentDevice::Pit]
        );
        assert_eq!(
            absent_devices(Irqchip::None, false),
            [
                AbsentDevice::Pic,
                AbsentDevice::Ioapic,
                AbsentDevice::Lapic,
                AbsentDevice::Pit
            ]
        );
        let mut pio = BusBuilder::new();
        let mut mmio = BusBuilder::new();
        install_absent(Irqchip::None, false, &mut pio, &mut mmio).unwrap();
        let (pio, mmio) = (pio.build(), mmio.build());
        assert_eq!(pio.find(0x43).map(|m| m.name), Some("absent-pit"));
        assert_eq!(pio.find(0xa1).map(|m| m.name), Some("absent-pic"));
        assert_eq!(mmio.find(0xfee0_0030).map(|m| m.name), Some("absent-lapic"));
        assert_eq!(
            mmio.find(0xfec0_0010).map(|m| m.name),
            Some("absent-ioapic")
        );
    }
}
