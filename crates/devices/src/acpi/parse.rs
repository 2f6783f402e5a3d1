//! An independent ACPI walker: finds the RSDP the way a guest does, follows
//! RSDT and XSDT, and verifies every signature, length and checksum on the
//! way. It shares no code with the builder (its own byte readers, its own
//! offsets from the spec), so a builder bug cannot hide behind a matching
//! parser bug. Tests and the fuzz targets use it; it is built only for
//! them (`test-utils` feature), never into a trapline binary.

use std::ops::Range;

/// Why a walk failed.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    /// No "RSD PTR " at any 16-byte boundary.
    #[error("no RSDP found")]
    NoRsdp,
    /// A structure points outside the bytes given.
    #[error("{what} at {addr:#x} (+{len:#x}) is outside the area")]
    OutOfArea {
        /// What was being read.
        what: &'static str,
        /// Its address.
        addr: u64,
        /// Bytes needed.
        len: u64,
    },
    /// A checksum does not sum to 0.
    #[error("{what} at {addr:#x}: bad checksum")]
    Checksum {
        /// Which structure.
        what: String,
        /// Its address.
        addr: u64,
    },
    /// A signature is not what the pointer promised.
    #[error("{addr:#x}: expected signature {expected}, found {found:?}")]
    Signature {
        /// Expected signature.
        expected: &'static str,
        /// Bytes found.
        found: String,
        /// Address.
        addr: u64,
    },
    /// A length or layout field is inconsistent.
    #[error("{what} at {addr:#x}: {why}")]
    Malformed {
        /// Which structure.
        what: String,
        /// Its address.
        addr: u64,
        /// What is wrong.
        why: &'static str,
    },
    /// Two structures overlap.
    #[error("{a} and {b} overlap")]
    Overlap {
        /// One structure.
        a: String,
        /// The other.
        b: String,
    },
}

/// One system description table found through the RSDT/XSDT or the FADT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sdt {
    /// Four-character signature.
    pub signature: String,
    /// Address.
    pub addr: u64,
    /// Header length field.
    pub len: u32,
    /// Header revision.
    pub revision: u8,
}

/// The FADT fields that matter to trapline's guests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fadt {
    /// Header revision.
    pub revision: u8,
    /// Table length.
    pub len: u32,
    /// FIRMWARE_CTRL (offset 36).
    pub firmware_ctrl: u32,
    /// DSDT (40).
    pub dsdt: u32,
    /// SCI_INT (46).
    pub sci_int: u16,
    /// SMI_CMD (48).
    pub smi_cmd: u32,
    /// PM1a_EVT_BLK (56).
    pub pm1a_evt_blk: u32,
    /// PM1a_CNT_BLK (64).
    pub pm1a_cnt_blk: u32,
    /// PM_TMR_BLK (76).
    pub pm_tmr_blk: u32,
    /// PM1_EVT_LEN (88).
    pub pm1_evt_len: u8,
    /// PM1_CNT_LEN (89).
    pub pm1_cnt_len: u8,
    /// PM_TMR_LEN (91).
    pub pm_tmr_len: u8,
    /// Flags (112).
    pub flags: u32,
    /// X_FIRMWARE_CTRL (132), if the table is long enough.
    pub x_firmware_ctrl: Option<u64>,
    /// X_DSDT (140).
    pub x_dsdt: Option<u64>,
    /// Address of X_PM1a_EVT_BLK (GAS at 148).
    pub x_pm1a_evt_blk: Option<u64>,
    /// Address of X_PM1a_CNT_BLK (GAS at 172).
    pub x_pm1a_cnt_blk: Option<u64>,
    /// Address of X_PM_TMR_BLK (GAS at 208).
    pub x_pm_tmr_blk: Option<u64>,
    /// SLEEP_CONTROL_REG (GAS at 244, ACPI 5.0+) as (address space,
    /// access size, address).
    pub sleep_control: Option<(u8, u8, u64)>,
    /// SLEEP_STATUS_REG (GAS at 256).
    pub sleep_status: Option<(u8, u8, u64)>,
}

