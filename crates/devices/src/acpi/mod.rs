//! ACPI tables for the legacy BIOS area 0xE0000–0xFFFFF.
//!
//! [`AcpiBuilder`] produces the whole 128 KiB area as one byte vector
//! ([`AcpiTables`]) for the machine to copy into guest memory at
//! [`ACPI_AREA_BASE`]. Everything lives inside it, so the tables can never
//! collide with RAM the guest allocator hands out:
//!
//! ```text
//! 0xE0000  RSDP (rev 2, first 16-byte slot the guest's scan visits)
//!          FACS (64-byte aligned)  DSDT  FADT  MADT  [MCFG]  RSDT  XSDT
//! ```
//!
//! RSDP → RSDT (32-bit) and XSDT (64-bit) → FACP, APIC, (MCFG);
//! FACP → FACS, DSDT. Every checksum is valid; `parse` is an independent
//! walker that checks them (what the tests and fuzz targets use; built
//! only for them, with the `test-utils` feature).
//!
//! kvm-unit-tests only reads RSDP → RSDT/XSDT → FACP.PM_TMR_BLK (and s3
//! the PM1 blocks and FACS); the MADT and MCFG are there for guests that
//! look (Linux, or tests written later).
//!
//! [`AcpiBuilder::reduced`] describes a hardware-reduced ACPI machine
//! instead (as QEMU's microvm): a revision 5 FADT with HW_REDUCED_ACPI and
//! sleep control/status registers, no FACS, no PM1 blocks or PM timer, no
//! SCI; a MADT without the 8259s and their overrides; COM1 in the DSDT.

mod aml;
#[cfg(any(test, feature = "test-utils"))]
pub mod parse;
mod tables;

pub use tables::{Com1, SleepRegisters, VirtioMmioDevice};

use crate::pm_timer::PmPorts;

/// Guest-physical base of the area the tables are built for.
pub const ACPI_AREA_BASE: u64 = trapline_abi::ACPI_AREA_BASE;
/// Size of the area: 0xE0000–0xFFFFF.
pub const ACPI_AREA_LEN: usize = trapline_abi::ACPI_AREA_LEN as usize;
/// The local APIC's MMIO base (KVM in-kernel LAPIC), as the MADT's 32-bit
/// field holds it.
pub const LAPIC_ADDR: u32 = trapline_abi::LAPIC_BASE as u32;
/// The IOAPIC's MMIO base (KVM in-kernel IOAPIC), as the MADT holds it.
pub const IOAPIC_ADDR: u32 = trapline_abi::IOAPIC_BASE as u32;
// The MADT's address fields are 32 bits: the casts above must not truncate.
const _: () = assert!(trapline_abi::LAPIC_BASE <= u32::MAX as u64);
const _: () = assert!(trapline_abi::IOAPIC_BASE <= u32::MAX as u64);
/// The IOAPIC's ID as KVM's in-kernel IOAPIC resets it (and QEMU declares).
pub const IOAPIC_ID: u8 = 0;
/// The SCI's ISA IRQ, as on PIIX4.
pub const SCI_IRQ: u8 = 9;

/// Alignment of every table: the RSDP needs 16 for the guest's scan; the
/// others only need natural alignment, 16 keeps them tidy.
const TABLE_ALIGN: usize = 16;
/// One ECAM bus: 32 devices x 8 functions x 4 KiB.
const ECAM_BUS_SIZE: u64 = 1 << 20;
/// Buses in one PCI segment.
const MAX_BUSES: u16 = 256;

/// A PCI Express ECAM window for the MCFG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ecam {
    /// Guest-physical base of bus 0's configuration space.
    pub base: u64,
    /// Number of buses decoded (1..=256), starting at bus 0.
    pub buses: u16,
}

/// Why the tables could not be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AcpiError {
    /// At least one vCPU is needed.
    #[error("ACPI tables need at least one vCPU")]
    NoCpus,
    /// The ECAM window is malformed.
    #[error("ECAM window {base:#x} with {buses} buses: bus count must be 1..=256 and the base 1 MiB aligned without wrapping")]
    BadEcam {
        /// Requested base.
        base: u64,
        /// Requested bus count.
        buses: u16,
    },
    /// The tables do not fit in the 128 KiB area (thousands of vCPUs).
    #[error("ACPI tables need {needed} bytes, the area has {ACPI_AREA_LEN}")]
    AreaFull {
        /// Bytes the layout would need.
        needed: usize,
    },
}

/// Where one table ended up, for listings and checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// `*b"FACP"` etc.; `*b"RSD "` for the RSDP.
    pub signature: [u8; 4],
    /// Guest-physical address.
    pub gpa: u64,
    /// Length in bytes.
    pub len: usize,
}

