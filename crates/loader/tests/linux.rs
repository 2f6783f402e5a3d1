//! Linux's PVH boot: the start info, its memory map, command line and
//! module, read back from guest memory as the kernel reads them.

#![cfg(target_arch = "x86_64")] // the x86 boot protocols; arm64: tests/arm64.rs

mod common;

use common::*;
use trapline_loader::layout::*;
use trapline_loader::linux::pvh::*;
use trapline_loader::*;

const PVH_ENTRY: u32 = E64_TEXT as u32 + 0x20;
const RSDP: u64 = 0xE_0000;

fn req<'a>(image: &'a [u8], initrd: Option<&'a [u8]>, reserved: &'a [Reserved]) -> LoadRequest<'a> {
    LoadRequest {
        image,
        image_name: "/boot/vmlinux",
        append: "console=ttyS0 exitport=0xf4",
        initrd,
        reserved,
        rsdp: Some(RSDP),
        fresh_memory: false,
    }
}

#[test]
fn a_pvh_note_makes_a_pvh_image_entered_at_the_note() {
    let info = inspect(&pvh_image(PVH_ENTRY)).unwrap();
    assert_eq!(info.kind, ImageKind::Pvh);
    assert_eq!(info.entry, u64::from(PVH_ENTRY));
    // Without the note it is a plain ELF64 entered at e_entry.
    assert_eq!(inspect(&elf64_image()).unwrap().kind, ImageKind::Elf64);
}

#[test]
fn a_pvh_note_outside_the_image_is_refused() {
    let e = inspect(&pvh_image(0x7000_0000)).unwrap_err();
    assert!(
        matches!(e, LoadError::EntryOutsideSegments { entry: 0x7000_0000 }),
        "{e}"
    );
}

#[test]
fn start_info_carries_cmdline_module_memmap_and_rsdp() {
    let img = pvh_image(PVH_ENTRY);
    let initrd = pattern(0x1234, 0x5a);
    let reserved = [Reserved {
        base: 0xFEC0_0000,
        len: 0x1000,
        name: "IOAPIC",
    }];
    let mem = guest_mem(16 << 20);
    let setup = load(&mem, &req(&img, Some(&initrd), &reserved)).unwrap();

    assert_eq!(setup.kind, ImageKind::Pvh);
    assert_eq!(
        setup.entry,
        EntryMode::Protected32 {
            eip: PVH_ENTRY,
            eax: 0,
            ebx: start_info_addr(setup.boot_area) as u32,
            esi: 0,
        }
    );
    assert!(
        setup.boot_area.is_default(),
        "a 1 MiB image leaves 0x1000 free"
    );
    assert_eq!(setup.code_selector, trapline_loader::gdt::SELECTOR_CODE32);

    let si = start_info_addr(setup.boot_area);
    assert_eq!(rd32(&mem, si), XEN_HVM_START_MAGIC);
    assert_eq!(rd32(&mem, si + 4), 1, "version 1: with a memory map");
    assert_eq!(rd32(&mem, si + 12), 1, "one module: the initrd");
    let modlist = rd64(&mem, si + 16);
    let cmdline = rd64(&mem, si + 24);
    assert_eq!(rd64(&mem, si + 32), RSDP);
    let memmap = rd64(&mem, si + 40);
    let entries = rd32(&mem, si + 48);

    // The command line is exactly --append: no argv[0] for Linux.
    assert_eq!(rd_cstr(&mem, cmdline), "console=ttyS0 exitport=0xf4");
    assert_eq!(setup.cmdline, "console=ttyS0 exitport=0xf4");

    // The module is the initrd, page-aligned after the image, intact.
    let start = rd64(&mem, modlist);
    let size = rd64(&mem, modlist + 8);
    assert_eq!(start % 4096, 0);
    assert!(start >= E64_DATA + E64_BSS);
    assert_eq!(size, initrd.len() as u64);
    assert_eq!(setup.initrd, Some(start..start + size));
    assert_eq!(rd_bytes(&mem, start, initrd.len()), initrd);

    // The memory map: RAM, the reserved low areas, the device range; in
    // hvm_memmap_table_entry form (addr, size, type, reserved).
    let got: Vec<(u64, u64, u32)> = (0..u64::from(entries))
        .map(|i| {
            let e = memmap + i * 24;
            (rd64(&mem, e), rd64(&mem, e + 8), rd32(&mem, e + 16))
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 0x9FC00, MMAP_RAM),
            (0x9FC00, 0x400, MMAP_RESERVED),
            (0xE0000, 0x20000, MMAP_RESERVED),
            (0x100000, (16 << 20) - 0x100000, MMAP_RAM),
            (0xFEC0_0000, 0x1000, MMAP_RESERVED),
        ]
    );
    let from_setup: Vec<(u64, u64, u32)> = setup
        .memory_map
        .iter()
        .map(|e| (e.base, e.len, e.kind))
        .collect();
    assert_eq!(got, from_setup);
}

