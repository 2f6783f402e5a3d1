//! Loading valid images: bytes, BSS, boot info, entry state, page tables.

#![cfg(target_arch = "x86_64")] // the x86 boot protocols; arm64: tests/arm64.rs

mod common;

use common::*;
use trapline_loader::gdt::{self, SELECTOR_CODE32, SELECTOR_CODE64, SELECTOR_DATA};
use trapline_loader::layout::*;
use trapline_loader::*;

const MIB: u64 = 1 << 20;

fn req<'a>(image: &'a [u8]) -> LoadRequest<'a> {
    LoadRequest {
        fresh_memory: false,
        rsdp: None,
        image,
        image_name: "x86/vmexit.flat",
        append: "",
        initrd: None,
        reserved: &[],
    }
}

#[test]
fn inspect_reports_multiboot_kind_entry_and_segments() {
    let b = multiboot_builder(0);
    let info = inspect(&b.build()).unwrap();
    assert_eq!(info.kind, ImageKind::Multiboot32);
    assert_eq!(info.entry, MB_TEXT + 12);
    assert_eq!(info.segments.len(), 2);
    assert_eq!(info.segments[0].paddr, MB_TEXT);
    assert_eq!(info.segments[0].offset, b.data_off(0) as u64);
    assert_eq!(info.segments[0].filesz, 0x200);
    assert_eq!(info.segments[1].filesz, 0x80);
    assert_eq!(info.segments[1].memsz, MB_BSS);
    let mb = info.multiboot.unwrap();
    assert_eq!(mb.offset, b.data_off(0) as u64);
    assert_eq!(mb.flags, 0);
}

#[test]
fn inspect_reports_elf64() {
    let info = inspect(&elf64_image()).unwrap();
    assert_eq!(info.kind, ImageKind::Elf64);
    assert_eq!(info.entry, E64_TEXT + 0x10);
    assert!(info.multiboot.is_none());
    assert_eq!(info.span().start, E64_TEXT);
    assert_eq!(info.span().end, E64_DATA + E64_BSS);
}

#[test]
fn multiboot_copies_segments_and_zeroes_bss() {
    let mem = guest_mem(4 << 20);
    // Dirty memory first: BSS must be zeroed by the loader, not by luck.
    fill(
        &mem,
        MB_TEXT,
        (MB_DATA + MB_BSS - MB_TEXT) as usize + 0x1000,
        0xAA,
    );
    let b = multiboot_builder(0);
    let image = b.build();
    let setup = load(&mem, &req(&image)).unwrap();

    assert_eq!(rd_bytes(&mem, MB_TEXT, 0x200), b.segs[0].data);
    assert_eq!(rd_bytes(&mem, MB_DATA, 0x80), b.segs[1].data);
    let bss = rd_bytes(&mem, MB_DATA + 0x80, (MB_BSS - 0x80) as usize);
    assert!(bss.iter().all(|&x| x == 0), "BSS not zeroed");
    // The byte after the image is untouched.
    assert_eq!(rd_bytes(&mem, MB_DATA + MB_BSS, 1), vec![0xAA]);
    assert_eq!(setup.image, MB_TEXT..MB_DATA + MB_BSS);
    assert_eq!(setup.initrd, None);
}

#[test]
fn fresh_memory_is_trusted_to_be_zero_and_bss_is_left_alone() {
    // A fresh mapping reads as zero already; the loader must not touch the
    // BSS pages then (here they hold a pattern, to see that it did not).
    let mem = guest_mem(4 << 20);
    fill(&mem, MB_DATA + 0x80, (MB_BSS - 0x80) as usize, 0xAA);
    let b = multiboot_builder(0);
    let image = b.build();
    load(
        &mem,
        &LoadRequest {
            fresh_memory: true,
            rsdp: None,
            ..req(&image)
        },
    )
    .unwrap();
    assert_eq!(rd_bytes(&mem, MB_DATA, 0x80), b.segs[1].data);
    assert!(rd_bytes(&mem, MB_DATA + 0x80, (MB_BSS - 0x80) as usize)
        .iter()
        .all(|&x| x == 0xAA));
}

