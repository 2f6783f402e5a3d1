//! Linux's bzImage boot protocol: a synthetic bzImage (setup header built
//! byte by byte here) loaded into guest memory, and `boot_params` read back
//! at the offsets the kernel reads it (Documentation/arch/x86/zero-page.rst).

#![cfg(target_arch = "x86_64")] // the x86 boot protocols; arm64: tests/arm64.rs

mod common;

use common::*;
use trapline_loader::gdt::SELECTOR_CODE32;
use trapline_loader::linux::zeropage::{boot_params_addr, E820_MAX_ENTRIES};
use trapline_loader::*;

const MIB: u64 = 1 << 20;
const RSDP: u64 = 0xE_0000;
const APPEND: &str = "console=ttyS0 panic=-1 exitport=0xf4";
const SETUP_SECTS: u8 = 3;
const SETUP_SIZE: usize = (SETUP_SECTS as usize + 1) * 512;
const PREF: u64 = 4 * MIB;
const INIT_SIZE: u32 = 3 * MIB as u32;
const CMDLINE_SIZE: u32 = 2047;

/// The knobs of a synthetic bzImage.
struct Bz {
    version: u16,
    loadflags: u8,
    relocatable: bool,
    pref: u64,
    init_size: u32,
    initrd_addr_max: u32,
    /// `0x202 + this` is where the header says it ends.
    header_len: u8,
    kernel: Vec<u8>,
}

impl Bz {
    /// A 6.1-like kernel: protocol 2.15, relocatable, prefers 4 MiB here.
    fn modern() -> Bz {
        Bz {
            version: 0x020F,
            loadflags: 0x01,
            relocatable: true,
            pref: PREF,
            init_size: INIT_SIZE,
            initrd_addr_max: 0x7FFF_FFFF,
            header_len: 0x6A,
            kernel: pattern(0x3000, 0x11),
        }
    }

    fn build(&self) -> Vec<u8> {
        // Setup code is 0xCC everywhere the header does not claim, so a
        // header field read past the header's end shows up.
        let mut f = vec![0xCC; SETUP_SIZE];
        f[0x1F1..0x26C].fill(0);
        f[0x1F1] = SETUP_SECTS;
        put32(&mut f, 0x1F4, (self.kernel.len() / 16) as u32); // syssize
        put16(&mut f, 0x1FA, 0xFFFF); // vid_mode: "normal"
        put16(&mut f, 0x1FE, 0xAA55);
        f[0x200] = 0xEB;
        f[0x201] = self.header_len;
        f[0x202..0x206].copy_from_slice(b"HdrS");
        put16(&mut f, 0x206, self.version);
        f[0x211] = self.loadflags;
        put32(&mut f, 0x214, 0x10_0000);
        put32(&mut f, 0x22C, self.initrd_addr_max);
        put32(&mut f, 0x230, 0x20_0000);
        f[0x234] = u8::from(self.relocatable);
        put16(&mut f, 0x236, 0x3); // XLF_KERNEL_64 | XLF_CAN_BE_LOADED_ABOVE_4G
        put32(&mut f, 0x238, CMDLINE_SIZE);
        put64(&mut f, 0x250, 0xDEAD_BEEF); // setup_data the loader must not pass on
        put64(&mut f, 0x258, self.pref);
        put32(&mut f, 0x260, self.init_size);
        // Past the declared end of the header: setup code again.
        let end = 0x202 + usize::from(self.header_len);
        if end < 0x26C {
            f[end..0x26C].fill(0xCC);
        }
        f.extend_from_slice(&self.kernel);
        f
    }
}

fn req<'a>(image: &'a [u8], initrd: Option<&'a [u8]>, reserved: &'a [Reserved]) -> LoadRequest<'a> {
    LoadRequest {
        image,
        image_name: "/boot/bzImage",
        append: APPEND,
        initrd,
        reserved,
        rsdp: Some(RSDP),
        fresh_memory: false,
    }
}

fn rd8(mem: &vm_memory::GuestMemoryMmap, addr: u64) -> u8 {
    rd_bytes(mem, addr, 1)[0]
}
fn rd16(mem: &vm_memory::GuestMemoryMmap, addr: u64) -> u16 {
    u16::from_le_bytes(rd_bytes(mem, addr, 2).try_into().unwrap())
}

/// The E820 table as the kernel reads it: `e820_entries` at 0x1E8, 20-byte
/// entries from 0x2D0.
fn e820(mem: &vm_memory::GuestMemoryMmap, bp: u64) -> Vec<MmapEntry> {
    (0..u64::from(rd8(mem, bp + 0x1E8)))
        .map(|i| {
            let e = bp + 0x2D0 + i * 20;
            MmapEntry {
                base: rd64(mem, e),
                len: rd64(mem, e + 8),
                kind: rd32(mem, e + 16),
            }
        })
        .collect()
}

