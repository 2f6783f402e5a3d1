//! Where the boot structures go: their default place, or out of the way of
//! an image linked below 1 MiB (as QEMU's `-kernel` loads such images too).

#![cfg(target_arch = "x86_64")] // the x86 boot protocols; arm64: tests/arm64.rs

mod common;

use std::ops::Range;

use common::*;
use trapline_loader::gdt;
use trapline_loader::layout::*;
use trapline_loader::*;

const MIB: u64 = 1 << 20;

fn req<'a>(image: &'a [u8]) -> LoadRequest<'a> {
    LoadRequest {
        fresh_memory: false,
        image,
        image_name: "x86/realmode.flat",
        append: "a b",
        initrd: None,
        reserved: &[],
        rsdp: None,
    }
}

fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}

/// A kvm-unit-tests real-mode-style Multiboot image: one page of code and
/// data at 0x8000, header first, then a little BSS.
fn low_multiboot(paddr: u64, memsz: u64) -> ElfBuilder {
    let mut text = multiboot_header(0);
    text.extend(pattern(0xF4, 0x5B));
    ElfBuilder {
        class64: false,
        machine: EM_386,
        e_type: 2,
        entry: paddr + 12,
        segs: vec![Seg::load(paddr, text, memsz)],
    }
}

/// Checks the MBI the guest finds through EBX/RBX: every pointer inside the
/// boot area, the command line, and a memory map that reserves the area
/// when it moved.
fn check_mbi(mem: &vm_memory::GuestMemoryMmap, setup: &BootSetup) {
    let area = setup.boot_area;
    let mbi = setup.mbi_address;
    assert_eq!(mbi, area.mbi());
    assert_eq!(rd32(mem, mbi) & 0x245, 0x245, "mem, cmdline, mmap, name");
    let cmdline = u64::from(rd32(mem, mbi + 16));
    let mmap = u64::from(rd32(mem, mbi + 48));
    let name = u64::from(rd32(mem, mbi + 64));
    for p in [cmdline, mmap, name] {
        assert!(area.range().contains(&p), "{p:#x} outside {area:x?}");
    }
    assert_eq!(rd_cstr(mem, cmdline), setup.cmdline);
    assert_eq!(rd_cstr(mem, name), "trapline");
    let map = read_mmap(mem, mmap, rd32(mem, mbi + 44));
    let got: Vec<(u64, u64, u32)> = setup
        .memory_map
        .iter()
        .map(|e| (e.base, e.len, e.kind))
        .collect();
    assert_eq!(map, got);
    let reserved = (area.base(), area.end() - area.base(), MMAP_RESERVED);
    assert_eq!(map.contains(&reserved), !area.is_default(), "{map:x?}");
    // No RAM entry covers the moved area.
    if !area.is_default() {
        for (base, len, kind) in &map {
            if *kind == MMAP_RAM {
                assert!(!overlaps(&(*base..base + len), &area.range()), "{map:x?}");
            }
        }
    }
    assert_eq!(rd_bytes(mem, area.gdt(), 32), gdt::gdt_bytes().to_vec());
    assert_eq!(setup.gdt.base, area.gdt());
}

#[test]
fn an_image_linked_at_0x8000_loads_and_the_boot_area_moves() {
    let mem = guest_mem(32 << 20);
    fill(&mem, 0, 1 << 20, 0xC3);
    let b = low_multiboot(0x8000, 0x1000);
    let image = b.build();
    let setup = load(&mem, &req(&image)).unwrap();

    assert_eq!(setup.image, 0x8000..0x9000);
    assert_eq!(rd_bytes(&mem, 0x8000, b.segs[0].data.len()), b.segs[0].data);
    let tail = rd_bytes(&mem, 0x8000 + b.segs[0].data.len() as u64, 0x100);
    assert!(tail.iter().all(|&x| x == 0), "BSS zeroed");

    let area = setup.boot_area;
    assert!(!area.is_default());
    assert!(!overlaps(&area.range(), &setup.image));
    // The first free, aligned 60 KiB of conventional memory: right after it.
    assert_eq!(area.range(), 0x9000..0x9000 + BOOT_AREA_SIZE);
    assert_eq!(
        setup.entry,
        EntryMode::Protected32 {
            eip: 0x800C,
            eax: MULTIBOOT_BOOTLOADER_MAGIC,
            ebx: area.mbi() as u32,
            esi: 0,
        }
    );
    check_mbi(&mem, &setup);
    // Memory the loader does not own is left as it was: page 0, the old
    // default place below the image, and the rest of low memory.
    for r in [0..0x8000u64, area.end()..EBDA_START] {
        let bytes = rd_bytes(&mem, r.start, (r.end - r.start) as usize);
        assert!(bytes.iter().all(|&x| x == 0xC3), "{r:x?} was written");
    }
}