#[test]
fn multiboot_entry_state() {
    let mem = guest_mem(4 << 20);
    let image = multiboot_image();
    let setup = load(&mem, &req(&image)).unwrap();
    assert_eq!(setup.kind, ImageKind::Multiboot32);
    assert_eq!(
        setup.entry,
        EntryMode::Protected32 {
            eip: (MB_TEXT + 12) as u32,
            eax: 0x2BAD_B002,
            ebx: MBI_ADDR as u32,
            esi: 0,
        }
    );
    assert_eq!(setup.mbi_address, MBI_ADDR);
    assert_eq!(setup.code_selector, SELECTOR_CODE32);
    assert_eq!(setup.data_selector, SELECTOR_DATA);
    let cs = setup.code_segment();
    assert!(cs.db && !cs.l && cs.g && cs.present && cs.s);
    assert_eq!((cs.base, cs.limit, cs.type_), (0, 0xFFFF_FFFF, 0xB));
    let ds = setup.data_segment();
    assert_eq!((ds.base, ds.limit, ds.type_), (0, 0xFFFF_FFFF, 0x3));
    // The GDT in guest memory is the one the segment fields were decoded from.
    assert_eq!(
        setup.gdt,
        GdtInfo {
            base: GDT_ADDR,
            limit: 31
        }
    );
    assert_eq!(rd_bytes(&mem, GDT_ADDR, 32), gdt::gdt_bytes().to_vec());
    for sel in [SELECTOR_CODE32, SELECTOR_DATA, SELECTOR_CODE64] {
        let raw = rd64(&mem, GDT_ADDR + u64::from(sel));
        assert_eq!(
            gdt::decode_gdt_entry(sel, raw),
            gdt::gdt_segment(sel).unwrap()
        );
    }
}

#[test]
fn mbi_fields_with_args_and_initrd() {
    let mem = guest_mem(32 << 20);
    let image = multiboot_image();
    let initrd = b"NR_CPUS=1\nTEST_DEVICE=0\n".to_vec();
    let setup = load(
        &mem,
        &LoadRequest {
            fresh_memory: false,
            rsdp: None,
            image: &image,
            image_name: "x86/vmexit.flat",
            append: "cpuid inl_from_pmtimer",
            initrd: Some(&initrd),
            reserved: &[],
        },
    )
    .unwrap();

    let mbi = MBI_ADDR;
    let flags = rd32(&mem, mbi);
    assert_eq!(flags, 1 | 4 | 8 | 0x40 | 0x200);
    assert_eq!(rd32(&mem, mbi + 4), 639);
    assert_eq!(
        rd32(&mem, mbi + 8),
        31 * 1024,
        "mem_upper = (32 MiB - 1 MiB) / 1 KiB"
    );
    assert_eq!(setup.mem_upper_kib, 31 * 1024);

    let cmdline = rd_cstr(&mem, u64::from(rd32(&mem, mbi + 16)));
    assert_eq!(cmdline, "x86/vmexit.flat cpuid inl_from_pmtimer");
    assert_eq!(setup.cmdline, cmdline);

    // One module: the initrd, page-aligned after the image's highest byte.
    assert_eq!(rd32(&mem, mbi + 20), 1);
    let mods = u64::from(rd32(&mem, mbi + 24));
    let start = u64::from(rd32(&mem, mods));
    let end = u64::from(rd32(&mem, mods + 4));
    let image_end = MB_DATA + MB_BSS;
    assert_eq!(start, (image_end + 0xFFF) & !0xFFF);
    assert_eq!(start % 4096, 0);
    assert_eq!(end - start, initrd.len() as u64);
    assert_eq!(setup.initrd, Some(start..end));
    assert_eq!(rd_bytes(&mem, start, initrd.len()), initrd);
    assert_eq!(rd_cstr(&mem, u64::from(rd32(&mem, mods + 8))), "");

    // Memory map, walked the way kvm-unit-tests walks it.
    let mmap = read_mmap(&mem, u64::from(rd32(&mem, mbi + 48)), rd32(&mem, mbi + 44));
    assert_eq!(
        mmap,
        vec![
            (0, 0x9FC00, 1),
            (0x9FC00, 0x400, 2),
            (0xE0000, 0x20000, 2),
            (0x100000, (32 << 20) - 0x100000, 1),
        ]
    );
    assert_eq!(rd_cstr(&mem, u64::from(rd32(&mem, mbi + 64))), "trapline");

    // Everything the loader wrote is out of page 0 and below the EBDA.
    for a in [
        mbi,
        mods,
        u64::from(rd32(&mem, mbi + 16)),
        u64::from(rd32(&mem, mbi + 48)),
    ] {
        assert!((0x1000..0x9FC00).contains(&a), "{a:#x}");
    }
}

