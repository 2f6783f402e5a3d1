//! Builder output checked by the independent walker in [`super::parse`].

use super::parse::{parse, IoApic, LocalApic, McfgAlloc, ParseError, SourceOverride};
use super::*;
use crate::pm_timer::{S3_SLP_TYP, S5_SLP_TYP};

fn build(cpus: u32) -> AcpiTables {
    AcpiBuilder::new().cpus(cpus).build().unwrap()
}

fn u32_at(t: &AcpiTables, gpa: u64) -> u32 {
    let o = (gpa - t.base) as usize;
    u32::from_le_bytes(t.bytes[o..o + 4].try_into().unwrap())
}

#[test]
fn area_shape_and_rsdp_position() {
    let t = build(1);
    assert_eq!(t.base, 0xE0000);
    assert_eq!(t.bytes.len(), 0x20000);
    let p = parse(t.base, &t.bytes).unwrap();
    assert_eq!(p.rsdp, t.rsdp);
    assert_eq!(p.rsdp % 16, 0);
    assert!((0xE0000..0x100000).contains(&p.rsdp));
    assert_eq!(p.rsdp_revision, 2);
    // Every structure lies inside the area.
    for info in &t.tables {
        assert!(info.gpa >= t.base && info.gpa + info.len as u64 <= t.base + t.bytes.len() as u64);
    }
}

#[test]
fn rsdt_and_xsdt_list_the_same_tables() {
    let t = AcpiBuilder::new()
        .cpus(2)
        .ecam(0xB000_0000, 256)
        .build()
        .unwrap();
    let p = parse(t.base, &t.bytes).unwrap();
    let rsdt = p.rsdt.clone().unwrap();
    let xsdt = p.xsdt.clone().unwrap();
    assert_eq!(rsdt, xsdt);
    let sigs: Vec<_> = rsdt
        .iter()
        .map(|a| {
            p.tables
                .iter()
                .find(|s| s.addr == *a)
                .unwrap()
                .signature
                .as_str()
        })
        .collect();
    assert_eq!(sigs, ["FACP", "APIC", "MCFG"]);
    // Everything the walk reached, and the builder's listing agrees.
    let mut found: Vec<_> = p
        .tables
        .iter()
        .map(|s| (s.signature.clone(), s.addr, s.len as usize))
        .collect();
    found.sort();
    let mut built: Vec<_> = t
        .tables
        .iter()
        .filter(|i| &i.signature != b"RSD ")
        .map(|i| {
            (
                String::from_utf8(i.signature.to_vec()).unwrap(),
                i.gpa,
                i.len,
            )
        })
        .collect();
    built.sort();
    assert_eq!(found, built);
}

#[test]
fn fadt_matches_qemu_pm_layout() {
    let t = build(1);
    let p = parse(t.base, &t.bytes).unwrap();
    let facp = p.find("FACP").unwrap();
    // The raw bytes at offset 76, as kvm-unit-tests reads them.
    assert_eq!(u32_at(&t, facp.addr + 76), 0x608);
    assert_eq!(u32_at(&t, facp.addr + 56), 0x600);
    assert_eq!(u32_at(&t, facp.addr + 64), 0x604);
    let f = p.fadt.clone().unwrap();
    assert_eq!(
        (f.pm1a_evt_blk, f.pm1a_cnt_blk, f.pm_tmr_blk),
        (0x600, 0x604, 0x608)
    );
    assert_eq!((f.pm1_evt_len, f.pm1_cnt_len, f.pm_tmr_len), (4, 2, 4));
    assert_eq!(f.flags, 0x80A5);
    assert_eq!(f.flags & (1 << 8), 0, "TMR_VAL_EXT clear: 24-bit timer");
    assert_eq!(f.sci_int, 9);
    assert_eq!(f.smi_cmd, 0);
    assert_eq!((f.revision, f.len), (3, 244));
    assert_eq!(f.x_pm_tmr_blk, Some(0x608));
    assert_eq!(f.x_dsdt, Some(u64::from(f.dsdt)));
    assert_eq!(
        f.x_firmware_ctrl,
        Some(0),
        "one FACS pointer: Linux installs (and prints) the FACS once"
    );
    // FACS and DSDT reached, FACS 64-byte aligned.
    let facs = p.find("FACS").unwrap();
    assert_eq!(facs.addr, u64::from(f.firmware_ctrl));
    assert_eq!(facs.addr % 64, 0);
    assert_eq!(p.find("DSDT").unwrap().addr, u64::from(f.dsdt));
    assert_eq!(p.s5_slp_typ, Some(S5_SLP_TYP));
    assert_eq!(p.s3_slp_typ, Some(S3_SLP_TYP));
}