#[test]
fn without_initrd_there_is_no_module_and_an_empty_cmdline_is_empty() {
    let img = pvh_image(PVH_ENTRY);
    let mem = guest_mem(16 << 20);
    let mut r = req(&img, None, &[]);
    r.append = "";
    r.rsdp = None;
    let setup = load(&mem, &r).unwrap();
    assert_eq!(setup.initrd, None);
    const START_INFO_ADDR: u64 = start_info_addr(BootArea::DEFAULT);
    assert_eq!(setup.boot_area, BootArea::DEFAULT);
    assert_eq!(rd32(&mem, START_INFO_ADDR + 12), 0);
    assert_eq!(rd64(&mem, START_INFO_ADDR + 16), 0);
    assert_eq!(
        rd64(&mem, START_INFO_ADDR + 32),
        0,
        "no RSDP: the kernel scans"
    );
    assert_eq!(rd_cstr(&mem, rd64(&mem, START_INFO_ADDR + 24)), "");
}

#[test]
fn the_start_info_moves_with_the_boot_area() {
    // Something claims the default place: the boot area moves, and the
    // start info, its command line and memory map move with it.
    let img = pvh_image(PVH_ENTRY);
    let reserved = [Reserved {
        base: LOADER_AREA_START,
        len: BOOT_AREA_SIZE,
        name: "a device over the default boot area",
    }];
    let mem = guest_mem(16 << 20);
    let setup = load(&mem, &req(&img, None, &reserved)).unwrap();
    assert!(!setup.boot_area.is_default());
    let si = start_info_addr(setup.boot_area);
    assert_eq!(
        setup.entry,
        EntryMode::Protected32 {
            eip: PVH_ENTRY,
            eax: 0,
            ebx: si as u32,
            esi: 0,
        }
    );
    assert_eq!(rd32(&mem, si), XEN_HVM_START_MAGIC);
    assert_eq!(
        rd_cstr(&mem, rd64(&mem, si + 24)),
        "console=ttyS0 exitport=0xf4"
    );
    assert_eq!(rd64(&mem, si + 40), setup.boot_area.mmap());
    assert_eq!(setup.gdt.base, setup.boot_area.gdt());
}

/// A compressed kernel or an initramfs given as the kernel is named for
/// what it is, with what to do instead.
#[test]
fn a_compressed_file_or_an_initramfs_is_named() {
    for (bytes, what) in [
        (&b"\x1f\x8b\x08\x00rest"[..], "gzip-compressed data"),
        (&b"\xfd7zXZ\x00rest"[..], "xz-compressed data"),
        (&b"\x28\xb5\x2f\xfdrest"[..], "zstd-compressed data"),
        (&b"070701000000"[..], "a cpio archive (an initramfs)"),
    ] {
        let e = inspect(bytes).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, LoadError::NotAKernel { .. }), "{msg}");
        assert!(
            msg.starts_with(&format!("the guest image is {what}, not a kernel")),
            "{msg}"
        );
        assert!(msg.contains("--initrd"), "{msg}");
    }
}

#[test]
fn a_file_that_is_no_kernel_gets_a_clear_error() {
    for junk in [&b"#!/bin/sh\necho not a kernel\n"[..], &[0u8; 4096][..]] {
        let e = inspect(junk).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, LoadError::NotElf), "{msg}");
        for word in ["Multiboot", "ELF64", "PVH", "bzImage"] {
            assert!(msg.contains(word), "'{msg}' should name {word}");
        }
    }
    // A bzImage is recognised by its setup header (its own tests are in
    // tests/bzimage.rs); one too old for trapline names what it needs.
    let mut bz = vec![0u8; 0x1000];
    bz[0x1fe..0x200].copy_from_slice(&[0x55, 0xaa]);
    bz[0x202..0x206].copy_from_slice(b"HdrS");
    bz[0x206..0x208].copy_from_slice(&0x0204u16.to_le_bytes());
    let e = inspect(&bz).unwrap_err();
    assert!(
        matches!(e, LoadError::BzImageTooOld { major: 2, minor: 4 }),
        "{e}"
    );
    assert!(e.to_string().contains("2.06"), "{e}");
}
