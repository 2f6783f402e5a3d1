//! The Intel MultiProcessor Specification (1.4) table: a floating pointer
//! structure and the configuration table it points at, describing the same
//! machine as the ACPI MADT (CPUs by local APIC ID, the ISA bus, the
//! IOAPIC, ISA IRQ routing with IRQ0 on pin 2 and the SCI level/high,
//! ExtINT on LINT0 and NMI on LINT1).
//!
//! Why a machine with ACPI has one: Linux looks for the floating pointer
//! before it reads the MADT, in 16-byte steps through [0, 1 KiB), the last
//! KiB of base memory and 0xF0000–0xFFFFF, remapping the whole window at
//! every step (`smp_scan_config`). Without a table it walks all of it:
//! about 70,000 page-table writes and INVLPGs, each an exit to the host's
//! shadow MMU on a nested host, seconds of boot. With the pointer at the
//! start of the last KiB (the EBDA) the search ends at its first step there,
//! as it does on QEMU's machines. The MADT still wins where both exist;
//! a guest booted with `acpi=off` uses this table.

use crate::acpi::{IOAPIC_ADDR, IOAPIC_ID, LAPIC_ADDR, SCI_IRQ};

/// Bytes of the floating pointer structure.
pub const FLOATING_LEN: usize = 16;
/// Bytes of the configuration table header.
const HEADER_LEN: usize = 44;
/// Bytes of a processor entry; every other entry is 8.
const PROCESSOR_LEN: usize = 20;
const ENTRY_LEN: usize = 8;
/// MP specification revision 1.4.
const SPEC_REV: u8 = 4;
/// Entry types.
const ENTRY_PROCESSOR: u8 = 0;
const ENTRY_BUS: u8 = 1;
const ENTRY_IOAPIC: u8 = 2;
const ENTRY_IO_INTERRUPT: u8 = 3;
const ENTRY_LOCAL_INTERRUPT: u8 = 4;
/// Interrupt types of I/O and local interrupt entries.
const INT_VECTORED: u8 = 0;
const INT_NMI: u8 = 1;
const INT_EXTINT: u8 = 3;
/// Polarity and trigger "conform to the bus" (ISA: edge, active high).
const FLAGS_CONFORM: u16 = 0;
/// Active high (bits 1:0 = 01), level triggered (bits 3:2 = 11): the SCI,
/// as the MADT's override declares it.
const FLAGS_LEVEL_HIGH: u16 = 0b1101;
/// The ISA bus's ID, and the bus type string.
const ISA_BUS: u8 = 0;
const ISA_BUS_TYPE: &[u8; 6] = b"ISA   ";
/// Local APIC version (an integrated APIC) and IOAPIC version, as KVM's
/// in-kernel chips report them.
const LAPIC_VERSION: u8 = 0x14;
const IOAPIC_VERSION: u8 = 0x11;
/// Processor entry flags: enabled, bootstrap processor.
const CPU_ENABLED: u8 = 1;
const CPU_BSP: u8 = 2;
/// Processor signature (family 6) and feature flags (FPU, APIC): informative
/// only, the guest takes both from CPUID.
const CPU_SIGNATURE: u32 = 0x600;
const CPU_FEATURES: u32 = (1 << 0) | (1 << 9);
/// The destination "all local APICs" of a local interrupt entry.
const ALL_LAPICS: u8 = 0xFF;
/// ISA IRQs routed to the IOAPIC (IRQ 2 is the PIC cascade, never routed).
const ISA_IRQS: u8 = 16;
/// The PC's one interrupt source override: ISA IRQ 0 arrives on pin 2.
const TIMER_PIN: u8 = 2;

/// OEM and product IDs in the configuration table header.
const OEM_ID: &[u8; 8] = b"TRAPLINE";
const PRODUCT_ID: &[u8; 12] = b"PC          ";

/// Why a table cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MpTableError {
    /// Local APIC IDs are 8 bits in an MP table.
    #[error("{0} vCPUs do not fit an MP table's 8-bit local APIC IDs (at most 255)")]
    TooManyCpus(u32),
    /// A table must lie below 4 GiB, its pointers are 32 bits.
    #[error("an MP table at {0:#x} is out of its 32-bit reach")]
    OutOfReach(u64),
}