const IOAPIC: Reserved = Reserved {
    base: 0xFEC0_0000,
    len: 0x1000,
    name: "IOAPIC",
};

#[test]
fn a_bzimage_is_one_segment_at_its_preferred_address_spanning_init_size() {
    let img = Bz::modern().build();
    let info = inspect(&img).unwrap();
    assert_eq!(info.kind, ImageKind::BzImage);
    assert_eq!(info.entry, PREF);
    assert_eq!(
        info.segments,
        vec![LoadSegment {
            index: 0,
            paddr: PREF,
            offset: SETUP_SIZE as u64,
            filesz: 0x3000,
            memsz: u64::from(INIT_SIZE),
        }]
    );
    let h = info.bzimage.unwrap();
    assert_eq!(
        (h.version, h.setup_size, h.header_end),
        (0x020F, 0x800, 0x26C)
    );
    assert_eq!(h.cmdline_size, CMDLINE_SIZE);
    assert!(info.multiboot.is_none());
}

#[test]
fn boot_params_carry_header_cmdline_initrd_e820_and_rsdp() {
    let bz = Bz::modern();
    let img = bz.build();
    let initrd = pattern(0x1234, 0x5a);
    let reserved = [IOAPIC];
    let mem = guest_mem(32 << 20);
    fill(&mem, 0, 32 << 20, 0xEE); // not fresh: everything must be written
    let setup = load(&mem, &req(&img, Some(&initrd), &reserved)).unwrap();

    // Entry: the 32-bit entry at the load address, ESI = boot_params.
    let bp = boot_params_addr(setup.boot_area);
    assert_eq!(setup.kind, ImageKind::BzImage);
    assert_eq!(
        setup.entry,
        EntryMode::Protected32 {
            eip: PREF as u32,
            eax: 0,
            ebx: 0,
            esi: bp as u32,
        }
    );
    assert_eq!(setup.code_selector, SELECTOR_CODE32);
    assert_eq!(setup.mbi_address, bp);
    assert!(setup.boot_area.is_default());
    assert!(setup.boot_area.range().contains(&bp));
    assert_eq!(bp % 4096, 0);

    // The protected-mode kernel, and nothing of the setup code, at 4 MiB.
    assert_eq!(rd_bytes(&mem, PREF, bz.kernel.len()), bz.kernel);
    assert_eq!(setup.image, PREF..PREF + u64::from(INIT_SIZE));

    // The image's own header, copied.
    assert_eq!(rd16(&mem, bp + 0x1FE), 0xAA55);
    assert_eq!(rd32(&mem, bp + 0x202), u32::from_le_bytes(*b"HdrS"));
    assert_eq!(rd16(&mem, bp + 0x206), 0x020F);
    assert_eq!(rd16(&mem, bp + 0x1FA), 0xFFFF, "vid_mode");
    assert_eq!(rd8(&mem, bp + 0x1F1), SETUP_SECTS);
    assert_eq!(rd32(&mem, bp + 0x238), CMDLINE_SIZE);
    assert_eq!(rd64(&mem, bp + 0x258), PREF);
    assert_eq!(rd32(&mem, bp + 0x260), INIT_SIZE);
    // What the loader fills in.
    assert_eq!(rd8(&mem, bp + 0x210), 0xFF, "type_of_loader");
    assert_eq!(rd8(&mem, bp + 0x211), 0x81, "LOADED_HIGH | CAN_USE_HEAP");
    assert_eq!(rd16(&mem, bp + 0x224), 0xFE00, "heap_end_ptr");
    assert_eq!(rd32(&mem, bp + 0x214), PREF as u32, "code32_start");
    assert_eq!(rd64(&mem, bp + 0x250), 0, "setup_data");
    assert_eq!(rd64(&mem, bp + 0x70), RSDP, "acpi_rsdp_addr");
    assert_eq!(rd8(&mem, bp + 0x1EF), 0, "sentinel");
    let cmd = u64::from(rd32(&mem, bp + 0x228));
    assert_eq!(cmd, setup.boot_area.cmdline());
    assert_eq!(rd_cstr(&mem, cmd), APPEND, "no argv[0] for Linux");
    assert_eq!(setup.cmdline, APPEND);

    // The initrd: page-aligned after the kernel's decompression space.
    let r = setup.initrd.clone().unwrap();
    assert_eq!(r.start, PREF + u64::from(INIT_SIZE));
    assert_eq!(u64::from(rd32(&mem, bp + 0x218)), r.start, "ramdisk_image");
    assert_eq!(rd32(&mem, bp + 0x21C), initrd.len() as u32, "ramdisk_size");
    assert_eq!(rd_bytes(&mem, r.start, initrd.len()), initrd);

    // The E820 table is the memory map the loader reports, entry for entry.
    let table = e820(&mem, bp);
    assert_eq!(table, setup.memory_map);
    assert!(table.contains(&MmapEntry {
        base: 0xFEC0_0000,
        len: 0x1000,
        kind: MMAP_RESERVED
    }));
    assert!(table.contains(&MmapEntry {
        base: 0x10_0000,
        len: (32 << 20) - 0x10_0000,
        kind: MMAP_RAM
    }));
}