/// A MADT local APIC (type 0) or local x2APIC (type 9) structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalApic {
    /// ACPI processor UID.
    pub uid: u32,
    /// APIC ID.
    pub apic_id: u32,
    /// Flags bit 0.
    pub enabled: bool,
    /// Came from an x2APIC structure.
    pub x2apic: bool,
}

/// A MADT IOAPIC structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoApic {
    /// IOAPIC ID.
    pub id: u8,
    /// MMIO address.
    pub addr: u32,
    /// First GSI.
    pub gsi_base: u32,
}

/// A MADT interrupt source override.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceOverride {
    /// Bus (0 = ISA).
    pub bus: u8,
    /// ISA IRQ.
    pub source: u8,
    /// GSI it is wired to.
    pub gsi: u32,
    /// MPS INTI flags.
    pub flags: u16,
}

/// The decoded MADT.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Madt {
    /// Local interrupt controller address.
    pub lapic_addr: u32,
    /// Flags (bit 0 PCAT_COMPAT).
    pub flags: u32,
    /// Local APIC and x2APIC structures, in table order.
    pub lapics: Vec<LocalApic>,
    /// IOAPICs.
    pub ioapics: Vec<IoApic>,
    /// Interrupt source overrides.
    pub overrides: Vec<SourceOverride>,
    /// Local APIC NMI structures (type 4) as (uid, flags, lint).
    pub nmis: Vec<(u8, u16, u8)>,
    /// Local x2APIC NMI structures (type 10) as (uid, flags, lint).
    pub x2apic_nmis: Vec<(u32, u16, u8)>,
    /// Types of structures not decoded above.
    pub other: Vec<u8>,
}

/// One MCFG allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McfgAlloc {
    /// ECAM base.
    pub base: u64,
    /// PCI segment.
    pub segment: u16,
    /// First bus.
    pub start_bus: u8,
    /// Last bus.
    pub end_bus: u8,
}

/// Everything the walk found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Address of the RSDP.
    pub rsdp: u64,
    /// RSDP revision.
    pub rsdp_revision: u8,
    /// RSDT entries, if the RSDP names an RSDT.
    pub rsdt: Option<Vec<u64>>,
    /// XSDT entries, if the RSDP is revision 2+ and names an XSDT.
    pub xsdt: Option<Vec<u64>>,
    /// Every table reached (through RSDT, XSDT, FADT), each once, sorted
    /// by address; RSDT and XSDT included. The FACS is listed with its own
    /// length field.
    pub tables: Vec<Sdt>,
    /// The FADT, if listed.
    pub fadt: Option<Fadt>,
    /// The `_S5` package's first value (SLP_TYPa), if the DSDT has one.
    pub s5_slp_typ: Option<u8>,
    /// The `_S3` package's first value (SLP_TYPa), if the DSDT has one.
    pub s3_slp_typ: Option<u8>,
    /// The MADT, if listed.
    pub madt: Option<Madt>,
    /// MCFG allocations, if an MCFG is listed.
    pub mcfg: Option<Vec<McfgAlloc>>,
}

impl Parsed {
    /// The first table with this signature, as a guest's lookup finds it.
    pub fn find(&self, signature: &str) -> Option<&Sdt> {
        self.tables.iter().find(|t| t.signature == signature)
    }
}

/// Little-endian readers over the area, bounds-checked against it.
struct Mem<'a> {
    base: u64,
    bytes: &'a [u8],
}

impl<'a> Mem<'a> {
    fn range(&self, what: &'static str, addr: u64, len: u64) -> Result<Range<usize>, ParseError> {
        let err = ParseError::OutOfArea { what, addr, len };
        let start = addr.checked_sub(self.base).ok_or(err.clone())?;
        let end = start.checked_add(len).ok_or(err.clone())?;
        if end > self.bytes.len() as u64 {
            return Err(err);
        }
        Ok(start as usize..end as usize)
    }

