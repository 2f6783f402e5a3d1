//! ACPI table builder round trip: `AcpiBuilder` with input-chosen vCPU
//! count, PM ports or hardware-reduced sleep registers, and ECAM window,
//! then the independent walker (`acpi::parse::parse`) over the result.
//!
//! Input: `[cpus mode][cpus][pm mode][pm ports | sleep ports][ecam flag][ecam base][buses]`.
//!
//! Checks: the builder refuses exactly 0 vCPUs, malformed ECAM windows and
//! tables that do not fit; everything it builds parses, with valid
//! checksums, RSDT == XSDT, one enabled LAPIC per vCPU (x2APIC from 255),
//! the IOAPIC, the FADT's PM blocks (32-bit and X_ forms) or, reduced,
//! its sleep registers and no FACS, SCI or 8259s, S5, the MCFG exactly
//! when asked, and the builder's own table listing.

#![no_main]

use libfuzzer_sys::fuzz_target;
use trapline_devices::acpi::parse::{parse, IoApic, LocalApic, McfgAlloc};
use trapline_devices::acpi::*;
use trapline_devices::pm_timer::{PmPorts, PM1_CNT_LEN, PM1_EVT_LEN, PM_TMR_LEN, S5_SLP_TYP};
use trapline_fuzz::Input;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mode = input.u8();
    let cpus = match mode % 4 {
        0 => u32::from(input.u8()),
        1 => u32::from(input.u16() % 600),
        2 => u32::from(input.u16()),
        _ => input.u32(),
    };
    let hardware = match (mode >> 2) % 4 {
        0 => AcpiHardware::Full(PmPorts::PIIX4),
        1 => match PmPorts::at(input.u16()) {
            Some(p) => AcpiHardware::Full(p),
            None => return,
        },
        2 => AcpiHardware::Full(PmPorts {
            pm1a_evt: input.u16(),
            pm1a_cnt: input.u16(),
            pm_tmr: input.u16(),
        }),
        _ => AcpiHardware::Reduced {
            sleep: SleepRegisters {
                control: input.u16(),
                status: input.u16(),
            },
            com1: Com1 {
                port: input.u16(),
                ports: input.u8(),
                gsi: input.u32(),
            },
        },
    };
    let ecam = (mode & 0x20 != 0).then(|| {
        let base = if mode & 0x40 != 0 {
            input.u64()
        } else {
            u64::from(input.u16()) << 20
        };
        let buses = if mode & 0x80 != 0 {
            input.u16()
        } else {
            1 + u16::from(input.u8())
        };
        (base, buses)
    });

    let mut b = AcpiBuilder::new().cpus(cpus);
    b = match hardware {
        AcpiHardware::Full(pm) => b.pm_ports(pm),
        AcpiHardware::Reduced { sleep, com1 } => b.reduced(sleep, com1),
    };
    if let Some((base, buses)) = ecam {
        b = b.ecam(base, buses);
    }
    let ecam_ok = ecam.is_none_or(|(base, buses)| {
        (1..=256).contains(&buses)
            && base % (1 << 20) == 0
            && base.checked_add(u64::from(buses) << 20).is_some()
    });
    let t = match b.build() {
        Err(AcpiError::NoCpus) => return assert_eq!(cpus, 0),
        Err(AcpiError::BadEcam { .. }) => return assert!(cpus != 0 && !ecam_ok),
        Err(AcpiError::AreaFull { needed }) => {
            assert!(
                cpus > 1000 && ecam_ok && needed > ACPI_AREA_LEN,
                "AreaFull for {cpus} vCPUs"
            );
            return;
        }
        Ok(t) => {
            assert!(
                cpus != 0 && ecam_ok,
                "built tables for {cpus} vCPUs, ecam {ecam:x?}"
            );
            t
        }
    };
    assert_eq!((t.base, t.bytes.len()), (ACPI_AREA_BASE, ACPI_AREA_LEN));
    let p = parse(t.base, &t.bytes).unwrap_or_else(|e| panic!("built tables do not parse: {e}"));
    assert_eq!(p.rsdp, t.rsdp);
    assert_eq!(p.rsdt, p.xsdt, "RSDT and XSDT list different tables");

    let m = p.madt.as_ref().expect("MADT");
    assert_eq!(m.lapics.len(), cpus as usize);
    for (i, l) in m.lapics.iter().enumerate() {
        let i = i as u32;
        assert_eq!(
            *l,
            LocalApic {
                uid: i,
                apic_id: i,
                enabled: true,
                x2apic: i >= 255
            }
        );
    }
    assert_eq!(
        m.ioapics,
        [IoApic {
            id: IOAPIC_ID,
            addr: IOAPIC_ADDR,
            gsi_base: 0
        }]
    );
    assert_eq!(m.lapic_addr, LAPIC_ADDR);

    let f = p.fadt.as_ref().expect("FADT");
    match hardware {
        AcpiHardware::Full(pm) => {
            assert_eq!(
                (f.pm1a_evt_blk, f.pm1a_cnt_blk, f.pm_tmr_blk),
                (
                    u32::from(pm.pm1a_evt),
                    u32::from(pm.pm1a_cnt),
                    u32::from(pm.pm_tmr)
                )
            );
            assert_eq!(
                (f.pm1_evt_len, f.pm1_cnt_len, f.pm_tmr_len),
                (PM1_EVT_LEN, PM1_CNT_LEN, PM_TMR_LEN)
            );
            assert_eq!(f.x_pm_tmr_blk, Some(u64::from(pm.pm_tmr)));
            assert_eq!(f.x_pm1a_evt_blk, Some(u64::from(pm.pm1a_evt)));
            assert_eq!(f.x_pm1a_cnt_blk, Some(u64::from(pm.pm1a_cnt)));
            assert_eq!(u32::from(SCI_IRQ), u32::from(f.sci_int));
            assert_eq!(m.flags & 1, 1, "PCAT_COMPAT");
            assert_eq!(m.overrides.len(), 2);
            assert!(p.find("FACS").is_some());
        }
        AcpiHardware::Reduced { sleep, .. } => {
            assert_ne!(f.flags & (1 << 20), 0, "HW_REDUCED_ACPI");
            assert_eq!((f.revision, f.len), (5, 268));
            assert_eq!(
                (f.pm1a_evt_blk, f.pm1a_cnt_blk, f.pm_tmr_blk, f.sci_int),
                (0, 0, 0, 0)
            );
            assert_eq!(f.sleep_control, Some((1, 1, u64::from(sleep.control))));
            assert_eq!(f.sleep_status, Some((1, 1, u64::from(sleep.status))));
            assert_eq!((m.flags & 1, m.overrides.len()), (0, 0));
            assert!(p.find("FACS").is_none());
            assert_eq!(p.s3_slp_typ, None);
        }
    }
    assert_eq!(p.s5_slp_typ, Some(S5_SLP_TYP));

    match ecam {
        Some((base, buses)) => assert_eq!(
            p.mcfg.as_deref(),
            Some(
                &[McfgAlloc {
                    base,
                    segment: 0,
                    start_bus: 0,
                    end_bus: (buses - 1) as u8
                }][..]
            )
        ),
        None => assert!(p.mcfg.is_none()),
    }

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
                String::from_utf8_lossy(&i.signature).into_owned(),
                i.gpa,
                i.len,
            )
        })
        .collect();
    built.sort();
    assert_eq!(found, built, "walker and builder disagree on the tables");
});