#[test]
fn cmdline_without_append_is_just_the_name() {
    let mem = guest_mem(4 << 20);
    let image = multiboot_image();
    let setup = load(&mem, &req(&image)).unwrap();
    assert_eq!(rd_cstr(&mem, CMDLINE_ADDR), "x86/vmexit.flat");
    assert_eq!(setup.cmdline, "x86/vmexit.flat");
    assert_eq!(
        rd32(&mem, MBI_ADDR) & 8,
        0,
        "no mods flag without an initrd"
    );
    assert_eq!(rd32(&mem, MBI_ADDR + 20), 0);
}

#[test]
fn argv0_stays_one_word() {
    let mem = guest_mem(4 << 20);
    let image = multiboot_image();
    let mut r = req(&image);
    r.image_name = "my dir/t.flat";
    r.append = "a b";
    assert_eq!(load(&mem, &r).unwrap().cmdline, "my_dir/t.flat a b");
    r.image_name = "";
    assert_eq!(load(&mem, &r).unwrap().cmdline, "trapline a b");
}

#[test]
fn page_zero_is_never_written() {
    let mem = guest_mem(4 << 20);
    fill(&mem, 0, 0x1000, 0x5A);
    let image = multiboot_image();
    load(&mem, &req(&image)).unwrap();
    assert!(rd_bytes(&mem, 0, 0x1000).iter().all(|&b| b == 0x5A));
}

#[test]
fn acpi_area_is_never_written() {
    let mem = guest_mem(4 << 20);
    fill(&mem, 0xE0000, 0x20000, 0x77);
    let image = elf64_image();
    load(&mem, &req(&image)).unwrap();
    assert!(rd_bytes(&mem, 0xE0000, 0x20000).iter().all(|&b| b == 0x77));
}

#[test]
fn multiboot_flags_bits_0_1_2_are_accepted() {
    let mem = guest_mem(4 << 20);
    for flags in [1, 2, 3, 4, 7, 1 << 20] {
        let image = multiboot_builder(flags).build();
        assert!(inspect(&image).is_ok(), "flags {flags:#x}");
        load(&mem, &req(&image)).unwrap();
    }
}

