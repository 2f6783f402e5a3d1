//! Encoders for the individual ACPI structures. Each returns a complete
//! table with its length and checksum filled in; the caller decides where
//! it goes. Field offsets follow the ACPI 6.x spec, chapter 5.2.

use super::aml;
use crate::pm_timer::{PmPorts, PM1_CNT_LEN, PM1_EVT_LEN, PM_TMR_LEN, S3_SLP_TYP, S5_SLP_TYP};

/// The CMOS index of the RTC's century register (FADT CENTURY), as QEMU
/// declares it: Linux then reads the full year from the RTC.
const RTC_CENTURY_INDEX: u8 = crate::rtc::regs::REG_CENTURY;

/// OEM fields of every header.
const OEM_ID: &[u8; 6] = b"TRAPLN";
const OEM_TABLE_ID: &[u8; 8] = b"TRAPLINE";
const OEM_REVISION: u32 = 1;
const CREATOR_ID: &[u8; 4] = b"TRPL";
const CREATOR_REVISION: u32 = 1;

/// System description table header length.
pub(super) const HEADER_LEN: usize = 36;
/// Offsets inside the header.
const HDR_LENGTH: usize = 4;
const HDR_CHECKSUM: usize = 9;

/// RSDP: revision 2 (ACPI 2.0+, has an XSDT), 36 bytes.
pub(super) const RSDP_LEN: usize = 36;
const RSDP_REVISION: u8 = 2;
/// The ACPI 1.0 checksum covers the first 20 bytes.
const RSDP_V1_LEN: usize = 20;
const RSDP_CHECKSUM: usize = 8;
const RSDP_EXT_CHECKSUM: usize = 32;

/// FADT revision 3 (ACPI 2.0 layout with the X_ fields), 244 bytes.
pub(super) const FADT_LEN: usize = 244;
const FADT_REVISION: u8 = 3;
/// FADT flags as QEMU's PIIX4 sets them (0x80A5): WBINVD, PROC_C1,
/// SLP_BUTTON, RTC_S4, USE_PLATFORM_CLOCK. TMR_VAL_EXT (bit 8) is clear:
/// the PM timer is 24 bits, like [`crate::pm_timer::PM_TIMER_BITS`].
pub(super) const FADT_FLAGS: u32 = 0x80A5;
/// IAPC_BOOT_ARCH: VGA not present (bit 2). trapline has no VGA; whether
/// an i8042 or CMOS RTC exist is the machine's business, so those bits
/// claim nothing.
const IAPC_BOOT_ARCH: u16 = 1 << 2;
/// C2/C3 latencies above 100/1000 us mean "not supported" (QEMU: 0xFFF).
const P_LVL2_LAT: u16 = 0x0FFF;
const P_LVL3_LAT: u16 = 0x0FFF;

/// The hardware-reduced machine's FADT: revision 5 (ACPI 5.0, the first
/// with the sleep control and status registers), 268 bytes.
pub(super) const FADT_REDUCED_LEN: usize = 268;
const FADT_REDUCED_REVISION: u8 = 5;
/// FADT flags of the hardware-reduced machine: WBINVD, PROC_C1 and
/// HW_REDUCED_ACPI (bit 20): no PM1 blocks, PM timer, SCI, GPEs or FACS;
/// Linux then skips the 8259s, the PIT and their checks altogether.
pub(super) const FADT_REDUCED_FLAGS: u32 = 1 << 0 | 1 << 2 | 1 << 20;
/// The sleep registers are bytes.
const GAS_ACCESS_BYTE: u8 = 1;

/// FACS: 64 bytes, version 1 (ACPI 2.0).
pub(super) const FACS_LEN: usize = 64;
/// The FACS must be 64-byte aligned.
pub(super) const FACS_ALIGN: usize = 64;
const FACS_VERSION: u8 = 1;

/// DSDT revision 2: 64-bit AML integers.
const DSDT_REVISION: u8 = 2;
/// RSDT/XSDT revision.
const SDT_REVISION: u8 = 1;
/// MADT revision 3 (ACPI 4.0: adds the x2APIC structures used for APIC
/// IDs of 255 and up).
const MADT_REVISION: u8 = 3;
/// MADT flags: PCAT_COMPAT, dual 8259s present (KVM's in-kernel PIC).
const MADT_PCAT_COMPAT: u32 = 1;
/// MCFG revision.
const MCFG_REVISION: u8 = 1;