    fn slice(&self, what: &'static str, addr: u64, len: u64) -> Result<&'a [u8], ParseError> {
        let r = self.range(what, addr, len)?;
        Ok(&self.bytes[r])
    }
}

fn le(bytes: &[u8], at: usize, n: usize) -> u64 {
    bytes[at..at + n]
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

fn sum_is_zero(bytes: &[u8]) -> bool {
    bytes.iter().map(|&b| u32::from(b)).sum::<u32>() % 256 == 0
}

fn sig_string(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '?'
            }
        })
        .collect()
}

/// Minimum SDT header.
const SDT_HEADER: u64 = 36;

/// Read and verify an SDT at `addr`: signature (if `expect`), length,
/// checksum. Returns the whole table.
fn sdt<'a>(mem: &Mem<'a>, addr: u64, expect: Option<&'static str>) -> Result<&'a [u8], ParseError> {
    let head = mem.slice("table header", addr, SDT_HEADER)?;
    if let Some(e) = expect {
        if &head[..4] != e.as_bytes() {
            return Err(ParseError::Signature {
                expected: e,
                found: sig_string(&head[..4]),
                addr,
            });
        }
    }
    let len = le(head, 4, 4);
    if len < SDT_HEADER {
        return Err(ParseError::Malformed {
            what: sig_string(&head[..4]),
            addr,
            why: "length shorter than the header",
        });
    }
    let table = mem.slice("table", addr, len)?;
    if !sum_is_zero(table) {
        return Err(ParseError::Checksum {
            what: sig_string(&head[..4]),
            addr,
        });
    }
    Ok(table)
}

/// Scan for the RSDP at 16-byte boundaries, as kvm-unit-tests does over
/// 0xE0000–0xFFFFF.
fn find_rsdp(mem: &Mem<'_>) -> Option<u64> {
    // An area reaching the top of the address space has no 16-byte
    // boundary past its end to count to (found by the acpi_parse fuzzer).
    let first = mem.base.checked_next_multiple_of(16)?;
    let end = mem.base.saturating_add(mem.bytes.len() as u64);
    (first..end)
        .step_by(16)
        .find(|&a| mem.slice("rsdp", a, 8).is_ok_and(|s| s == b"RSD PTR "))
}

/// Walk the tables in `bytes`, which the guest sees at `base`.
pub fn parse(base: u64, bytes: &[u8]) -> Result<Parsed, ParseError> {
    let mem = Mem { base, bytes };
    let mut out = Parsed::default();
    let rsdp = find_rsdp(&mem).ok_or(ParseError::NoRsdp)?;
    out.rsdp = rsdp;
    let (revision, rsdt_addr, xsdt_addr) = read_rsdp(&mem, rsdp)?;
    out.rsdp_revision = revision;

    let mut tables: Vec<Sdt> = Vec::new();
    if rsdt_addr != 0 {
        out.rsdt = Some(read_root(&mem, rsdt_addr, "RSDT", 4, &mut tables)?);
    }
    if xsdt_addr != 0 {
        out.xsdt = Some(read_root(&mem, xsdt_addr, "XSDT", 8, &mut tables)?);
    }
    for addr in listed(&out) {
        let t = sdt(&mem, addr, None)?;
        note(t, addr, &mut tables);
        match &t[..4] {
            b"FACP" => read_fadt(&mem, t, addr, &mut out, &mut tables)?,
            b"APIC" => out.madt = Some(decode_madt(t, addr)?),
            b"MCFG" => out.mcfg = Some(decode_mcfg(t, addr)?),
            _ => {}
        }
    }
    check_no_overlap(rsdp, &tables)?;
    tables.sort_by_key(|t| t.addr);
    out.tables = tables;
    Ok(out)
}