#[test]
fn elf64_entry_state_and_page_tables() {
    let mem = guest_mem(8 << 20);
    fill(&mem, E64_DATA, E64_BSS as usize, 0xAA);
    let b = elf64_builder();
    let image = b.build();
    let setup = load(&mem, &req(&image)).unwrap();
    assert_eq!(setup.kind, ImageKind::Elf64);
    assert_eq!(
        setup.entry,
        EntryMode::Long64 {
            rip: E64_TEXT + 0x10,
            rsp: BOOT_STACK_TOP,
            rbx: MBI_ADDR,
            cr3: PML4_ADDR,
        }
    );
    assert_eq!(setup.code_selector, SELECTOR_CODE64);
    let cs = setup.code_segment();
    assert!(cs.l && !cs.db && cs.present);

    // Segments copied (by linux-loader) and BSS zeroed (by us).
    assert_eq!(rd_bytes(&mem, E64_TEXT, 0x300), b.segs[0].data);
    assert_eq!(rd_bytes(&mem, E64_DATA, 0x40), b.segs[1].data);
    assert!(rd_bytes(&mem, E64_DATA + 0x40, (E64_BSS - 0x40) as usize)
        .iter()
        .all(|&x| x == 0));

    // PML4[0] -> PDPT; PDPT[0..4] -> 4 PDs; each PD: 512 x 2 MiB pages.
    let pml4e = rd64(&mem, PML4_ADDR);
    assert_eq!(pml4e & 0x3, 0x3, "present + writable");
    let pdpt = pml4e & !0xFFF;
    assert_eq!(pdpt, PDPT_ADDR);
    for i in 1..512 {
        assert_eq!(rd64(&mem, PML4_ADDR + i * 8), 0);
    }
    for gib in 0..4u64 {
        let pdpte = rd64(&mem, pdpt + gib * 8);
        assert_eq!(pdpte & 0x83, 0x3, "present + writable, not a 1 GiB page");
        let pd = pdpte & !0xFFF;
        for j in [0u64, 1, 255, 511] {
            let pde = rd64(&mem, pd + j * 8);
            assert_eq!(pde & 0x83, 0x83, "present + writable + 2 MiB page");
            assert_eq!(pde & !0xFFF, (gib << 30) + (j << 21), "identity");
        }
    }
    assert_eq!(rd64(&mem, pdpt + 4 * 8), 0);
    // Walk the entry point through the tables.
    let rip = E64_TEXT + 0x10;
    let pde = rd64(
        &mem,
        (rd64(&mem, pdpt + (rip >> 30) * 8) & !0xFFF) + ((rip >> 21) & 511) * 8,
    );
    assert_eq!((pde & !0x1F_FFFF) + (rip & 0x1F_FFFF), rip);

    // The boot stack lies inside the boot area, which the image does not use.
    let area = setup.boot_area.range();
    assert!(setup.image.start >= area.end || setup.image.end <= area.start);
    assert!(area.contains(&(BOOT_STACK_TOP - 1)));
    // And it gets the same MBI.
    assert_eq!(
        rd_cstr(&mem, u64::from(rd32(&mem, MBI_ADDR + 16))),
        "x86/vmexit.flat"
    );
    assert_eq!(rd32(&mem, MBI_ADDR + 8), 7 * 1024);
}

/// The shape of a real kvm-unit-tests `.flat`: ELF32 wrapping a text segment
/// at 0x4000B0 (header at file offset 0xB0) and data with ~12 MiB BSS.
#[test]
fn kvm_unit_tests_shaped_flat_in_32_mib() {
    let mut text = multiboot_header(0);
    text.extend(pattern(0x9000 - 12, 0x55));
    let b = ElfBuilder {
        class64: false,
        machine: EM_386,
        e_type: 2,
        entry: 0x40_00BC,
        segs: vec![
            Seg::load(0x40_00B0, text, 0x9000),
            Seg::load(0x40_A000, pattern(0x3000, 0x66), 0x3000 + 0xC3_0000),
        ],
    };
    let image = b.build();
    let mem = guest_mem(32 << 20);
    let env = b"TEST_DEVICE=0\n";
    let setup = load(
        &mem,
        &LoadRequest {
            fresh_memory: false,
            rsdp: None,
            image: &image,
            image_name: "x86/vmexit.flat",
            append: "cpuid",
            initrd: Some(env),
            reserved: &[
                Reserved {
                    base: 0xFEC0_0000,
                    len: 0x1000,
                    name: "IOAPIC",
                },
                Reserved {
                    base: 0xFEE0_0000,
                    len: 0x1000,
                    name: "LAPIC",
                },
                Reserved {
                    base: 0xFEFF_C000,
                    len: 0x4000,
                    name: "KVM TSS",
                },
            ],
        },
    )
    .unwrap();
    let edata = setup.image.end;
    assert_eq!(edata, 0x40_A000 + 0x3000 + 0xC3_0000);
    // kvm-unit-tests' allocator gets [edata, mem_upper * 1024): must be sane.
    assert!(u64::from(setup.mem_upper_kib) * 1024 > edata + MIB);
    assert_eq!(
        setup.entry,
        EntryMode::Protected32 {
            eip: 0x40_00BC,
            eax: 0x2BAD_B002,
            ebx: MBI_ADDR as u32,
            esi: 0,
        }
    );
    let mmap = read_mmap(
        &mem,
        u64::from(rd32(&mem, MBI_ADDR + 48)),
        rd32(&mem, MBI_ADDR + 44),
    );
    // The three device ranges, with nothing between them, are one
    // reserved entry.
    assert!(mmap.contains(&(0xFEC0_0000, 0xFF00_0000 - 0xFEC0_0000, 2)));
    // The MBI is not inside the allocator's range nor in page 0.
    assert!(MBI_ADDR >= 0x1000 && MBI_ADDR < edata);
}