/// The built area.
#[derive(Clone, Debug)]
pub struct AcpiTables {
    /// Guest-physical address of `bytes[0]` ([`ACPI_AREA_BASE`]).
    pub base: u64,
    /// The whole area, [`ACPI_AREA_LEN`] bytes, zero where unused.
    pub bytes: Vec<u8>,
    /// Guest-physical address of the RSDP.
    pub rsdp: u64,
    /// Every structure written, RSDP first.
    pub tables: Vec<TableInfo>,
}

/// The ACPI hardware model the tables describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcpiHardware {
    /// A PC's fixed hardware: PM1 event/control blocks and the PM timer at
    /// these ports, the SCI, a FACS, the 8259s and the PIT's override.
    Full(PmPorts),
    /// Hardware-reduced ACPI: sleep through these registers; COM1 (and
    /// any virtio-mmio transports: [`AcpiBuilder::virtio_mmio`]) are DSDT
    /// devices.
    Reduced {
        /// The FADT's sleep control and status registers.
        sleep: SleepRegisters,
        /// The serial port the DSDT declares.
        com1: Com1,
    },
}

/// Parameters of the tables; see [`AcpiBuilder::build`].
#[derive(Clone, Debug)]
pub struct AcpiBuilder {
    cpus: u32,
    hardware: AcpiHardware,
    ecam: Option<Ecam>,
    virtio: Vec<VirtioMmioDevice>,
}

impl Default for AcpiBuilder {
    fn default() -> Self {
        Self {
            cpus: 1,
            hardware: AcpiHardware::Full(PmPorts::PIIX4),
            ecam: None,
            virtio: Vec::new(),
        }
    }
}

/// Bump allocator over the area.
struct Layout {
    next: usize,
}

impl Layout {
    /// Reserve `len` bytes at the next multiple of `align`.
    fn place(&mut self, len: usize, align: usize) -> usize {
        let at = self.next.next_multiple_of(align);
        self.next = at + len;
        at
    }
}

impl AcpiBuilder {
    /// One vCPU, PIIX4 PM ports, no MCFG.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of vCPUs: one enabled local APIC each, APIC IDs 0..n-1.
    pub fn cpus(mut self, n: u32) -> Self {
        self.cpus = n;
        self
    }

    /// The PM ports the FADT advertises (default [`PmPorts::PIIX4`], which
    /// is where [`crate::pm_timer::PmIo`] is meant to be mapped).
    pub fn pm_ports(mut self, pm: PmPorts) -> Self {
        self.hardware = AcpiHardware::Full(pm);
        self
    }

    /// Describe a hardware-reduced ACPI machine (replaces any PM ports).
    pub fn reduced(mut self, sleep: SleepRegisters, com1: Com1) -> Self {
        self.hardware = AcpiHardware::Reduced { sleep, com1 };
        self
    }

    /// virtio-mmio transports for the hardware-reduced DSDT to declare
    /// (`LNRO0005` devices); the full machine announces them on the
    /// guest's command line instead, and ignores this.
    pub fn virtio_mmio(mut self, devices: Vec<VirtioMmioDevice>) -> Self {
        self.virtio = devices;
        self
    }

    /// Add an MCFG describing an ECAM window for segment 0, buses
    /// 0..buses-1. Without this call there is no MCFG.
    pub fn ecam(mut self, base: u64, buses: u16) -> Self {
        self.ecam = Some(Ecam { base, buses });
        self
    }