/// MADT structure types and lengths.
const MADT_LAPIC: u8 = 0;
const MADT_LAPIC_LEN: u8 = 8;
const MADT_IOAPIC: u8 = 1;
const MADT_IOAPIC_LEN: u8 = 12;
const MADT_ISO: u8 = 2;
const MADT_ISO_LEN: u8 = 10;
const MADT_LAPIC_NMI: u8 = 4;
const MADT_LAPIC_NMI_LEN: u8 = 6;
const MADT_X2APIC: u8 = 9;
const MADT_X2APIC_LEN: u8 = 16;
const MADT_X2APIC_NMI: u8 = 10;
const MADT_X2APIC_NMI_LEN: u8 = 12;
/// Local APIC flags: enabled.
const LAPIC_ENABLED: u32 = 1;
/// The xAPIC ID 0xFF is the broadcast ID: CPUs from here on need x2APIC
/// structures.
pub(super) const XAPIC_MAX_ID: u32 = 0xFE;
/// Local APIC NMI: "all processors" UID, LINT1, flags "conforms".
const NMI_ALL_PROCESSORS: u8 = 0xFF;
/// The x2APIC form of "all processors".
const X2NMI_ALL_PROCESSORS: u32 = u32::MAX;
const NMI_LINT: u8 = 1;
/// MPS INTI flags for an ISA IRQ routed like a PC: conforms to the bus.
const INTI_CONFORMS: u16 = 0;
/// MPS INTI flags for the SCI: active high, level triggered (QEMU's 0x000D).
const INTI_ACTIVE_HIGH_LEVEL: u16 = 0x000D;
/// ISA bus number in interrupt source overrides.
const ISA_BUS: u8 = 0;

/// Generic Address Structure: space IDs and access sizes.
const GAS_SYSTEM_IO: u8 = 1;
const GAS_ACCESS_WORD: u8 = 2;
const GAS_ACCESS_DWORD: u8 = 3;

/// Sum of bytes to make a region's byte sum 0.
pub(super) fn checksum(bytes: &[u8]) -> u8 {
    0u8.wrapping_sub(bytes.iter().fold(0u8, |a, &b| a.wrapping_add(b)))
}

/// Builds one system description table: header first, then fields.
struct Table {
    bytes: Vec<u8>,
}

impl Table {
    fn new(signature: &[u8; 4], revision: u8) -> Self {
        let mut bytes = Vec::with_capacity(HEADER_LEN);
        bytes.extend_from_slice(signature);
        bytes.extend_from_slice(&0u32.to_le_bytes()); // length, set in finish
        bytes.push(revision);
        bytes.push(0); // checksum, set in finish
        bytes.extend_from_slice(OEM_ID);
        bytes.extend_from_slice(OEM_TABLE_ID);
        bytes.extend_from_slice(&OEM_REVISION.to_le_bytes());
        bytes.extend_from_slice(CREATOR_ID);
        bytes.extend_from_slice(&CREATOR_REVISION.to_le_bytes());
        Self { bytes }
    }

    fn u8(&mut self, v: u8) -> &mut Self {
        self.bytes.push(v);
        self
    }

    fn u16(&mut self, v: u16) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    fn u32(&mut self, v: u32) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(v);
        self
    }

    /// A Generic Address Structure for an I/O port block.
    fn gas_io(&mut self, port: u16, bit_width: u8, access: u8) -> &mut Self {
        self.u8(GAS_SYSTEM_IO)
            .u8(bit_width)
            .u8(0)
            .u8(access)
            .u64(port.into())
    }

    /// An all-zero GAS: "not present".
    fn gas_none(&mut self) -> &mut Self {
        self.raw(&[0; 12])
    }

    /// Set length and checksum. Tables are far smaller than 4 GiB (the
    /// builder bounds them by its 128 KiB area), so the cast is exact.
    fn finish(mut self) -> Vec<u8> {
        let len = self.bytes.len() as u32;
        self.bytes[HDR_LENGTH..HDR_LENGTH + 4].copy_from_slice(&len.to_le_bytes());
        self.bytes[HDR_CHECKSUM] = checksum(&self.bytes);
        self.bytes
    }
}

/// The RSDP pointing at both the RSDT and the XSDT.
pub(super) fn rsdp(rsdt: u32, xsdt: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(RSDP_LEN);
    b.extend_from_slice(b"RSD PTR ");
    b.push(0); // checksum
    b.extend_from_slice(OEM_ID);
    b.push(RSDP_REVISION);
    b.extend_from_slice(&rsdt.to_le_bytes());
    b.extend_from_slice(&(RSDP_LEN as u32).to_le_bytes());
    b.extend_from_slice(&xsdt.to_le_bytes());
    b.push(0); // extended checksum
    b.extend_from_slice(&[0; 3]);
    b[RSDP_CHECKSUM] = checksum(&b[..RSDP_V1_LEN]);
    b[RSDP_EXT_CHECKSUM] = checksum(&b);
    b
}