#[test]
fn custom_pm_ports() {
    let ports = crate::pm_timer::PmPorts::at(0xb000).unwrap();
    let t = AcpiBuilder::new().pm_ports(ports).build().unwrap();
    let f = parse(t.base, &t.bytes).unwrap().fadt.unwrap();
    assert_eq!(
        (f.pm1a_evt_blk, f.pm1a_cnt_blk, f.pm_tmr_blk),
        (0xb000, 0xb004, 0xb008)
    );
    assert_eq!(f.x_pm1a_cnt_blk, Some(0xb004));
}

#[test]
fn madt_for_1_3_64_and_300_cpus() {
    for n in [1u32, 3, 64, 255, 300] {
        let t = build(n);
        let m = parse(t.base, &t.bytes).unwrap().madt.unwrap();
        assert_eq!(m.lapic_addr, 0xFEE0_0000);
        assert_eq!(m.flags & 1, 1, "PCAT_COMPAT");
        let expect: Vec<_> = (0..n)
            .map(|i| LocalApic {
                uid: i,
                apic_id: i,
                enabled: true,
                x2apic: i >= 255,
            })
            .collect();
        assert_eq!(m.lapics, expect, "n = {n}");
        assert_eq!(
            m.ioapics,
            [IoApic {
                id: 0,
                addr: 0xFEC0_0000,
                gsi_base: 0
            }]
        );
        assert!(m.overrides.contains(&SourceOverride {
            bus: 0,
            source: 0,
            gsi: 2,
            flags: 0
        }));
        assert!(m.overrides.iter().any(|o| o.source == 9 && o.gsi == 9));
        assert_eq!(m.nmis, [(0xff, 0, 1)]);
        let x2nmis: &[(u32, u16, u8)] = if n > 255 { &[(u32::MAX, 0, 1)] } else { &[] };
        assert_eq!(m.x2apic_nmis, x2nmis);
        assert!(m.other.is_empty());
        // The length estimate used for the size check is exact.
        let apic = t.tables.iter().find(|i| &i.signature == b"APIC").unwrap();
        assert_eq!(apic.len, tables::madt_len(n));
    }
}

#[test]
fn mcfg_base_and_buses() {
    let t = AcpiBuilder::new().ecam(0xB000_0000, 256).build().unwrap();
    let m = parse(t.base, &t.bytes).unwrap().mcfg.unwrap();
    assert_eq!(
        m,
        [McfgAlloc {
            base: 0xB000_0000,
            segment: 0,
            start_bus: 0,
            end_bus: 255
        }]
    );
    let t = AcpiBuilder::new().ecam(0xE000_0000, 16).build().unwrap();
    let m = parse(t.base, &t.bytes).unwrap().mcfg.unwrap();
    assert_eq!(
        m,
        [McfgAlloc {
            base: 0xE000_0000,
            segment: 0,
            start_bus: 0,
            end_bus: 15
        }]
    );
    let t = AcpiBuilder::new().ecam(0x1_0000_0000, 1).build().unwrap();
    assert_eq!(parse(t.base, &t.bytes).unwrap().mcfg.unwrap()[0].end_bus, 0);
    // Without an ECAM window there is no MCFG.
    let t = build(1);
    let p = parse(t.base, &t.bytes).unwrap();
    assert!(p.mcfg.is_none());
    assert_eq!(p.rsdt.unwrap().len(), 2);
}

#[test]
fn builder_errors() {
    assert_eq!(
        AcpiBuilder::new().cpus(0).build().err(),
        Some(AcpiError::NoCpus)
    );
    for (base, buses) in [
        (0xB000_0000, 0),
        (0xB000_0000, 257),
        (0xB000_1000, 1),
        (u64::MAX - 0xfffff, 2),
    ] {
        assert_eq!(
            AcpiBuilder::new().ecam(base, buses).build().err(),
            Some(AcpiError::BadEcam { base, buses })
        );
    }
    assert!(matches!(
        AcpiBuilder::new().cpus(100_000).build(),
        Err(AcpiError::AreaFull { .. })
    ));
    assert!(matches!(
        AcpiBuilder::new().cpus(u32::MAX).build(),
        Err(AcpiError::AreaFull { .. })
    ));
    // The largest counts that fit still validate.
    let t = AcpiBuilder::new()
        .cpus(4096)
        .ecam(0xB000_0000, 256)
        .build()
        .unwrap();
    assert_eq!(
        parse(t.base, &t.bytes).unwrap().madt.unwrap().lapics.len(),
        4096
    );
}