#[test]
fn low_images_anywhere_in_conventional_memory_load() {
    // Page 0 itself, the old default place, its end, just below the EBDA.
    for (paddr, memsz) in [
        (0x0u64, 0x200u64),
        (0x1000, 0x200),
        (0x4000, 0x5000),
        (0xF000, 0x2000),
        (0x1_0000, 0x200),
        (0x9_F000, 0xC00),
    ] {
        let mem = guest_mem(8 << 20);
        let image = low_multiboot(paddr, memsz).build();
        let setup = load(&mem, &req(&image))
            .unwrap_or_else(|e| panic!("image at {paddr:#x}+{memsz:#x}: {e}"));
        let area = setup.boot_area;
        assert!(
            !overlaps(&area.range(), &setup.image),
            "{paddr:#x}: {area:x?}"
        );
        assert!(area.base() >= PAGE_SIZE && area.base().is_multiple_of(PAGE_SIZE));
        assert!(area.end() <= EBDA_START, "{paddr:#x}: {area:x?}");
        assert_eq!(
            area.is_default(),
            paddr >= 0x1_0000 || paddr + memsz <= 0x1000
        );
        check_mbi(&mem, &setup);
    }
}

#[test]
fn an_image_covering_conventional_memory_gets_its_boot_area_at_the_top_of_ram() {
    let mem = guest_mem(16 << 20);
    let image = low_multiboot(0x1000, 0x9_E000).build();
    let initrd = pattern(0x3000, 0x77);
    let setup = load(
        &mem,
        &LoadRequest {
            initrd: Some(&initrd),
            ..req(&image)
        },
    )
    .unwrap();
    // The initrd goes where it always goes, the area at the top of RAM.
    assert_eq!(setup.initrd, Some(MIB..MIB + 0x3000));
    let area = setup.boot_area;
    assert_eq!(area.range(), (16 * MIB - BOOT_AREA_SIZE)..16 * MIB);
    // mem_upper stops where the area starts, so an allocator that trusts it
    // leaves the boot structures alone.
    assert_eq!(
        u64::from(setup.mem_upper_kib) * 1024,
        area.base() - HIGH_MEMORY_START
    );
    check_mbi(&mem, &setup);
    let mods = u64::from(rd32(&mem, setup.mbi_address + 24));
    assert_eq!(mods, area.modules());
    assert_eq!(u64::from(rd32(&mem, mods)), MIB);
}

#[test]
fn elf64_low_image_gets_page_tables_and_stack_in_the_moved_area() {
    let mem = guest_mem(8 << 20);
    let b = ElfBuilder {
        class64: true,
        machine: EM_X86_64,
        e_type: 2,
        entry: 0x2010,
        segs: vec![Seg::load(0x2000, pattern(0x300, 0x33), 0x4000)],
    };
    let setup = load(&mem, &req(&b.build())).unwrap();
    let area = setup.boot_area;
    assert_eq!(area.base(), 0x6000);
    assert_eq!(
        setup.entry,
        EntryMode::Long64 {
            rip: 0x2010,
            rsp: area.stack_top(),
            rbx: area.mbi(),
            cr3: area.pml4(),
        }
    );
    // The identity map, walked from the moved PML4.
    let pdpt = rd64(&mem, area.pml4()) & !0xFFF;
    assert_eq!(pdpt, area.pdpt());
    for gib in 0..4u64 {
        let pd = rd64(&mem, pdpt + gib * 8) & !0xFFF;
        assert_eq!(pd, area.pd(gib));
        let pde = rd64(&mem, pd + 3 * 8);
        assert_eq!(pde & !0xFFF, (gib << 30) + (3 << 21));
        assert_eq!(pde & 0x83, 0x83);
    }
    check_mbi(&mem, &setup);
}

#[test]
fn a_device_range_over_the_default_place_moves_the_area() {
    let mem = guest_mem(4 << 20);
    let image = multiboot_image();
    let reserved = [Reserved {
        base: 0x9000,
        len: 0x10,
        name: "odd device",
    }];
    let setup = load(
        &mem,
        &LoadRequest {
            reserved: &reserved,
            ..req(&image)
        },
    )
    .unwrap();
    assert_eq!(setup.boot_area.base(), 0xA000);
    check_mbi(&mem, &setup);
}

#[test]
fn images_above_1_mib_keep_the_default_place_and_qemus_map() {
    let mem = guest_mem(32 << 20);
    let image = multiboot_image();
    let setup = load(&mem, &req(&image)).unwrap();
    assert_eq!(setup.boot_area, BootArea::DEFAULT);
    assert_eq!(setup.mbi_address, MBI_ADDR);
    check_mbi(&mem, &setup);
    assert_eq!(setup.memory_map.len(), 4, "{:x?}", setup.memory_map);
}

#[test]
fn an_image_that_leaves_no_room_is_refused_and_nothing_is_written() {
    let mem = guest_mem(4 << 20);
    fill(&mem, 0, 4 << 20, 0xC3);
    // Conventional memory and everything from 1 MiB to the top of RAM.
    let mut b = low_multiboot(0x1000, 0x9_E000);
    b.segs
        .push(Seg::load(MIB, pattern(0x10, 1), 3 * MIB - 0x1000));
    let image = b.build();
    let e = load(&mem, &req(&image)).unwrap_err();
    assert!(
        matches!(e, LoadError::NoRoomForBootStructures { .. }),
        "{e}"
    );
    let msg = e.to_string();
    assert!(msg.contains("60 KiB") && msg.contains("--mem"), "{msg}");
    assert!(rd_bytes(&mem, 0, 4 << 20).iter().all(|&x| x == 0xC3));
    // With a few more MiB it loads, the area above the image.
    let mem = guest_mem(8 << 20);
    let setup = load(&mem, &req(&image)).unwrap();
    assert_eq!(setup.boot_area.end(), 8 * MIB);
}