/// Length of an RSDT with `n` entries.
pub(super) fn rsdt_len(n: usize) -> usize {
    HEADER_LEN + 4 * n
}

/// Length of an XSDT with `n` entries.
pub(super) fn xsdt_len(n: usize) -> usize {
    HEADER_LEN + 8 * n
}

/// The RSDT: 32-bit pointers.
pub(super) fn rsdt(entries: &[u32]) -> Vec<u8> {
    let mut t = Table::new(b"RSDT", SDT_REVISION);
    for &e in entries {
        t.u32(e);
    }
    t.finish()
}

/// The XSDT: 64-bit pointers.
pub(super) fn xsdt(entries: &[u64]) -> Vec<u8> {
    let mut t = Table::new(b"XSDT", SDT_REVISION);
    for &e in entries {
        t.u64(e);
    }
    t.finish()
}

/// The FACS. It has no checksum; the firmware waking vector stays 0
/// (trapline does not resume from S3).
pub(super) fn facs() -> Vec<u8> {
    let mut b = Vec::with_capacity(FACS_LEN);
    b.extend_from_slice(b"FACS");
    b.extend_from_slice(&(FACS_LEN as u32).to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes()); // hardware signature
    b.extend_from_slice(&0u32.to_le_bytes()); // firmware waking vector
    b.extend_from_slice(&0u32.to_le_bytes()); // global lock
    b.extend_from_slice(&0u32.to_le_bytes()); // flags
    b.extend_from_slice(&0u64.to_le_bytes()); // X firmware waking vector
    b.push(FACS_VERSION);
    b.resize(FACS_LEN, 0);
    b
}

/// The DSDT: just `Name(_S3, Package(4) {S3_SLP_TYP, S3_SLP_TYP, 0, 0})`
/// and the same for `_S5`, so the sleep types an OS writes for suspend and
/// soft-off are exactly the ones [`crate::pm_timer::PmIo`] acts on (QEMU's
/// values: 1 and 0).
pub(super) fn dsdt() -> Vec<u8> {
    let mut body = Vec::new();
    aml::named_package(&mut body, b"_S3_", &[S3_SLP_TYP, S3_SLP_TYP, 0, 0]);
    aml::named_package(&mut body, b"_S5_", &[S5_SLP_TYP, S5_SLP_TYP, 0, 0]);
    let mut t = Table::new(b"DSDT", DSDT_REVISION);
    t.raw(&body);
    t.finish()
}

/// The hardware-reduced machine's DSDT: `_S5` (no `_S3`: that machine
/// does not suspend), and COM1 as a PNP0501 device with its ports and its
/// interrupt. Without the 8259s Linux preallocates no ISA IRQs, so the
/// serial driver finds the port's interrupt only here (as on QEMU's
/// microvm).
pub(super) fn dsdt_reduced(com1: &Com1, virtio: &[VirtioMmioDevice]) -> Vec<u8> {
    let mut body = Vec::new();
    aml::named_package(&mut body, b"_S5_", &[S5_SLP_TYP, S5_SLP_TYP, 0, 0]);
    let mut dev = Vec::new();
    // A constant: the test below pins that it encodes.
    aml::named_dword(&mut dev, b"_HID", aml::eisa_id(b"PNP0501").unwrap_or(0));
    aml::named_integer(&mut dev, b"_UID", 0);
    aml::named_buffer(
        &mut dev,
        b"_CRS",
        &aml::io_and_interrupt(com1.port, com1.ports, com1.gsi),
    );
    aml::device(&mut body, b"COM1", &dev);
    // virtio-mmio transports, as Linux's virtio_mmio driver matches them
    // in ACPI (and QEMU's microvm declares them): without ISA IRQs the
    // command line's `virtio_mmio.device=…:IRQ` cannot name their GSIs.
    for (i, v) in virtio.iter().enumerate().take(MAX_DSDT_VIRTIO) {
        let mut dev = Vec::new();
        aml::named_string(&mut dev, b"_HID", VIRTIO_MMIO_HID);
        aml::named_integer(&mut dev, b"_UID", i as u8);
        aml::named_buffer(
            &mut dev,
            b"_CRS",
            &aml::memory_and_interrupt(v.base, v.len, v.gsi),
        );
        aml::device(&mut body, &virtio_device_name(i), &dev);
    }
    let mut t = Table::new(b"DSDT", DSDT_REVISION);
    t.raw(&body);
    t.finish()
}