#[test]
fn memory_map_lists_low_devices_only_and_carves_ram() {
    let mem = guest_mem(16 << 20);
    let image = multiboot_image();
    let reserved = [
        Reserved {
            base: 0xFEE0_0000,
            len: 0x1000,
            name: "LAPIC",
        },
        Reserved {
            base: 0x80_0000,
            len: 0x10_0000,
            name: "in-RAM window",
        },
        Reserved {
            base: 0xE_0000,
            len: 0x2_0000,
            name: "ACPI",
        },
        Reserved {
            base: 0x1_0000_0000,
            len: 0x1000,
            name: "above 4 GiB",
        },
        Reserved {
            base: 0x3000_0000,
            len: 0,
            name: "empty",
        },
    ];
    let mut r = req(&image);
    r.reserved = &reserved;
    let setup = load(&mem, &r).unwrap();
    let got: Vec<(u64, u64, u32)> = setup
        .memory_map
        .iter()
        .map(|e| (e.base, e.len, e.kind))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 0x9FC00, 1),
            (0x9FC00, 0x400, 2),
            (0xE0000, 0x20000, 2),
            (0x100000, 0x70_0000, 1),
            (0x80_0000, 0x10_0000, 2),
            (0x90_0000, (16 << 20) - 0x90_0000, 1),
            (0xFEE0_0000, 0x1000, 2),
        ]
    );
    // mem_upper stops at the first device range above 1 MiB.
    assert_eq!(setup.mem_upper_kib, 7 * 1024);
    let mmap = read_mmap(&mem, MMAP_ADDR, rd32(&mem, MBI_ADDR + 44));
    assert_eq!(mmap, got);
}

#[test]
fn split_guest_memory_regions_count_as_one_ram() {
    use vm_memory::{GuestAddress, GuestMemoryMmap};
    let mem = GuestMemoryMmap::from_ranges(&[
        (GuestAddress(0), 1 << 20),
        (GuestAddress(1 << 20), 3 << 20),
    ])
    .unwrap();
    let image = multiboot_image();
    let setup = load(&mem, &req(&image)).unwrap();
    assert_eq!(setup.mem_upper_kib, 3 * 1024);
}

#[test]
fn boot_structures_do_not_depend_on_previous_memory() {
    let image = multiboot_image();
    let a = guest_mem(4 << 20);
    let b = guest_mem(4 << 20);
    fill(
        &b,
        LOADER_AREA_START,
        (LOADER_AREA_END - LOADER_AREA_START) as usize,
        0xEE,
    );
    load(&a, &req(&image)).unwrap();
    load(&b, &req(&image)).unwrap();
    let len = (LOADER_AREA_END - LOADER_AREA_START) as usize;
    assert_eq!(
        rd_bytes(&a, LOADER_AREA_START, len),
        rd_bytes(&b, LOADER_AREA_START, len)
    );
}

#[test]
fn fresh_memory_gets_only_the_boot_structures_written() {
    // Fresh guest RAM is zero already: the loader writes the structures
    // and leaves the rest of the area (the boot stack here) unwritten, so
    // its pages are not faulted in on the host.
    let image = multiboot_image();
    let fresh = guest_mem(4 << 20);
    let dirty = guest_mem(4 << 20);
    let len = (LOADER_AREA_END - LOADER_AREA_START) as usize;
    let stack = BOOT_STACK_OFFSET as usize;
    fill(&fresh, LOADER_AREA_START + stack as u64, len - stack, 0xEE);
    fill(&dirty, LOADER_AREA_START, len, 0xEE);
    let fresh_req = LoadRequest {
        fresh_memory: true,
        ..req(&image)
    };
    load(&fresh, &fresh_req).unwrap();
    load(&dirty, &req(&image)).unwrap();
    let (f, d) = (
        rd_bytes(&fresh, LOADER_AREA_START, len),
        rd_bytes(&dirty, LOADER_AREA_START, len),
    );
    assert!(f[stack..].iter().all(|&x| x == 0xEE));
    assert!(d[stack..].iter().all(|&x| x == 0));
    assert_eq!(f[..stack], d[..stack]);
}
