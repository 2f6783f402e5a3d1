//! Format checks on the arm64 images; none needs KVM or an arm64 host.

use super::*;
use trapline_abi::{VIRT_PAYLOAD_BASE, VIRT_RAM_BASE};

const EM_AARCH64: u16 = 183;
const ET_EXEC: u16 = 2;
const PT_LOAD: u32 = 1;
/// The runtime maps (and so can run in) RAM below 4 GiB only.
const MAPPED_END: u64 = 1 << 32;

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(b[o..o + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// (offset, paddr, vaddr, filesz, memsz) of each PT_LOAD.
fn loads(name: &str, b: &[u8]) -> Vec<(u64, u64, u64, u64, u64)> {
    let (phoff, phentsize, phnum) = (
        u64_at(b, 32) as usize,
        u16_at(b, 54) as usize,
        u16_at(b, 56) as usize,
    );
    (0..phnum)
        .map(|i| phoff + i * phentsize)
        .inspect(|&p| assert!(p + phentsize <= b.len(), "{name}: header out of file"))
        .filter(|&p| u32_at(b, p) == PT_LOAD)
        .map(|p| {
            (
                u64_at(b, p + 8),
                u64_at(b, p + 24),
                u64_at(b, p + 16),
                u64_at(b, p + 32),
                u64_at(b, p + 40),
            )
        })
        .collect()
}

#[test]
fn payloads_are_elf64_aarch64_executables_entered_at_the_payload_base() {
    for (name, b) in PAYLOADS {
        assert!(b.len() > 64 && &b[..4] == b"\x7fELF", "{name}: not ELF");
        assert_eq!(b[4], 2, "{name}: not ELF64");
        assert_eq!(b[5], 1, "{name}: not little-endian");
        assert_eq!(u16_at(b, 16), ET_EXEC, "{name}: not ET_EXEC");
        assert_eq!(u16_at(b, 18), EM_AARCH64, "{name}: not AArch64");
        assert_eq!(u64_at(b, 24), VIRT_PAYLOAD_BASE, "{name}: entry");
    }
}

#[test]
fn segments_load_in_ram_from_the_payload_base_below_4_gib() {
    for (name, b) in PAYLOADS {
        let segs = loads(name, b);
        assert!(!segs.is_empty(), "{name}: no PT_LOAD");
        let lowest = segs.iter().map(|s| s.1).min().unwrap();
        assert_eq!(lowest, VIRT_PAYLOAD_BASE, "{name}: first segment");
        for &(offset, paddr, vaddr, filesz, memsz) in &segs {
            assert_eq!(paddr, vaddr, "{name}: identity mapped");
            assert!(paddr >= VIRT_RAM_BASE && paddr + memsz <= MAPPED_END);
            assert!(filesz <= memsz && offset + filesz <= b.len() as u64);
        }
    }
}

#[test]
fn lookup_by_name() {
    assert_eq!(PAYLOADS.len(), 9);
    assert!(PAYLOADS.iter().any(|(n, _)| *n == "vnet"));
    for (name, b) in PAYLOADS {
        assert_eq!(
            PAYLOADS.iter().find(|(n, _)| n == name).map(|(_, p)| *p),
            Some(*b)
        );
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn hostile_carries_the_window_table_and_its_lines() {
    for w in trapline_abi::VIRT_WINDOWS {
        assert!(contains(HOSTILE, w.name.as_bytes()), "{}", w.name);
    }
    assert!(contains(HOSTILE, b"hostile: mmio=%lu aborts=%lu"));
    assert!(contains(SMP, b"smp: %u of %u cpus online"));
}

/// The kvmtool build of the probe is a raw image: lkvm enters its first
/// byte (the runtime's `_start`, the same first instruction as the ELF
/// probe's entry), and it carries no arm64 Image magic (`ARM\x64` at 0x38),
/// so lkvm loads it at its default offset, where it is linked.
#[test]
fn the_kvmtool_probe_is_a_raw_image_entered_at_its_first_byte() {
    let bin = PROBE_KVMTOOL;
    assert!(bin.len() > 0x40, "probe-kvmtool.bin is {} bytes", bin.len());
    assert_ne!(
        &bin[..4],
        b"\x7fELF",
        "probe-kvmtool.bin must not be an ELF"
    );
    assert_ne!(&bin[0x38..0x3c], b"ARM\x64", "no arm64 Image header");
    let entry = u64_at(PROBE, 24);
    let (offset, _, vaddr, _, _) = loads("probe", PROBE)
        .into_iter()
        .find(|&(_, _, v, f, _)| v <= entry && entry < v + f)
        .expect("the ELF probe's entry is in a PT_LOAD");
    let at = (offset + entry - vaddr) as usize;
    assert_eq!(&bin[..4], &PROBE[at..at + 4], "same first instruction");
    assert_eq!(
        trapline_abi::KVMTOOL_PAYLOAD_BASE,
        trapline_abi::KVMTOOL_RAM_BASE + 0x8_0000
    );
}

/// Where kvmtool's machine puts RAM and the GIC fits the runtime's identity
/// map (layout.h: [0, 1 GiB) device memory, [1 GiB, 4 GiB) normal RAM).
#[test]
fn kvmtools_map_fits_the_runtimes_identity_map() {
    use trapline_abi::{KVMTOOL_GIC_DIST_BASE, KVMTOOL_PAYLOAD_BASE, KVMTOOL_UART_BASE};
    const DEVICE_END: u64 = 1 << 30;
    const {
        assert!(KVMTOOL_UART_BASE < DEVICE_END && KVMTOOL_GIC_DIST_BASE + 0x1_0000 <= DEVICE_END);
        assert!(KVMTOOL_PAYLOAD_BASE >= DEVICE_END);
    }
    assert!(KVMTOOL_PAYLOAD_BASE + PROBE_KVMTOOL.len() as u64 + (2 << 20) < MAPPED_END);
}