/// The ACPI ID Linux's virtio_mmio driver binds.
const VIRTIO_MMIO_HID: &str = "LNRO0005";
/// Device names `VR00`..`VR99` leave room for far more transports than a
/// machine has; more are not declared.
const MAX_DSDT_VIRTIO: usize = 100;

/// `VRnn`, the DSDT name of virtio-mmio transport `i` (< 100).
fn virtio_device_name(i: usize) -> [u8; 4] {
    [
        b'V',
        b'R',
        b'0' + (i / 10 % 10) as u8,
        b'0' + (i % 10) as u8,
    ]
}

/// A virtio-mmio transport the hardware-reduced DSDT declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtioMmioDevice {
    /// Guest-physical base of its registers (below 4 GiB).
    pub base: u32,
    /// Length of its window.
    pub len: u32,
    /// Its interrupt's GSI.
    pub gsi: u32,
}

/// COM1 as the hardware-reduced DSDT declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Com1 {
    /// First I/O port.
    pub port: u16,
    /// Number of ports.
    pub ports: u8,
    /// Its interrupt's GSI (an IOAPIC pin).
    pub gsi: u32,
}

/// The sleep registers of a hardware-reduced FADT (I/O ports, one byte
/// each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SleepRegisters {
    /// SLEEP_CONTROL_REG: SLP_TYP in bits 4:2, SLP_EN bit 5.
    pub control: u16,
    /// SLEEP_STATUS_REG: WAK_STS bit 7.
    pub status: u16,
}

/// The hardware-reduced FADT (revision 5): the DSDT, the flags, and the
/// sleep control and status registers; every PM1/PM timer/GPE block, the
/// SCI and the FACS are absent (ACPI 6.x, 4.1 "Hardware-Reduced ACPI").
pub(super) fn fadt_reduced(dsdt: u32, sleep: SleepRegisters) -> Vec<u8> {
    let mut t = Table::new(b"FACP", FADT_REDUCED_REVISION);
    t.u32(0) // 36 FIRMWARE_CTRL: no FACS
        .u32(dsdt) // 40 DSDT
        .u8(0) // 44 reserved
        .u8(0) // 45 Preferred_PM_Profile: unspecified
        .u16(0) // 46 SCI_INT: none
        .u32(0) // 48 SMI_CMD
        .raw(&[0; 4]) // 52 ACPI_ENABLE, ACPI_DISABLE, S4BIOS_REQ, PSTATE_CNT
        .raw(&[0; 4 * 7]) // 56..84 PM1a/b EVT, PM1a/b CNT, PM2 CNT, PM_TMR, GPE0
        .u32(0) // 84 GPE1_BLK
        .raw(&[0; 8]) // 88..96 block lengths, GPE1_BASE, CST_CNT
        .u16(P_LVL2_LAT) // 96
        .u16(P_LVL3_LAT) // 98
        .raw(&[0; 8]) // 100..108 FLUSH_SIZE/STRIDE, DUTY, DAY/MON_ALRM
        .u8(RTC_CENTURY_INDEX) // 108 CENTURY
        .u16(IAPC_BOOT_ARCH) // 109
        .u8(0) // 111 reserved
        .u32(FADT_REDUCED_FLAGS) // 112 Flags
        .gas_none() // 116 RESET_REG
        .u8(0) // 128 RESET_VALUE
        .u16(0) // 129 ARM_BOOT_ARCH
        .u8(0) // 131 FADT minor version
        .u64(0) // 132 X_FIRMWARE_CTRL
        .u64(dsdt.into()); // 140 X_DSDT
    for _ in 0..8 {
        // 148..244: X_PM1a/b_EVT, X_PM1a/b_CNT, X_PM2_CNT, X_PM_TMR, X_GPE0/1
        t.gas_none();
    }
    t.gas_io(sleep.control, 8, GAS_ACCESS_BYTE) // 244 SLEEP_CONTROL_REG
        .gas_io(sleep.status, 8, GAS_ACCESS_BYTE); // 256 SLEEP_STATUS_REG
    t.finish()
}

/// What the FADT points at.
pub(super) struct FadtParams {
    pub facs: u32,
    pub dsdt: u32,
    pub pm: PmPorts,
    pub sci_irq: u8,
}