/// The RSDP at `rsdp`, checked: its revision and the RSDT's and (revision
/// 2+) the XSDT's addresses, 0 where it names none.
fn read_rsdp(mem: &Mem<'_>, rsdp: u64) -> Result<(u8, u64, u64), ParseError> {
    // ACPI 1.0 part (20 bytes), then the 2.0 extension.
    let v1 = mem.slice("RSDP", rsdp, 20)?;
    if !sum_is_zero(v1) {
        return Err(ParseError::Checksum {
            what: "RSDP".into(),
            addr: rsdp,
        });
    }
    let revision = v1[15];
    let rsdt_addr = le(v1, 16, 4);
    let mut xsdt_addr = 0;
    if revision >= 2 {
        let len = le(mem.slice("RSDP", rsdp, 24)?, 20, 4);
        if len < 36 {
            return Err(ParseError::Malformed {
                what: "RSDP".into(),
                addr: rsdp,
                why: "revision 2 RSDP shorter than 36 bytes",
            });
        }
        let full = mem.slice("RSDP", rsdp, len)?;
        if !sum_is_zero(full) {
            return Err(ParseError::Checksum {
                what: "RSDP (extended)".into(),
                addr: rsdp,
            });
        }
        xsdt_addr = le(full, 24, 8);
    }
    Ok((revision, rsdt_addr, xsdt_addr))
}

/// Lists `t` (at `addr`) among the tables reached, once.
fn note(t: &[u8], addr: u64, tables: &mut Vec<Sdt>) {
    if !tables.iter().any(|s| s.addr == addr) {
        tables.push(Sdt {
            signature: sig_string(&t[..4]),
            addr,
            len: le(t, 4, 4) as u32,
            revision: t[8],
        });
    }
}

/// The RSDT or XSDT (`signature`) at `addr`: its entries of `entry` bytes.
fn read_root(
    mem: &Mem<'_>,
    addr: u64,
    signature: &'static str,
    entry: usize,
    tables: &mut Vec<Sdt>,
) -> Result<Vec<u64>, ParseError> {
    let t = sdt(mem, addr, Some(signature))?;
    if (t.len() - 36) % entry != 0 {
        return Err(ParseError::Malformed {
            what: signature.into(),
            addr,
            why: if entry == 4 {
                "entries not a multiple of 4 bytes"
            } else {
                "entries not a multiple of 8 bytes"
            },
        });
    }
    note(t, addr, tables);
    Ok((36..t.len())
        .step_by(entry)
        .map(|o| le(t, o, entry))
        .collect())
}

/// Every table either list points at, each once (the XSDT's first).
fn listed(out: &Parsed) -> Vec<u64> {
    let mut listed: Vec<u64> = Vec::new();
    for &a in out.xsdt.iter().chain(out.rsdt.iter()).flatten() {
        if !listed.contains(&a) {
            listed.push(a);
        }
    }
    listed
}

/// The FADT `t` at `addr`, and the FACS and DSDT it points at (the DSDT's
/// sleep types).
fn read_fadt(
    mem: &Mem<'_>,
    t: &[u8],
    addr: u64,
    out: &mut Parsed,
    tables: &mut Vec<Sdt>,
) -> Result<(), ParseError> {
    let fadt = decode_fadt(t, addr)?;
    if fadt.firmware_ctrl != 0 {
        tables.push(read_facs(mem, u64::from(fadt.firmware_ctrl))?);
    }
    if fadt.dsdt != 0 {
        let dsdt_addr = u64::from(fadt.dsdt);
        let d = sdt(mem, dsdt_addr, Some("DSDT"))?;
        note(d, dsdt_addr, tables);
        out.s5_slp_typ = find_sleep_type(&d[36..], b"_S5_");
        out.s3_slp_typ = find_sleep_type(&d[36..], b"_S3_");
    }
    out.fadt = Some(fadt);
    Ok(())
}

/// The FACS at `facs_addr`: no checksum, signature and length only.
fn read_facs(mem: &Mem<'_>, facs_addr: u64) -> Result<Sdt, ParseError> {
    let facs = mem.slice("FACS", facs_addr, 64)?;
    if &facs[..4] != b"FACS" {
        return Err(ParseError::Signature {
            expected: "FACS",
            found: sig_string(&facs[..4]),
            addr: facs_addr,
        });
    }
    let len = le(facs, 4, 4);
    if len < 64 || facs_addr % 64 != 0 {
        return Err(ParseError::Malformed {
            what: "FACS".into(),
            addr: facs_addr,
            why: "shorter than 64 bytes or not 64-byte aligned",
        });
    }
    mem.slice("FACS", facs_addr, len)?;
    Ok(Sdt {
        signature: "FACS".into(),
        addr: facs_addr,
        len: len as u32,
        revision: facs[32],
    })
}