#[test]
fn the_e820_table_is_the_pvh_memory_map() {
    let reserved = [
        IOAPIC,
        Reserved {
            base: 0x180_0000,
            len: 0x1000,
            name: "a device inside RAM",
        },
    ];
    let bz_mem = guest_mem(32 << 20);
    let bz = load(&bz_mem, &req(&Bz::modern().build(), None, &reserved)).unwrap();
    let pvh_mem = guest_mem(32 << 20);
    let pvh = load(
        &pvh_mem,
        &req(&pvh_image(E64_TEXT as u32 + 0x20), None, &reserved),
    )
    .unwrap();
    assert_eq!(pvh.kind, ImageKind::Pvh);
    assert_eq!(bz.boot_area, pvh.boot_area);
    // The PVH memmap as the kernel reads it from hvm_start_info.
    let si = pvh.mbi_address;
    let pvh_map: Vec<MmapEntry> = (0..u64::from(rd32(&pvh_mem, si + 48)))
        .map(|i| {
            let e = rd64(&pvh_mem, si + 40) + i * 24;
            MmapEntry {
                base: rd64(&pvh_mem, e),
                len: rd64(&pvh_mem, e + 8),
                kind: rd32(&pvh_mem, e + 16),
            }
        })
        .collect();
    assert_eq!(e820(&bz_mem, boot_params_addr(bz.boot_area)), pvh_map);
    assert_eq!(bz.memory_map, pvh.memory_map);
}

#[test]
fn a_protocol_2_06_header_copies_only_its_own_fields() {
    // 2.06 ends at cmdline_size (0x23C): no pref_address, init_size,
    // acpi_rsdp_addr; the bytes after it are setup code.
    let bz = Bz {
        version: 0x0206,
        header_len: 0x3A,
        ..Bz::modern()
    };
    let img = bz.build();
    let info = inspect(&img).unwrap();
    assert_eq!(info.entry, 0x10_0000, "loaded at 1 MiB");
    assert_eq!(info.bzimage.unwrap().header_end, 0x23C);
    let mem = guest_mem(16 << 20);
    let setup = load(&mem, &req(&img, None, &[])).unwrap();
    let bp = boot_params_addr(setup.boot_area);
    assert_eq!(rd32(&mem, bp + 0x238), CMDLINE_SIZE);
    assert_eq!(
        rd32(&mem, bp + 0x23C),
        0,
        "hardware_subarch is not setup code"
    );
    assert_eq!(rd64(&mem, bp + 0x258), 0, "pref_address is not setup code");
    assert_eq!(rd64(&mem, bp + 0x70), 0, "no acpi_rsdp_addr before 2.14");
    assert_eq!(rd_bytes(&mem, 0x10_0000, bz.kernel.len()), bz.kernel);
    assert_eq!(
        setup.entry,
        EntryMode::Protected32 {
            eip: 0x10_0000,
            eax: 0,
            ebx: 0,
            esi: bp as u32,
        }
    );
}

#[test]
fn a_non_relocatable_kernel_loads_at_1_mib_and_spans_its_runtime_address() {
    let img = Bz {
        relocatable: false,
        ..Bz::modern()
    }
    .build();
    let info = inspect(&img).unwrap();
    assert_eq!(info.entry, 0x10_0000);
    // It moves itself to pref_address: the initrd must go after that.
    assert_eq!(info.span().end, PREF + u64::from(INIT_SIZE));
    let initrd = pattern(0x100, 1);
    let setup = load(&guest_mem(16 << 20), &req(&img, Some(&initrd), &[])).unwrap();
    assert_eq!(
        setup.initrd.unwrap().start,
        PREF + u64::from(INIT_SIZE),
        "initrd clear of the decompressor"
    );
}

#[test]
fn an_old_protocol_is_refused_by_version() {
    for (version, minor) in [(0x0205u16, 5u8), (0x0200, 0), (0x0100, 0)] {
        let img = Bz {
            version,
            ..Bz::modern()
        }
        .build();
        let e = inspect(&img).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, LoadError::BzImageTooOld { minor: m, .. } if m == minor),
            "{msg}"
        );
        assert!(msg.contains("2.06") && msg.contains("PVH"), "{msg}");
    }
}