/// The FADT (signature "FACP"), revision 3. Both the 32-bit and the X_
/// fields are filled with the same values: kvm-unit-tests reads the 32-bit
/// ones (FIRMWARE_CTRL at 36, PM1a_EVT_BLK at 56, PM1a_CNT_BLK at 64,
/// PM_TMR_BLK at 76), ACPI 2.0+ OSes prefer the X_ ones, and equal values
/// are explicitly allowed. The exception is X_FIRMWARE_CTRL, left 0 (the
/// FACS is below 4 GiB, so FIRMWARE_CTRL alone names it, as on QEMU's
/// machines): with both set, Linux's ACPICA installs the FACS twice and
/// prints and reserves it twice, two more console lines through a trapping
/// UART on every boot.
pub(super) fn fadt(p: &FadtParams) -> Vec<u8> {
    let mut t = Table::new(b"FACP", FADT_REVISION);
    t.u32(p.facs) // 36 FIRMWARE_CTRL
        .u32(p.dsdt) // 40 DSDT
        .u8(0) // 44 reserved (INT_MODEL in ACPI 1.0)
        .u8(0) // 45 Preferred_PM_Profile: unspecified
        .u16(p.sci_irq.into()) // 46 SCI_INT
        .u32(0) // 48 SMI_CMD: none, so the platform is always in ACPI mode
        .u8(0) // 52 ACPI_ENABLE
        .u8(0) // 53 ACPI_DISABLE
        .u8(0) // 54 S4BIOS_REQ
        .u8(0) // 55 PSTATE_CNT
        .u32(p.pm.pm1a_evt.into()) // 56 PM1a_EVT_BLK
        .u32(0) // 60 PM1b_EVT_BLK
        .u32(p.pm.pm1a_cnt.into()) // 64 PM1a_CNT_BLK
        .u32(0) // 68 PM1b_CNT_BLK
        .u32(0) // 72 PM2_CNT_BLK
        .u32(p.pm.pm_tmr.into()) // 76 PM_TMR_BLK
        .u32(0) // 80 GPE0_BLK: none
        .u32(0) // 84 GPE1_BLK: none
        .u8(PM1_EVT_LEN) // 88 PM1_EVT_LEN
        .u8(PM1_CNT_LEN) // 89 PM1_CNT_LEN
        .u8(0) // 90 PM2_CNT_LEN
        .u8(PM_TMR_LEN) // 91 PM_TMR_LEN
        .u8(0) // 92 GPE0_BLK_LEN
        .u8(0) // 93 GPE1_BLK_LEN
        .u8(0) // 94 GPE1_BASE
        .u8(0) // 95 CST_CNT
        .u16(P_LVL2_LAT) // 96
        .u16(P_LVL3_LAT) // 98
        .u16(0) // 100 FLUSH_SIZE
        .u16(0) // 102 FLUSH_STRIDE
        .u8(0) // 104 DUTY_OFFSET
        .u8(0) // 105 DUTY_WIDTH
        .u8(0) // 106 DAY_ALRM
        .u8(0) // 107 MON_ALRM
        .u8(RTC_CENTURY_INDEX) // 108 CENTURY: the RTC's century byte, as QEMU
        .u16(IAPC_BOOT_ARCH) // 109
        .u8(0) // 111 reserved
        .u32(FADT_FLAGS) // 112 Flags
        .gas_none() // 116 RESET_REG (RESET_REG_SUP is clear)
        .u8(0) // 128 RESET_VALUE
        .raw(&[0; 3]) // 129 reserved
        .u64(0) // 132 X_FIRMWARE_CTRL: 0, FIRMWARE_CTRL names the FACS
        .u64(p.dsdt.into()) // 140 X_DSDT
        .gas_io(p.pm.pm1a_evt, PM1_EVT_LEN * 8, GAS_ACCESS_WORD) // 148
        .gas_none() // 160 X_PM1b_EVT_BLK
        .gas_io(p.pm.pm1a_cnt, PM1_CNT_LEN * 8, GAS_ACCESS_WORD) // 172
        .gas_none() // 184 X_PM1b_CNT_BLK
        .gas_none() // 196 X_PM2_CNT_BLK
        .gas_io(p.pm.pm_tmr, PM_TMR_LEN * 8, GAS_ACCESS_DWORD) // 208
        .gas_none() // 220 X_GPE0_BLK
        .gas_none(); // 232 X_GPE1_BLK
    t.finish()
}