/// Bytes of the configuration table for `cpus` vCPUs.
pub fn config_len(cpus: u32) -> usize {
    HEADER_LEN
        + cpus as usize * PROCESSOR_LEN
        + ENTRY_LEN // bus
        + ENTRY_LEN // IOAPIC
        + (1 + usize::from(ISA_IRQS) - 1) * ENTRY_LEN // ExtINT + ISA IRQs but 2
        + 2 * ENTRY_LEN // LINT0, LINT1
}

/// The floating pointer structure (to place at `floating_at`, 16-byte
/// aligned, where the guest searches) and the configuration table (to place
/// at `config_at`) for `cpus` vCPUs with local APIC IDs 0..cpus.
pub fn build(cpus: u32, config_at: u64) -> Result<([u8; FLOATING_LEN], Vec<u8>), MpTableError> {
    if cpus > 255 {
        return Err(MpTableError::TooManyCpus(cpus));
    }
    let config_ptr = u32::try_from(config_at).map_err(|_| MpTableError::OutOfReach(config_at))?;
    let config = config_table(cpus);
    let mut fp = [0u8; FLOATING_LEN];
    fp[0..4].copy_from_slice(b"_MP_");
    fp[4..8].copy_from_slice(&config_ptr.to_le_bytes());
    fp[8] = 1; // length in 16-byte units
    fp[9] = SPEC_REV;
    // fp[11] = 0: a configuration table is present (no default config);
    // fp[12] = 0: no IMCR, virtual-wire mode.
    fp[10] = checksum(&fp);
    Ok((fp, config))
}

fn config_table(cpus: u32) -> Vec<u8> {
    let mut t = Vec::with_capacity(config_len(cpus));
    t.extend_from_slice(b"PCMP");
    t.extend_from_slice(&[0, 0]); // base table length, below
    t.push(SPEC_REV);
    t.push(0); // checksum, below
    t.extend_from_slice(OEM_ID);
    t.extend_from_slice(PRODUCT_ID);
    t.extend_from_slice(&0u32.to_le_bytes()); // no OEM table
    t.extend_from_slice(&0u16.to_le_bytes());
    t.extend_from_slice(&0u16.to_le_bytes()); // entry count, below
    t.extend_from_slice(&LAPIC_ADDR.to_le_bytes());
    t.extend_from_slice(&0u16.to_le_bytes()); // no extended table
    t.extend_from_slice(&[0, 0]); // its checksum, reserved
    let mut entries: u16 = 0;
    for id in 0..cpus {
        let flags = CPU_ENABLED | if id == 0 { CPU_BSP } else { 0 };
        t.extend_from_slice(&[ENTRY_PROCESSOR, id as u8, LAPIC_VERSION, flags]);
        t.extend_from_slice(&CPU_SIGNATURE.to_le_bytes());
        t.extend_from_slice(&CPU_FEATURES.to_le_bytes());
        t.extend_from_slice(&[0; 8]);
        entries += 1;
    }
    t.extend_from_slice(&[ENTRY_BUS, ISA_BUS]);
    t.extend_from_slice(ISA_BUS_TYPE);
    t.extend_from_slice(&[ENTRY_IOAPIC, IOAPIC_ID, IOAPIC_VERSION, 1]);
    t.extend_from_slice(&IOAPIC_ADDR.to_le_bytes());
    entries += 2;
    let mut io = |kind: u8, flags: u16, irq: u8, pin: u8| {
        t.extend_from_slice(&[ENTRY_IO_INTERRUPT, kind]);
        t.extend_from_slice(&flags.to_le_bytes());
        t.extend_from_slice(&[ISA_BUS, irq, IOAPIC_ID, pin]);
    };
    // Pin 0: the 8259s' output (virtual-wire through the IOAPIC).
    io(INT_EXTINT, FLAGS_CONFORM, 0, 0);
    for irq in (0..ISA_IRQS).filter(|&i| i != 2) {
        let pin = if irq == 0 { TIMER_PIN } else { irq };
        let flags = if irq == SCI_IRQ {
            FLAGS_LEVEL_HIGH
        } else {
            FLAGS_CONFORM
        };
        io(INT_VECTORED, flags, irq, pin);
    }
    entries += u16::from(ISA_IRQS);
    for (kind, lint) in [(INT_EXTINT, 0u8), (INT_NMI, 1)] {
        t.extend_from_slice(&[ENTRY_LOCAL_INTERRUPT, kind]);
        t.extend_from_slice(&FLAGS_CONFORM.to_le_bytes());
        t.extend_from_slice(&[ISA_BUS, 0, ALL_LAPICS, lint]);
        entries += 1;
    }
    let len = t.len() as u16;
    t[4..6].copy_from_slice(&len.to_le_bytes());
    t[34..36].copy_from_slice(&entries.to_le_bytes());
    t[7] = checksum(&t);
    t
}