#[test]
fn a_zimage_is_refused() {
    let img = Bz {
        loadflags: 0,
        ..Bz::modern()
    }
    .build();
    let e = inspect(&img).unwrap_err();
    assert!(matches!(e, LoadError::BadBzImage { .. }), "{e}");
    assert!(e.to_string().contains("zImage"), "{e}");
}

#[test]
fn a_truncated_bzimage_is_a_clear_error_at_every_length() {
    let img = Bz::modern().build();
    for len in 0..img.len() {
        let cut = &img[..len];
        match inspect(cut) {
            Ok(info) => panic!("{len} bytes accepted: {info:?}"),
            // Before the signatures are complete it is just not a kernel.
            Err(LoadError::NotElf | LoadError::Empty) => assert!(len < 0x206, "{len}"),
            Err(e @ LoadError::Truncated { .. }) => {
                assert!(len >= 0x206, "{len}");
                let msg = e.to_string();
                assert!(
                    msg.contains("bzImage") && msg.contains("truncated"),
                    "{msg}"
                );
            }
            Err(e) => panic!("{len} bytes: unexpected {e}"),
        }
    }
    // The three places it can end: in the header, in the setup code, or
    // right after it with no kernel at all.
    for (len, what) in [
        (0x210, "setup header"),
        (0x400, "protected-mode kernel"),
        (SETUP_SIZE, "protected-mode kernel"),
        (SETUP_SIZE + 0x2FFF, "syssize"),
    ] {
        let e = inspect(&img[..len]).unwrap_err();
        assert!(e.to_string().contains(what), "{len}: {e}");
    }
}

#[test]
fn a_command_line_longer_than_cmdline_size_is_refused() {
    let img = Bz::modern().build();
    let long = "x".repeat(CMDLINE_SIZE as usize + 1);
    let r = LoadRequest {
        append: &long,
        ..req(&img, None, &[])
    };
    let e = load(&guest_mem(16 << 20), &r).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::CmdlineTooLong {
                len: 2048,
                max: 2047
            }
        ),
        "{e}"
    );
    let fits = "x".repeat(CMDLINE_SIZE as usize);
    let r = LoadRequest {
        append: &fits,
        ..req(&img, None, &[])
    };
    assert!(load(&guest_mem(16 << 20), &r).is_ok());
}

#[test]
fn initrd_addr_max_is_respected() {
    let end = PREF + u64::from(INIT_SIZE);
    let img = Bz {
        // The highest byte the initrd may occupy: one page after the kernel.
        initrd_addr_max: (end + 0xFFF) as u32,
        ..Bz::modern()
    }
    .build();
    let mem = guest_mem(16 << 20);
    assert!(load(&mem, &req(&img, Some(&[7; 0x1000]), &[])).is_ok());
    let e = load(&mem, &req(&img, Some(&[7; 0x1001]), &[])).unwrap_err();
    assert!(
        matches!(e, LoadError::InitrdAboveAddrMax { max, .. } if max == end + 0xFFF),
        "{e}"
    );
}

#[test]
fn a_kernel_that_does_not_fit_ram_asks_for_more_memory() {
    let img = Bz::modern().build();
    let e = load(&guest_mem(6 << 20), &req(&img, None, &[])).unwrap_err();
    assert!(matches!(e, LoadError::BeyondRam { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("--mem") && msg.contains("decompresses"),
        "{msg}"
    );
}

#[test]
fn a_footprint_above_4_gib_is_refused_not_wrapped() {
    // pref_address near 4 GiB: the kernel falls back to 1 MiB; an init_size
    // that then runs past 4 GiB is refused.
    let img = Bz {
        pref: 0xFFFF_F000,
        init_size: u32::MAX,
        ..Bz::modern()
    }
    .build();
    let e = inspect(&img).unwrap_err();
    assert!(matches!(e, LoadError::BadBzImage { .. }), "{e}");
    assert!(e.to_string().contains("4 GiB"), "{e}");
}

#[test]
fn too_many_reserved_ranges_for_the_e820_table_are_refused() {
    // Each device range with RAM between it and the next is one reserved
    // entry (ranges with nothing between them are joined); with RAM and
    // the low areas that is more than boot_params holds (a PVH or
    // Multiboot guest's map has room for them).
    let reserved: Vec<Reserved> = (0..E820_MAX_ENTRIES as u64)
        .map(|i| Reserved {
            base: 0x80_0000 + i * 0x2000,
            len: 0x1000,
            name: "many",
        })
        .collect();
    let e = load(
        &guest_mem(16 << 20),
        &req(&Bz::modern().build(), None, &reserved),
    )
    .unwrap_err();
    assert!(
        matches!(e, LoadError::TooManyMmapEntries { max: 128, .. }),
        "{e}"
    );
}