    /// Lay out and encode everything.
    pub fn build(&self) -> Result<AcpiTables, AcpiError> {
        if self.cpus == 0 {
            return Err(AcpiError::NoCpus);
        }
        let ecam_last_bus = self.ecam.map(check_ecam).transpose()?;
        // Refuse absurd CPU counts before encoding a huge MADT.
        let madt_len = tables::madt_len(self.cpus);
        if madt_len > ACPI_AREA_LEN {
            return Err(AcpiError::AreaFull { needed: madt_len });
        }

        // Tables whose contents do not depend on addresses.
        let (facs, dsdt, legacy) = match self.hardware {
            AcpiHardware::Full(_) => (
                Some(tables::facs()),
                tables::dsdt(),
                Some(tables::LegacyIrqs { sci_irq: SCI_IRQ }),
            ),
            AcpiHardware::Reduced { com1, .. } => {
                (None, tables::dsdt_reduced(&com1, &self.virtio), None)
            }
        };
        let madt = tables::madt(&tables::MadtParams {
            cpus: self.cpus,
            lapic_addr: LAPIC_ADDR,
            ioapic_id: IOAPIC_ID,
            ioapic_addr: IOAPIC_ADDR,
            legacy,
        });
        let mcfg = match (self.ecam, ecam_last_bus) {
            (Some(e), Some(last)) => Some(tables::mcfg(e.base, last)),
            _ => None,
        };
        let n_entries = 2 + usize::from(mcfg.is_some());

        // Addresses: sizes of the pointer tables are known up front.
        let mut layout = Layout { next: 0 };
        let at_rsdp = layout.place(tables::RSDP_LEN, TABLE_ALIGN);
        let at_facs = facs
            .as_ref()
            .map(|f| layout.place(f.len(), tables::FACS_ALIGN));
        let at_dsdt = layout.place(dsdt.len(), TABLE_ALIGN);
        let fadt_len = match self.hardware {
            AcpiHardware::Full(_) => tables::FADT_LEN,
            AcpiHardware::Reduced { .. } => tables::FADT_REDUCED_LEN,
        };
        let at_fadt = layout.place(fadt_len, TABLE_ALIGN);
        let at_madt = layout.place(madt.len(), TABLE_ALIGN);
        let at_mcfg = mcfg.as_ref().map(|m| layout.place(m.len(), TABLE_ALIGN));
        let at_rsdt = layout.place(tables::rsdt_len(n_entries), TABLE_ALIGN);
        let at_xsdt = layout.place(tables::xsdt_len(n_entries), TABLE_ALIGN);
        if layout.next > ACPI_AREA_LEN {
            return Err(AcpiError::AreaFull {
                needed: layout.next,
            });
        }
        // The area is below 1 MiB, so every address fits in 32 bits.
        let gpa = |offset: usize| ACPI_AREA_BASE + offset as u64;
        let gpa32 = |offset: usize| gpa(offset) as u32;

        let fadt = match self.hardware {
            AcpiHardware::Full(pm) => tables::fadt(&tables::FadtParams {
                facs: at_facs.map_or(0, gpa32),
                dsdt: gpa32(at_dsdt),
                pm,
                sci_irq: SCI_IRQ,
            }),
            AcpiHardware::Reduced { sleep, .. } => tables::fadt_reduced(gpa32(at_dsdt), sleep),
        };
        let mut entries = vec![at_fadt, at_madt];
        entries.extend(at_mcfg);
        let rsdt = tables::rsdt(&entries.iter().map(|&o| gpa32(o)).collect::<Vec<_>>());
        let xsdt = tables::xsdt(&entries.iter().map(|&o| gpa(o)).collect::<Vec<_>>());
        let rsdp = tables::rsdp(gpa32(at_rsdt), gpa(at_xsdt));

        let placed: Vec<([u8; 4], usize, Vec<u8>)> = [
            Some((*b"RSD ", at_rsdp, rsdp)),
            at_facs.zip(facs).map(|(at, t)| (*b"FACS", at, t)),
            Some((*b"DSDT", at_dsdt, dsdt)),
            Some((*b"FACP", at_fadt, fadt)),
            Some((*b"APIC", at_madt, madt)),
            at_mcfg.zip(mcfg).map(|(at, t)| (*b"MCFG", at, t)),
            Some((*b"RSDT", at_rsdt, rsdt)),
            Some((*b"XSDT", at_xsdt, xsdt)),
        ]
        .into_iter()
        .flatten()
        .collect();
        Ok(fill_area(&placed, gpa(at_rsdp)))
    }
}

/// The ACPI area with each table (signature, offset, bytes) copied in at
/// its offset, in that order; the RSDP at `rsdp`.
fn fill_area(placed: &[([u8; 4], usize, Vec<u8>)], rsdp: u64) -> AcpiTables {
    let mut bytes = vec![0u8; ACPI_AREA_LEN];
    let mut tables = Vec::new();
    for (signature, at, table) in placed {
        bytes[*at..*at + table.len()].copy_from_slice(table);
        tables.push(TableInfo {
            signature: *signature,
            gpa: ACPI_AREA_BASE + *at as u64,
            len: table.len(),
        });
    }
    AcpiTables {
        base: ACPI_AREA_BASE,
        bytes,
        rsdp,
        tables,
    }
}

/// Validate an ECAM window; returns the last bus number.
fn check_ecam(e: Ecam) -> Result<u8, AcpiError> {
    let bad = AcpiError::BadEcam {
        base: e.base,
        buses: e.buses,
    };
    if e.buses == 0 || e.buses > MAX_BUSES || e.base & (ECAM_BUS_SIZE - 1) != 0 {
        return Err(bad);
    }
    if e.base
        .checked_add(u64::from(e.buses) * ECAM_BUS_SIZE)
        .is_none()
    {
        return Err(bad);
    }
    Ok((e.buses - 1) as u8)
}

#[cfg(test)]
mod tests;