#[test]
fn every_checksum_is_covered_by_the_walker() {
    // Flip one byte inside each checksummed structure: the walker must
    // notice. This proves the parser really checks what it claims.
    let t = AcpiBuilder::new()
        .cpus(3)
        .ecam(0xB000_0000, 256)
        .build()
        .unwrap();
    for info in &t.tables {
        if &info.signature == b"FACS" {
            continue; // the FACS has no checksum
        }
        // A byte in the OEM ID (RSDP byte 10; SDT byte 11), which nothing
        // else interprets.
        let o = (info.gpa - t.base) as usize + 11;
        let mut bytes = t.bytes.clone();
        bytes[o] ^= 0x20;
        let err = parse(t.base, &bytes).unwrap_err();
        assert!(
            matches!(err, ParseError::Checksum { .. }),
            "{:?}: {err}",
            info.signature
        );
    }
    // The RSDP's extended checksum alone (a byte only it covers).
    let mut bytes = t.bytes.clone();
    bytes[(t.rsdp - t.base) as usize + 33] ^= 1;
    assert!(matches!(
        parse(t.base, &bytes),
        Err(ParseError::Checksum { .. })
    ));
}

#[test]
fn walker_rejects_broken_structures() {
    let t = build(2);
    let p = parse(t.base, &t.bytes).unwrap();
    // No RSDP at all.
    assert_eq!(parse(t.base, &vec![0u8; 0x20000]), Err(ParseError::NoRsdp));
    // An RSDT pointer outside the area.
    let mut bytes = t.bytes.clone();
    let r = (t.rsdp - t.base) as usize;
    bytes[r + 16..r + 20].copy_from_slice(&0x10_0000u32.to_le_bytes());
    assert!(matches!(
        parse(t.base, &bytes),
        Err(ParseError::OutOfArea { .. } | ParseError::Checksum { .. })
    ));
    // A table whose length runs past the area.
    let mut bytes = t.bytes.clone();
    let x = (p.find("XSDT").unwrap().addr - t.base) as usize;
    bytes[x + 4..x + 8].copy_from_slice(&0x10_0000u32.to_le_bytes());
    assert!(matches!(
        parse(t.base, &bytes),
        Err(ParseError::OutOfArea { .. })
    ));
}

#[test]
fn tables_do_not_overlap_and_are_aligned() {
    let t = AcpiBuilder::new()
        .cpus(64)
        .ecam(0xB000_0000, 256)
        .build()
        .unwrap();
    let mut infos = t.tables.clone();
    infos.sort_by_key(|i| i.gpa);
    for w in infos.windows(2) {
        assert!(
            w[0].gpa + w[0].len as u64 <= w[1].gpa,
            "{:?} {:?}",
            w[0],
            w[1]
        );
    }
    assert!(infos.iter().all(|i| i.gpa % 16 == 0));
    // The bytes outside the tables are zero.
    let mut covered = vec![false; t.bytes.len()];
    for i in &infos {
        let o = (i.gpa - t.base) as usize;
        covered[o..o + i.len].iter_mut().for_each(|c| *c = true);
    }
    assert!(t.bytes.iter().zip(&covered).all(|(&b, &c)| c || b == 0));
}

#[test]
fn fadt_names_the_rtc_century_register_like_qemu() {
    let t = build(1);
    let fadt = t.tables.iter().find(|i| &i.signature == b"FACP").unwrap();
    let o = (fadt.gpa - t.base) as usize;
    assert_eq!(t.bytes[o + 108], 0x32);
}

/// A hardware-reduced builder with the PC's sleep ports and COM1.
fn reduced_builder() -> AcpiBuilder {
    AcpiBuilder::new().reduced(
        SleepRegisters {
            control: 0x610,
            status: 0x611,
        },
        Com1 {
            port: 0x3F8,
            ports: 8,
            gsi: 4,
        },
    )
}

