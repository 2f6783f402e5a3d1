//! The ACPI walker (`acpi::parse::parse`) on hostile bytes.
//!
//! Input: `[mode][area bytes...]`. mode bits 0..1 pick the guest-physical
//! base the bytes are said to live at: 0xE0000 (the real area), 0, a u32,
//! or any u64 (read from the input); bit 2 asks the harness to repair the
//! checksums of every RSDP and every table header it can find in the bytes
//! before parsing, so mutations get past the checksum checks and reach the
//! table decoders.
//!
//! Checks: `parse` returns, never panics; when it succeeds the RSDP is
//! 16-byte aligned and inside the area, every table it reports lies inside
//! the area, and no two reported structures overlap.

#![no_main]

use libfuzzer_sys::fuzz_target;
use trapline_devices::acpi::parse::parse;
use trapline_devices::acpi::ACPI_AREA_BASE;
use trapline_fuzz::Input;

const SIGS: [&[u8; 4]; 9] = [
    b"RSDT", b"XSDT", b"FACP", b"APIC", b"MCFG", b"DSDT", b"SSDT", b"HPET", b"WAET",
];

fn fix(bytes: &mut [u8], at: usize, len: usize, csum: usize) {
    let Some(t) = bytes.get_mut(at..at + len) else {
        return;
    };
    t[csum] = 0;
    let sum = t.iter().fold(0u8, |a, &b| a.wrapping_add(b));
    t[csum] = sum.wrapping_neg();
}

fn le32(b: &[u8], at: usize) -> usize {
    b.get(at..at + 4)
        .map_or(0, |s| u32::from_le_bytes(s.try_into().unwrap()) as usize)
}

/// Repair checksums: tables first (an RSDP's checksum covers no table).
pub fn repair(bytes: &mut [u8]) {
    for at in (0..bytes.len().saturating_sub(36)).step_by(4) {
        if SIGS.iter().any(|s| &bytes[at..at + 4] == *s) {
            let len = le32(bytes, at + 4);
            if len >= 36 {
                fix(bytes, at, len, 9);
            }
        }
    }
    for at in (0..bytes.len().saturating_sub(20)).step_by(16) {
        if &bytes[at..at + 8] == b"RSD PTR " {
            if bytes[at + 15] >= 2 {
                let len = le32(bytes, at + 20);
                if len >= 36 {
                    fix(bytes, at, len, 32);
                }
            }
            fix(bytes, at, 20, 8);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mode = input.u8();
    let base = match mode & 3 {
        0 => ACPI_AREA_BASE,
        1 => 0,
        2 => u64::from(input.u32()),
        _ => input.u64(),
    };
    let mut bytes = input.rest().to_vec();
    if mode & 4 != 0 {
        repair(&mut bytes);
    }
    let Ok(p) = parse(base, &bytes) else { return };
    let end = base as u128 + bytes.len() as u128;
    assert_eq!(p.rsdp % 16, 0);
    assert!(u128::from(p.rsdp) >= u128::from(base) && u128::from(p.rsdp) + 20 <= end);
    for t in &p.tables {
        assert!(
            u128::from(t.addr) >= u128::from(base) && u128::from(t.addr) + u128::from(t.len) <= end,
            "{t:?} outside the area"
        );
    }
    for w in p.tables.windows(2) {
        assert!(
            u128::from(w[0].addr) + u128::from(w[0].len) <= u128::from(w[1].addr),
            "{:?} overlaps {:?}",
            w[0],
            w[1]
        );
    }
});