/// The MCFG's allocations.
fn decode_mcfg(t: &[u8], addr: u64) -> Result<Vec<McfgAlloc>, ParseError> {
    if t.len() < 44 || (t.len() - 44) % 16 != 0 {
        return Err(ParseError::Malformed {
            what: "MCFG".into(),
            addr,
            why: "allocations not a multiple of 16 bytes",
        });
    }
    Ok((44..t.len())
        .step_by(16)
        .map(|o| McfgAlloc {
            base: le(t, o, 8),
            segment: le(t, o + 8, 2) as u16,
            start_bus: t[o + 10],
            end_bus: t[o + 11],
        })
        .collect())
}

/// No two structures (the RSDP's 36 bytes and every table) may overlap.
fn check_no_overlap(rsdp: u64, tables: &[Sdt]) -> Result<(), ParseError> {
    let mut regions: Vec<(u64, u64, String)> = vec![(rsdp, 36, "RSDP".into())];
    regions.extend(
        tables
            .iter()
            .map(|t| (t.addr, u64::from(t.len), t.signature.clone())),
    );
    regions.sort();
    for w in regions.windows(2) {
        if w[0].0 + w[0].1 > w[1].0 {
            return Err(ParseError::Overlap {
                a: w[0].2.clone(),
                b: w[1].2.clone(),
            });
        }
    }
    Ok(())
}

/// Decode the FADT fields, checking the length covers them.
fn decode_fadt(t: &[u8], addr: u64) -> Result<Fadt, ParseError> {
    // ACPI 1.0's FADT is 116 bytes; anything shorter lacks the flags.
    if t.len() < 116 {
        return Err(ParseError::Malformed {
            what: "FACP".into(),
            addr,
            why: "shorter than 116 bytes",
        });
    }
    let gas_addr = |off: usize| (t.len() >= off + 12).then(|| le(t, off + 4, 8));
    let fadt = Fadt {
        revision: t[8],
        len: t.len() as u32,
        firmware_ctrl: le(t, 36, 4) as u32,
        dsdt: le(t, 40, 4) as u32,
        sci_int: le(t, 46, 2) as u16,
        smi_cmd: le(t, 48, 4) as u32,
        pm1a_evt_blk: le(t, 56, 4) as u32,
        pm1a_cnt_blk: le(t, 64, 4) as u32,
        pm_tmr_blk: le(t, 76, 4) as u32,
        pm1_evt_len: t[88],
        pm1_cnt_len: t[89],
        pm_tmr_len: t[91],
        flags: le(t, 112, 4) as u32,
        x_firmware_ctrl: (t.len() >= 140).then(|| le(t, 132, 8)),
        x_dsdt: (t.len() >= 148).then(|| le(t, 140, 8)),
        x_pm1a_evt_blk: gas_addr(148),
        x_pm1a_cnt_blk: gas_addr(172),
        x_pm_tmr_blk: gas_addr(208),
        sleep_control: (t.len() >= 256).then(|| (t[244], t[247], le(t, 248, 8))),
        sleep_status: (t.len() >= 268).then(|| (t[256], t[259], le(t, 260, 8))),
    };
    // ACPI 2.0+ (revision 3+) FADTs carry the X_ fields.
    if fadt.revision >= 3 && t.len() < 244 {
        return Err(ParseError::Malformed {
            what: "FACP".into(),
            addr,
            why: "revision 3+ but shorter than 244 bytes",
        });
    }
    // Where both the 32-bit and X_ forms are given they must agree.
    let agree = |x: Option<u64>, v: u32| match x {
        Some(x) if x != 0 && v != 0 => x == u64::from(v),
        _ => true,
    };
    if !(agree(fadt.x_firmware_ctrl, fadt.firmware_ctrl)
        && agree(fadt.x_dsdt, fadt.dsdt)
        && agree(fadt.x_pm1a_evt_blk, fadt.pm1a_evt_blk)
        && agree(fadt.x_pm1a_cnt_blk, fadt.pm1a_cnt_blk)
        && agree(fadt.x_pm_tmr_blk, fadt.pm_tmr_blk))
    {
        return Err(ParseError::Malformed {
            what: "FACP".into(),
            addr,
            why: "32-bit and X_ fields disagree",
        });
    }
    Ok(fadt)
}