/// What the MADT describes.
pub(super) struct MadtParams {
    pub cpus: u32,
    pub lapic_addr: u32,
    pub ioapic_id: u8,
    pub ioapic_addr: u32,
    /// The PC's legacy interrupts: the 8259s (PCAT_COMPAT), the PIT's
    /// IRQ0 -> GSI2 and the SCI's overrides. The hardware-reduced machine
    /// has none of them.
    pub legacy: Option<LegacyIrqs>,
}

/// See [`MadtParams::legacy`].
pub(super) struct LegacyIrqs {
    pub sci_irq: u8,
}

/// The MADT (signature "APIC"): one enabled local APIC per vCPU with APIC
/// ID = processor UID = vCPU index (x2APIC structures from ID 255 on), the
/// IOAPIC at GSI 0, the PC's IRQ0 -> GSI2 override, the SCI as level/high
/// (as QEMU declares it) and LINT1 as NMI on every CPU (plus the x2APIC
/// form of that when x2APIC structures are present, since the xAPIC NMI
/// structure only covers xAPIC processor UIDs).
pub(super) fn madt(p: &MadtParams) -> Vec<u8> {
    let mut t = Table::new(b"APIC", MADT_REVISION);
    let flags = if p.legacy.is_some() {
        MADT_PCAT_COMPAT
    } else {
        0
    };
    t.u32(p.lapic_addr).u32(flags);
    for id in 0..p.cpus {
        if id <= XAPIC_MAX_ID {
            t.u8(MADT_LAPIC).u8(MADT_LAPIC_LEN);
            t.u8(id as u8).u8(id as u8).u32(LAPIC_ENABLED);
        } else {
            t.u8(MADT_X2APIC).u8(MADT_X2APIC_LEN).u16(0);
            t.u32(id).u32(LAPIC_ENABLED).u32(id);
        }
    }
    t.u8(MADT_IOAPIC).u8(MADT_IOAPIC_LEN);
    t.u8(p.ioapic_id).u8(0).u32(p.ioapic_addr).u32(0);
    if let Some(legacy) = &p.legacy {
        // The PIT's IRQ0 is wired to IOAPIC pin 2 on every PC (and KVM's
        // default routing does the same).
        t.u8(MADT_ISO).u8(MADT_ISO_LEN);
        t.u8(ISA_BUS).u8(0).u32(2).u16(INTI_CONFORMS);
        t.u8(MADT_ISO).u8(MADT_ISO_LEN);
        t.u8(ISA_BUS)
            .u8(legacy.sci_irq)
            .u32(legacy.sci_irq.into())
            .u16(INTI_ACTIVE_HIGH_LEVEL);
    }
    t.u8(MADT_LAPIC_NMI).u8(MADT_LAPIC_NMI_LEN);
    t.u8(NMI_ALL_PROCESSORS).u16(INTI_CONFORMS).u8(NMI_LINT);
    if p.cpus > XAPIC_MAX_ID + 1 {
        t.u8(MADT_X2APIC_NMI).u8(MADT_X2APIC_NMI_LEN);
        t.u16(INTI_CONFORMS)
            .u32(X2NMI_ALL_PROCESSORS)
            .u8(NMI_LINT)
            .raw(&[0; 3]);
    }
    t.finish()
}

/// Length of the MADT for `cpus` vCPUs, without building it (the legacy
/// overrides counted: the longer of the two forms).
pub(super) fn madt_len(cpus: u32) -> usize {
    let xapic = cpus.min(XAPIC_MAX_ID + 1) as usize;
    let x2apic = cpus.saturating_sub(XAPIC_MAX_ID + 1) as usize;
    HEADER_LEN
        + 8
        + xapic * usize::from(MADT_LAPIC_LEN)
        + x2apic * usize::from(MADT_X2APIC_LEN)
        + usize::from(MADT_IOAPIC_LEN)
        + 2 * usize::from(MADT_ISO_LEN)
        + usize::from(MADT_LAPIC_NMI_LEN)
        + if x2apic > 0 {
            usize::from(MADT_X2APIC_NMI_LEN)
        } else {
            0
        }
}

/// The MCFG: one ECAM allocation for segment 0, buses 0..=last_bus.
pub(super) fn mcfg(base: u64, last_bus: u8) -> Vec<u8> {
    let mut t = Table::new(b"MCFG", MCFG_REVISION);
    t.u64(0); // reserved
    t.u64(base).u16(0).u8(0).u8(last_bus).u32(0);
    t.finish()
}
