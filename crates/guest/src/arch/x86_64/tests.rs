//! Format checks on the built images; none needs KVM.

use super::*;
use crate::payload;

const EM_386: u16 = 3;
const EM_X86_64: u16 = 62;
const PT_LOAD: u32 = 1;
const MB_MAGIC: u32 = 0x1bad_b002;
const IMAGE_BASE: u64 = 0x40_0000;
const REALMODE_BASE: u64 = 0x8000;

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(b[o..o + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

struct Load {
    offset: u64,
    paddr: u64,
    filesz: u64,
    memsz: u64,
}

struct Elf {
    class64: bool,
    machine: u16,
    entry: u64,
    loads: Vec<Load>,
}

fn parse(name: &str, b: &[u8]) -> Elf {
    assert!(
        b.len() > 64 && &b[..4] == b"\x7fELF",
        "{name}: not an ELF file"
    );
    assert_eq!(b[5], 1, "{name}: not little-endian");
    let class64 = match b[4] {
        1 => false,
        2 => true,
        c => panic!("{name}: bad ELF class {c}"),
    };
    assert_eq!(u16_at(b, 16), 2, "{name}: not ET_EXEC");
    let machine = u16_at(b, 18);
    let (entry, phoff, phentsize, phnum) = if class64 {
        (
            u64_at(b, 24),
            u64_at(b, 32) as usize,
            u16_at(b, 54) as usize,
            u16_at(b, 56) as usize,
        )
    } else {
        (
            u32_at(b, 24) as u64,
            u32_at(b, 28) as usize,
            u16_at(b, 42) as usize,
            u16_at(b, 44) as usize,
        )
    };
    assert!(phnum > 0, "{name}: no program headers");
    let mut loads = Vec::new();
    for i in 0..phnum {
        let p = phoff + i * phentsize;
        assert!(
            p + phentsize <= b.len(),
            "{name}: program header {i} out of file"
        );
        if u32_at(b, p) != PT_LOAD {
            continue;
        }
        loads.push(if class64 {
            Load {
                offset: u64_at(b, p + 8),
                paddr: u64_at(b, p + 24),
                filesz: u64_at(b, p + 32),
                memsz: u64_at(b, p + 40),
            }
        } else {
            Load {
                offset: u32_at(b, p + 4) as u64,
                paddr: u32_at(b, p + 12) as u64,
                filesz: u32_at(b, p + 16) as u64,
                memsz: u32_at(b, p + 20) as u64,
            }
        });
    }
    Elf {
        class64,
        machine,
        entry,
        loads,
    }
}

/// Where each payload links: 4 MiB, except `realmode` (0x8000 on purpose).
fn image_base(name: &str) -> u64 {
    if name == "realmode" {
        REALMODE_BASE
    } else {
        IMAGE_BASE
    }
}

fn check_loads(name: &str, elf: &Elf, len: usize) {
    assert!(!elf.loads.is_empty(), "{name}: no PT_LOAD");
    for l in &elf.loads {
        assert!(
            l.paddr >= image_base(name),
            "{name}: PT_LOAD at {:#x} below {:#x}",
            l.paddr,
            image_base(name)
        );
        assert!(l.paddr + l.memsz <= 1 << 32, "{name}: PT_LOAD above 4 GiB");
        assert!(
            l.filesz <= l.memsz && l.offset + l.filesz <= len as u64,
            "{name}: bad PT_LOAD sizes"
        );
    }
    assert!(
        elf.loads
            .iter()
            .any(|l| (l.paddr..l.paddr + l.filesz).contains(&elf.entry)),
        "{name}: entry {:#x} is not in a loaded segment",
        elf.entry
    );
}

fn multiboot_header(b: &[u8]) -> Option<usize> {
    (0..8192.min(b.len()) - 12).step_by(4).find(|&o| {
        u32_at(b, o) == MB_MAGIC
            && MB_MAGIC
                .wrapping_add(u32_at(b, o + 4))
                .wrapping_add(u32_at(b, o + 8))
                == 0
    })
}

#[test]
fn flat_payloads_are_multiboot_elf32() {
    for (name, bytes) in PAYLOADS.iter().filter(|(n, _)| *n != "hello64") {
        let elf = parse(name, bytes);
        assert!(
            !elf.class64,
            "{name}: must be ELF32 like a kvm-unit-tests .flat"
        );
        assert_eq!(elf.machine, EM_386, "{name}: must be EM_386");
        check_loads(name, &elf, bytes.len());
        let off = multiboot_header(bytes)
            .unwrap_or_else(|| panic!("{name}: no Multiboot v1 header in the first 8 KiB"));
        assert_eq!(
            u32_at(bytes, off + 4),
            0,
            "{name}: Multiboot flags must be 0 (use the ELF headers)"
        );
    }
}

#[test]
fn hello64_is_plain_elf64() {
    let elf = parse("hello64", HELLO64);
    assert!(elf.class64);
    assert_eq!(elf.machine, EM_X86_64);
    check_loads("hello64", &elf, HELLO64.len());
    assert!(
        multiboot_header(HELLO64).is_none(),
        "hello64 must not look like a Multiboot image"
    );
}

#[test]
fn nothing_but_realmode_loads_below_1_mib() {
    for (name, bytes) in PAYLOADS.iter().filter(|(n, _)| *n != "realmode") {
        for l in parse(name, bytes).loads {
            assert!(l.paddr >= 0x10_0000, "{name}: loads below 1 MiB");
        }
    }
}

#[test]
fn realmode_is_one_segment_at_0x8000_below_0x9000() {
    // kvm-unit-tests' real-mode tests link this low; QEMU keeps its
    // Multiboot data from 0x9000, so the image stays under it.
    let elf = parse("realmode", REALMODE);
    assert_eq!(elf.loads.len(), 1);
    let l = &elf.loads[0];
    assert_eq!(l.paddr, REALMODE_BASE, "first PT_LOAD at 0x8000");
    assert!(
        l.paddr + l.memsz <= 0x9000,
        "ends at {:#x}",
        l.paddr + l.memsz
    );
    // Real-mode code runs with CS = 0: everything under 64 KiB.
    assert!(elf.entry < 0x1_0000);
    assert_eq!(payload("realmode"), Some(REALMODE));
    assert!(contains(REALMODE, b"realmode: 16-bit real mode"));
}

#[test]
fn lookup_by_name() {
    assert_eq!(payload("probe"), Some(PROBE));
    assert_eq!(payload("compat"), Some(COMPAT));
    assert_eq!(payload("kutvmexit"), Some(KUTVMEXIT));
    assert_eq!(payload("hello64"), Some(HELLO64));
    assert_eq!(payload("ringer"), Some(RINGER));
    assert!(payload("nope").is_none());
    let mut names: Vec<_> = PAYLOADS.iter().map(|(n, _)| *n).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), PAYLOADS.len());
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Every source file of the probe payload, as one text (the checks below
/// look for how it handles each scenario, wherever that lives).
const PROBE_SOURCES: &str = concat!(
    include_str!("../../../c/payloads/common/probe/probe.h"),
    include_str!("../../../c/payloads/common/probe/harness.c"),
    include_str!("../../../c/payloads/common/probe/testdev.c"),
    include_str!("../../../c/payloads/common/probe/irqfd.c"),
    include_str!("../../../c/payloads/x86_64/probe/arch.h"),
    include_str!("../../../c/payloads/x86_64/probe/exits.c"),
    include_str!("../../../c/payloads/x86_64/probe/pci.c"),
    include_str!("../../../c/payloads/x86_64/probe/ipi.c"),
    include_str!("../../../c/payloads/x86_64/probe/irqfd_line.c"),
);

/// The harness takes a scenario's routine and value check from its
/// SCENARIO_TABLE entry (generated from the ABI record): it names no
/// scenario id, has a case for every routine, and maps no value check to a
/// value (the entry carries the value, see below).
#[test]
fn the_harness_dispatches_on_the_abi_record_not_on_ids() {
    let harness = include_str!("../../../c/payloads/common/probe/harness.c");
    for (i, _) in harness.match_indices("SCENARIO_") {
        assert!(
            harness[i..].starts_with("SCENARIO_TABLE"),
            "harness.c names a scenario: {}",
            &harness[i..harness.len().min(i + 40)]
        );
    }
    for r in trapline_abi::Routine::ALL {
        let case = format!("case {}:", r.c_name());
        assert!(harness.contains(&case), "harness.c lacks `{case}`");
    }
    for e in trapline_abi::Expect::ALL
        .iter()
        .filter(|e| e.value().is_some())
    {
        assert!(
            !harness.contains(e.c_name()),
            "harness.c maps {} to its value itself; the table entry carries it",
            e.c_name()
        );
    }
}

/// Each SCENARIO_TABLE entry carries the value its loop must read back,
/// written from the ABI's `Expect::value()` (0 where `EXPECT_ANY` checks
/// nothing): the one source of the probe's value check.
#[test]
fn the_scenario_table_carries_each_expected_value() {
    let table = include_str!(concat!(env!("OUT_DIR"), "/trapline_abi_extra.h"));
    for s in trapline_abi::SCENARIOS {
        let entry = format!(
            "{{ {}, \"{}\", {}, {}, {:#x}ULL }},",
            s.id,
            s.name,
            s.routine.c_name(),
            s.expect.c_name(),
            s.expect.value().unwrap_or(0)
        );
        assert!(table.contains(&entry), "SCENARIO_TABLE lacks `{entry}`");
    }
    let entries = table
        .lines()
        .filter(|l| l.trim_start().starts_with("{ "))
        .count();
    assert_eq!(entries, trapline_abi::SCENARIOS.len());
    // The checked scenarios carry the ABI's values themselves.
    assert!(table.contains(&format!(
        "\"ram-read\", ROUTINE_EXITS, EXPECT_PROBE_READ_VALUE, {:#x}ULL",
        trapline_abi::PROBE_READ_VALUE
    )));
    assert!(table.contains(&format!(
        "\"pci-config-read-cf8\", ROUTINE_PCI, EXPECT_PCI_TESTDEV_ID, {:#x}ULL",
        trapline_abi::PCI_TESTDEV_ID
    )));
}

/// The probe selects pci-testdev tests by arithmetic on the scenario id
/// (`case SCENARIO_PCI_MMIO_NO_EVENTFD ... SCENARIO_PCI_PORTIO_PV_EVENTFD`,
/// BAR1 from PORTIO_NO_EVENTFD on, test k = id - first, k == 3 is PV) and
/// checks the header name against the part of the scenario name before ':'.
#[test]
fn pci_testdev_scenarios_are_laid_out_as_probe_assumes() {
    let variants = [
        "no-eventfd",
        "wildcard-eventfd",
        "datamatch-eventfd",
        "pv-eventfd",
    ];
    for (bar, (prefix, suffix)) in [("mmio", "pci-mem"), ("portio", "pci-io")]
        .into_iter()
        .enumerate()
    {
        for (k, variant) in variants.iter().enumerate() {
            let id = 19 + 4 * bar as u32 + k as u32;
            let s = trapline_abi::scenario_by_id(id).unwrap();
            assert_eq!(
                s.name,
                format!("{prefix}-{variant}:{suffix}"),
                "scenario {id}"
            );
        }
    }
    for (id, name) in [
        (27, "pci-config-read-cf8"),
        (28, "pci-config-read-ecam"),
        (29, "pci-config-read-ecam-ro"),
        (30, "pci-scan-cf8"),
        (31, "pci-scan-ecam"),
        (32, "pci-scan-ecam-ro"),
    ] {
        assert_eq!(trapline_abi::scenario_by_id(id).unwrap().name, name);
    }
    // Every PCI scenario is handled by name in the probe (ranges by their ends).
    let probe_c = PROBE_SOURCES;
    for c_name in [
        "PCI_MMIO_NO_EVENTFD",
        "PCI_PORTIO_NO_EVENTFD",
        "PCI_PORTIO_PV_EVENTFD",
        "PCI_CONFIG_READ_CF8",
        "PCI_CONFIG_READ_ECAM",
        "PCI_CONFIG_READ_ECAM_RO",
        "PCI_SCAN_CF8",
        "PCI_SCAN_ECAM",
        "PCI_SCAN_ECAM_RO",
    ] {
        assert!(
            probe_c.contains(&format!("SCENARIO_{c_name}")),
            "the probe does not handle SCENARIO_{c_name}"
        );
    }
}

/// The check names are compat's command-line words and ucall texts; the
/// test names and line formats are kvm-unit-tests vmexit's.
#[test]
fn compat_and_kutvmexit_carry_their_names() {
    for check in ["fwcfg", "acpi", "pmtimer", "pctestdev", "lapic", "smp"] {
        let mut s = check.as_bytes().to_vec();
        s.push(0);
        assert!(contains(COMPAT, &s), "compat lacks check {check}");
    }
    for line in [&b"PASS: %s\n\0"[..], b"FAIL: %s: %s\n\0"] {
        assert!(contains(COMPAT, line));
    }
    for test in [
        "cpuid",
        "inl_from_pmtimer",
        "inl_from_qemu",
        "inl_from_kernel",
        "outl_to_kernel",
        "ipi",
        "pci-mem",
        "pci-io",
    ] {
        let mut s = test.as_bytes().to_vec();
        s.push(0);
        assert!(contains(KUTVMEXIT, &s), "kutvmexit lacks test {test}");
    }
    for line in [
        &b"%s %d\n\0"[..],
        b"%s (skipped)\n\0",
        b"pci-testdev at 0x%x membar %lx iobar %x\n\0",
        b"PM timer port is %x\n\0",
    ] {
        assert!(contains(KUTVMEXIT, line));
    }
}

/// ipi.c treats 37..=40 as the x2APIC twins of 33..=36 in the same order
/// and names the ones it tells apart; exits.c names the four doorbells;
/// the harness reaches them through their ABI routine, not their ids.
#[test]
fn interrupt_and_doorbell_scenarios_are_laid_out_as_probe_assumes() {
    let xapic = ["ipi", "ipi-halt", "self-ipi", "eoi"];
    for (k, name) in xapic.iter().enumerate() {
        let k = k as u32;
        assert_eq!(trapline_abi::scenario_by_id(33 + k).unwrap().name, *name);
        assert_eq!(
            trapline_abi::scenario_by_id(37 + k).unwrap().name,
            format!("{name}-x2apic")
        );
    }
    for (id, name) in [
        (41, "irqfd"),
        (42, "doorbell-user-mmio"),
        (43, "doorbell-ioeventfd-mmio"),
        (44, "doorbell-ioeventfd-pio"),
        (45, "doorbell-pv"),
    ] {
        assert_eq!(trapline_abi::scenario_by_id(id).unwrap().name, name);
    }
    let probe_c = PROBE_SOURCES;
    assert!(
        probe_c.contains("x2apic_scenario(u32 id) { return id >= SCENARIO_IPI_X2APIC && id <= SCENARIO_EOI_X2APIC; }"),
        "ipi.c takes 37..=40 as the x2APIC range"
    );
    // Named explicitly (self-ipi is what an IPI scenario is when it is
    // neither to vCPU 1 nor eoi).
    let named = |c_name: &str| {
        let key = format!("SCENARIO_{c_name}");
        probe_c.match_indices(&key).any(|(i, _)| {
            !probe_c[i + key.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    for c_name in [
        "IPI",
        "IPI_HALT",
        "EOI",
        "IPI_X2APIC",
        "IPI_HALT_X2APIC",
        "EOI_X2APIC",
        "DOORBELL_USER_MMIO",
        "DOORBELL_IOEVENTFD_MMIO",
        "DOORBELL_IOEVENTFD_PIO",
        "DOORBELL_PV",
    ] {
        assert!(named(c_name), "the probe does not handle SCENARIO_{c_name}");
    }
    // The ucall kinds and fixtures the interrupt scenarios use.
    for sym in [
        "UCALL_CLOCK",
        "UCALL_IRQFD_START",
        "IPI_VECTOR",
        "IRQFD_GSI",
        "IRQFD_VECTOR",
        "DOORBELL_MMIO_USER",
        "DOORBELL_MMIO_KERNEL",
        "DOORBELL_PIO_PORT",
        "DOORBELL_PV_IDENTITY",
        "PV_DOORBELL_PORT",
    ] {
        assert!(probe_c.contains(sym), "the probe does not use {sym}");
    }
}

/// ringer's command-line words and its summary line are what the host
/// test parses.
#[test]
fn ringer_carries_its_paths_and_lines() {
    for path in ["user-mmio", "ioeventfd-mmio", "ioeventfd-pio", "pv"] {
        let mut s = path.as_bytes().to_vec();
        s.push(0);
        assert!(contains(RINGER, &s), "ringer lacks path {path}");
    }
    for line in [
        &b"ringer: %lu rings from %u cpus\n\0"[..],
        b"ringer: cpus=%u n=%lu path=%s\n\0",
    ] {
        assert!(contains(RINGER, line));
    }
}