/// Decode MADT structures; they must exactly fill the table.
fn decode_madt(t: &[u8], addr: u64) -> Result<Madt, ParseError> {
    let bad = |why| ParseError::Malformed {
        what: "APIC".into(),
        addr,
        why,
    };
    if t.len() < 44 {
        return Err(bad("shorter than 44 bytes"));
    }
    let mut m = Madt {
        lapic_addr: le(t, 36, 4) as u32,
        flags: le(t, 40, 4) as u32,
        ..Madt::default()
    };
    let mut o = 44;
    while o < t.len() {
        if o + 2 > t.len() {
            return Err(bad("truncated structure header"));
        }
        let (kind, len) = (t[o], usize::from(t[o + 1]));
        if len < 2 || o + len > t.len() {
            return Err(bad("structure length runs past the table"));
        }
        let s = &t[o..o + len];
        let want = match kind {
            0 => 8,
            1 => 12,
            2 => 10,
            4 => 6,
            9 => 16,
            10 => 12,
            _ => len,
        };
        if len != want {
            return Err(bad("structure has the wrong length for its type"));
        }
        match kind {
            0 => m.lapics.push(LocalApic {
                uid: s[2].into(),
                apic_id: s[3].into(),
                enabled: s[4] & 1 != 0,
                x2apic: false,
            }),
            1 => m.ioapics.push(IoApic {
                id: s[2],
                addr: le(s, 4, 4) as u32,
                gsi_base: le(s, 8, 4) as u32,
            }),
            2 => m.overrides.push(SourceOverride {
                bus: s[2],
                source: s[3],
                gsi: le(s, 4, 4) as u32,
                flags: le(s, 8, 2) as u16,
            }),
            4 => m.nmis.push((s[2], le(s, 3, 2) as u16, s[5])),
            9 => m.lapics.push(LocalApic {
                uid: le(s, 12, 4) as u32,
                apic_id: le(s, 4, 4) as u32,
                enabled: s[8] & 1 != 0,
                x2apic: true,
            }),
            10 => m
                .x2apic_nmis
                .push((le(s, 4, 4) as u32, le(s, 2, 2) as u16, s[8])),
            other => m.other.push(other),
        }
        o += len;
    }
    Ok(m)
}

/// Find `Name(<name>, Package(){ SLP_TYPa, ... })` (`_S3_`, `_S5_`) in AML
/// and return SLP_TYPa. Handles the encodings iasl emits for small integers.
fn find_sleep_type(aml: &[u8], name: &[u8; 4]) -> Option<u8> {
    let at = aml.windows(4).position(|w| w == name)? + 4;
    let rest = aml.get(at..)?;
    if *rest.first()? != 0x12 {
        return None; // not a PackageOp
    }
    // PkgLength: bits 7:6 of the lead byte say how many bytes follow.
    let follow = usize::from(rest.get(1)? >> 6);
    let elems = rest.get(2 + follow..)?;
    if *elems.first()? == 0 {
        return None; // empty package
    }
    match *elems.get(1)? {
        0x00 => Some(0),
        0x01 => Some(1),
        0x0A => elems.get(2).copied(),
        _ => None,
    }
}

#[cfg(test)]
mod overflow_tests {
    use super::*;

    #[test]
    fn the_top_of_the_address_space_is_not_an_overflow() {
        // Regression: fuzz/corpus/acpi_parse/regress-top-of-address-space.
        assert!(matches!(parse(u64::MAX, &[]), Err(ParseError::NoRsdp)));
        assert!(matches!(
            parse(u64::MAX - 3, &[0; 8]),
            Err(ParseError::NoRsdp)
        ));
    }
}