/// The byte that makes `bytes` sum to zero (with it in place of a zero).
fn checksum(bytes: &[u8]) -> u8 {
    0u8.wrapping_sub(bytes.iter().fold(0u8, |a, &b| a.wrapping_add(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(b: &[u8]) -> u8 {
        b.iter().fold(0u8, |a, &x| a.wrapping_add(x))
    }

    #[test]
    fn floating_pointer_and_table_check_out() {
        let (fp, t) = build(2, 0x9_FC10).unwrap();
        assert_eq!(&fp[0..4], b"_MP_");
        assert_eq!(u32::from_le_bytes(fp[4..8].try_into().unwrap()), 0x9_FC10);
        assert_eq!((fp[8], fp[9]), (1, SPEC_REV));
        assert_eq!(sum(&fp), 0, "floating pointer checksum");
        assert_eq!(&t[0..4], b"PCMP");
        assert_eq!(usize::from(u16::from_le_bytes([t[4], t[5]])), t.len());
        assert_eq!(t.len(), config_len(2));
        assert_eq!(sum(&t), 0, "configuration table checksum");
        assert_eq!(
            u32::from_le_bytes(t[36..40].try_into().unwrap()),
            LAPIC_ADDR
        );
    }

    /// Walk the entries as a guest does and check what they say.
    #[test]
    fn entries_describe_the_machine() {
        let (_, t) = build(3, 0x9_FC10).unwrap();
        let count = u16::from_le_bytes([t[34], t[35]]);
        let mut at = HEADER_LEN;
        let (mut cpus, mut bsp, mut ioapics, mut routes) = (Vec::new(), 0, 0, Vec::new());
        let mut lints = Vec::new();
        for _ in 0..count {
            match t[at] {
                ENTRY_PROCESSOR => {
                    cpus.push(t[at + 1]);
                    if t[at + 3] & CPU_BSP != 0 {
                        bsp += 1;
                    }
                    at += PROCESSOR_LEN;
                }
                ENTRY_BUS => {
                    assert_eq!(&t[at + 2..at + 8], ISA_BUS_TYPE);
                    at += ENTRY_LEN;
                }
                ENTRY_IOAPIC => {
                    ioapics += 1;
                    assert_eq!(t[at + 1], IOAPIC_ID);
                    let addr = u32::from_le_bytes(t[at + 4..at + 8].try_into().unwrap());
                    assert_eq!(addr, IOAPIC_ADDR);
                    at += ENTRY_LEN;
                }
                ENTRY_IO_INTERRUPT => {
                    let flags = u16::from_le_bytes([t[at + 2], t[at + 3]]);
                    routes.push((t[at + 1], t[at + 5], t[at + 7], flags));
                    at += ENTRY_LEN;
                }
                ENTRY_LOCAL_INTERRUPT => {
                    lints.push((t[at + 1], t[at + 7]));
                    at += ENTRY_LEN;
                }
                other => panic!("entry type {other} at {at}"),
            }
        }
        assert_eq!(at, t.len(), "the entries fill the table exactly");
        assert_eq!(cpus, vec![0, 1, 2]);
        assert_eq!((bsp, ioapics), (1, 1));
        assert!(routes.contains(&(INT_VECTORED, 0, TIMER_PIN, FLAGS_CONFORM)));
        assert!(
            routes.contains(&(INT_VECTORED, 4, 4, FLAGS_CONFORM)),
            "COM1"
        );
        assert!(routes.contains(&(INT_VECTORED, SCI_IRQ, SCI_IRQ, FLAGS_LEVEL_HIGH)));
        assert!(routes.iter().all(|r| r.1 != 2), "IRQ 2 is the cascade");
        assert_eq!(lints, vec![(INT_EXTINT, 0), (INT_NMI, 1)]);
    }

    #[test]
    fn refuses_what_it_cannot_describe() {
        assert!(matches!(build(256, 0), Err(MpTableError::TooManyCpus(256))));
        assert!(matches!(
            build(1, 1 << 32),
            Err(MpTableError::OutOfReach(_))
        ));
    }
}