fn reduced(cpus: u32) -> AcpiTables {
    reduced_builder()
        .cpus(cpus)
        .ecam(0xC000_0000, 1)
        .build()
        .unwrap()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn hardware_reduced_fadt_has_sleep_registers_and_no_fixed_hardware() {
    let t = reduced(2);
    let p = parse(t.base, &t.bytes).unwrap();
    let f = p.fadt.clone().unwrap();
    assert_eq!((f.revision, f.len), (5, 268));
    assert_ne!(f.flags & (1 << 20), 0, "HW_REDUCED_ACPI");
    assert_eq!(
        (f.firmware_ctrl, f.sci_int, f.smi_cmd),
        (0, 0, 0),
        "no FACS, no SCI"
    );
    assert_eq!(
        (f.pm1a_evt_blk, f.pm1a_cnt_blk, f.pm_tmr_blk),
        (0, 0, 0),
        "no PM1 blocks, no PM timer"
    );
    assert_eq!((f.x_pm1a_evt_blk, f.x_pm_tmr_blk), (Some(0), Some(0)));
    // System I/O, byte access, the two ports.
    assert_eq!(f.sleep_control, Some((1, 1, 0x610)));
    assert_eq!(f.sleep_status, Some((1, 1, 0x611)));
    assert!(p.find("FACS").is_none());
    assert!(t.tables.iter().all(|x| &x.signature != b"FACS"));
    // S5 only: this machine does not suspend.
    assert_eq!(p.s5_slp_typ, Some(S5_SLP_TYP));
    assert_eq!(p.s3_slp_typ, None);
    // The MCFG is still there for the PCI host.
    assert!(p.find("MCFG").is_some());
}

#[test]
fn hardware_reduced_madt_declares_no_8259s_and_no_overrides() {
    let p = parse(reduced(3).base, &reduced(3).bytes).unwrap();
    let m = p.madt.unwrap();
    assert_eq!(m.flags & 1, 0, "PCAT_COMPAT clear: no 8259s");
    assert!(m.overrides.is_empty());
    assert_eq!(m.lapics.len(), 3);
    assert_eq!(m.ioapics.len(), 1);
    assert_eq!(m.nmis.len(), 1);
    // The full machine keeps both.
    let full = build(3);
    let m = parse(full.base, &full.bytes).unwrap().madt.unwrap();
    assert_eq!((m.flags & 1, m.overrides.len()), (1, 2));
    assert!(
        tables::madt_len(3)
            >= reduced(3)
                .tables
                .iter()
                .find(|t| &t.signature == b"APIC")
                .unwrap()
                .len
    );
}

#[test]
fn hardware_reduced_dsdt_declares_com1_with_its_ports_and_gsi() {
    let t = reduced(1);
    let p = parse(t.base, &t.bytes).unwrap();
    let d = p.find("DSDT").unwrap();
    let o = (d.addr - t.base) as usize;
    let dsdt = &t.bytes[o..o + d.len as usize];
    // Device (COM1) with _HID EisaId("PNP0501"), _UID 0 and a _CRS of
    // IO(Decode16, 0x3F8, 0x3F8, 1, 8) + Interrupt(Consumer, Edge,
    // ActiveHigh, Exclusive) {4}.
    assert!(contains(dsdt, &[0x5B, 0x82]));
    assert!(contains(dsdt, b"COM1"));
    assert!(contains(
        dsdt,
        &[b'_', b'H', b'I', b'D', 0x0C, 0x41, 0xD0, 0x05, 0x01]
    ));
    assert!(contains(dsdt, &[b'_', b'U', b'I', b'D', 0x00]));
    assert!(contains(
        dsdt,
        &[
            0x47, 0x01, 0xF8, 0x03, 0xF8, 0x03, 0x01, 0x08, 0x89, 0x06, 0x00, 0x03, 0x01, 4, 0, 0,
            0, 0x79, 0x00
        ]
    ));
    // The full machine's DSDT has no devices.
    let full = build(1);
    let fp = parse(full.base, &full.bytes).unwrap();
    let fd = fp.find("DSDT").unwrap();
    let fo = (fd.addr - full.base) as usize;
    assert!(!contains(&full.bytes[fo..fo + fd.len as usize], b"COM1"));
}

#[test]
fn hardware_reduced_dsdt_declares_virtio_mmio_transports() {
    let devs = vec![
        VirtioMmioDevice {
            base: 0xD800_0000,
            len: 0x1000,
            gsi: 5,
        },
        VirtioMmioDevice {
            base: 0xD800_1000,
            len: 0x1000,
            gsi: 6,
        },
    ];
    let t = reduced_builder().virtio_mmio(devs).build().unwrap();
    let p = parse(t.base, &t.bytes).unwrap();
    let d = p.find("DSDT").unwrap();
    let o = (d.addr - t.base) as usize;
    let dsdt = &t.bytes[o..o + d.len as usize];
    for (name, base, gsi) in [(b"VR00", 0xD800_0000u32, 5u8), (b"VR01", 0xD800_1000, 6)] {
        assert!(contains(dsdt, name));
        let mut crs = vec![0x86, 0x09, 0x00, 0x01];
        crs.extend_from_slice(&base.to_le_bytes());
        crs.extend_from_slice(&[0x00, 0x10, 0x00, 0x00, 0x89, 0x06, 0x00, 0x03, 0x01, gsi]);
        assert!(contains(dsdt, &crs), "{}", String::from_utf8_lossy(name));
    }
    assert!(contains(dsdt, b"LNRO0005\0"));
    assert!(!contains(dsdt, b"VR02"));
    // The full machine names them on the command line, not here.
    let full = AcpiBuilder::new()
        .virtio_mmio(vec![VirtioMmioDevice {
            base: 0xD800_0000,
            len: 0x1000,
            gsi: 5,
        }])
        .build()
        .unwrap();
    assert!(!contains(&full.bytes, b"LNRO0005"));
}
