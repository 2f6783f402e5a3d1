//! trapline's guest-physical address map, in one place.
//!
//! ```text
//!  0x0000_0000  RAM (page 0 stays plain RAM: kvm-unit-tests puts its AP
//!               trampoline there); loader boot area 0x1000-0xFFFF; ACPI
//!               tables 0xE0000-0xFFFFF; images from 1 MiB up
//!  ...          RAM up to --mem (at most 3 GiB)
//!  0xC000_0000  PCI ECAM window (bus 0: 1 MiB)
//!  0xD000_0000  trapline probe MMIO window (reserved for the lab, whose
//!               extension maps it; unmapped in a plain machine)
//!  0xD800_0000  virtio-mmio devices (4 KiB each, up to 8)
//!  0xE000_0000  PCI MMIO BAR window
//!  0xFEC0_0000  IOAPIC (KVM)
//!  0xFEE0_0000  LAPIC (KVM)
//!  0xFEFF_C000  KVM identity map + TSS (Intel, real-mode code)
//!  0xFF00_0000  pc-testdev MMIO scratch (64 KiB)
//! ```

use trapline_abi as abi;

// The addresses themselves are defined once, in trapline-abi (the guest
// payloads get them as C #defines from the same definitions); this module
// names them for the machine and lists the holes.

/// Most RAM trapline maps, in MiB (it must stay below the device holes).
pub const MAX_MEM_MIB: u64 = abi::MAX_RAM_MIB;
pub use abi::{
    ECAM_BASE, ECAM_LEN, IOAPIC_BASE, KVM_PRIVATE_LEN, LAPIC_BASE, PCI_IO_BASE, PCI_IO_END,
    PCI_MMIO_BASE, PCI_MMIO_END, VIRTIO_MMIO_BASE, VIRTIO_MMIO_WINDOW,
};
/// KVM's identity map and TSS pages (see trapline-kvm).
pub const KVM_PRIVATE_BASE: u64 = abi::KVM_IDENTITY_MAP_ADDR;

/// The GSI (IOAPIC pin, ISA IRQ number) of each virtio device in order:
/// ISA IRQs no other trapline device uses (0/2 PIT, 1, 3/4 COM ports,
/// 8 RTC, 9 SCI stay free), so Linux's legacy identity mapping applies.
pub const VIRTIO_GSIS: [u32; 8] = [5, 6, 7, 10, 11, 12, 14, 15];
/// Distance between virtio devices' windows: one 4 KiB window each.
pub const VIRTIO_MMIO_STRIDE: u64 = trapline_devices::virtio::MMIO_LEN;

/// A guest-physical range the machine owns, which no image may overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hole {
    /// Base.
    pub base: u64,
    /// Length.
    pub len: u64,
    /// What lives there.
    pub name: &'static str,
}

/// Every MMIO range the machine owns.
pub const HOLES: &[Hole] = &[
    Hole {
        base: ECAM_BASE,
        len: ECAM_LEN,
        name: "PCI ECAM window",
    },
    Hole {
        base: abi::PROBE_MMIO_BASE,
        len: abi::PROBE_MMIO_LEN,
        name: "trapline probe window",
    },
    Hole {
        base: VIRTIO_MMIO_BASE,
        len: VIRTIO_MMIO_WINDOW,
        name: "virtio-mmio devices",
    },
    Hole {
        base: PCI_MMIO_BASE,
        len: PCI_MMIO_END - PCI_MMIO_BASE,
        name: "PCI MMIO window",
    },
    Hole {
        base: IOAPIC_BASE,
        len: abi::IOAPIC_LEN,
        name: "IOAPIC",
    },
    Hole {
        base: LAPIC_BASE,
        len: abi::LAPIC_LEN,
        name: "LAPIC",
    },
    Hole {
        base: KVM_PRIVATE_BASE,
        len: KVM_PRIVATE_LEN,
        name: "KVM identity map/TSS",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_do_not_overlap_and_sit_above_ram() {
        for (i, a) in HOLES.iter().enumerate() {
            assert!(a.base >= MAX_MEM_MIB << 20, "{} overlaps RAM", a.name);
            for b in &HOLES[i + 1..] {
                assert!(
                    a.base + a.len <= b.base || b.base + b.len <= a.base,
                    "{} overlaps {}",
                    a.name,
                    b.name
                );
            }
        }
    }
}
