//! Images and requests the loader must refuse, each with an actionable error.

#![cfg(target_arch = "x86_64")] // the x86 boot protocols; arm64: tests/arm64.rs

mod common;

use common::*;
use trapline_loader::layout::*;
use trapline_loader::*;

fn req<'a>(image: &'a [u8]) -> LoadRequest<'a> {
    LoadRequest {
        fresh_memory: false,
        rsdp: None,
        image,
        image_name: "t.flat",
        append: "",
        initrd: None,
        reserved: &[],
    }
}

fn err(image: &[u8]) -> LoadError {
    let e = inspect(image).expect_err("inspect accepted a bad image");
    // load must refuse it the same way.
    let mem = guest_mem(4 << 20);
    let e2 = load(&mem, &req(image)).expect_err("load accepted a bad image");
    assert_eq!(e.to_string(), e2.to_string());
    e
}

#[test]
fn empty() {
    assert!(matches!(err(&[]), LoadError::Empty));
}

#[test]
fn truncated_elf_header() {
    let img = multiboot_image();
    for len in [1, 3, 4, 15, 16, 40, 51] {
        let e = err(&img[..len]);
        assert!(matches!(e, LoadError::Truncated { .. }), "len {len}: {e}");
    }
    let img = elf64_image();
    assert!(matches!(
        err(&img[..63]),
        LoadError::Truncated { need: 64, .. }
    ));
}

#[test]
fn bad_magic() {
    let mut img = multiboot_image();
    img[1] = b'X';
    let e = err(&img);
    assert!(matches!(e, LoadError::NotElf));
    assert!(e.to_string().contains("not an ELF"));
    assert!(matches!(
        err(b"MZ\x90\x00 this is a PE file"),
        LoadError::NotElf
    ));
}

#[test]
fn wrong_class() {
    let mut img = multiboot_image();
    img[4] = 3;
    assert!(matches!(err(&img), LoadError::BadClass(3)));
}

#[test]
fn big_endian() {
    let mut img = multiboot_image();
    img[5] = 2;
    assert!(matches!(err(&img), LoadError::NotLittleEndian(2)));
}

#[test]
fn wrong_machine() {
    let mut b = multiboot_builder(0);
    b.machine = EM_X86_64; // ELF32 claiming x86-64
    assert!(matches!(
        err(&b.build()),
        LoadError::WrongMachine {
            bits: 32,
            machine: 62,
            ..
        }
    ));
    let mut b = elf64_builder();
    b.machine = 243; // RISC-V
    let e = err(&b.build());
    assert!(matches!(
        e,
        LoadError::WrongMachine {
            bits: 64,
            machine: 243,
            ..
        }
    ));
    assert!(e.to_string().contains("EM_X86_64"));
}

#[test]
fn an_aarch64_elf_is_refused_as_an_image_for_aarch64() {
    let mut b = elf64_builder();
    b.machine = 183;
    let e = err(&b.build());
    assert!(matches!(e, LoadError::WrongArchitecture { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("ELF64 AArch64 executable") && msg.contains("for aarch64"),
        "{msg}"
    );
    // The project's own arm64 payloads, as a user would pass them.
    for (name, image) in trapline_guest::aarch64::PAYLOADS {
        let e = err(image);
        assert!(
            matches!(e, LoadError::WrongArchitecture { .. }),
            "{name}: {e}"
        );
    }
}

#[test]
fn an_arm64_linux_image_is_refused_as_an_image_for_aarch64() {
    let mut img = vec![0u8; 0x1000];
    img[0x10..0x18].copy_from_slice(&0x10_0000u64.to_le_bytes());
    img[0x38..0x3C].copy_from_slice(b"ARM\x64");
    let e = err(&img);
    assert!(e.to_string().contains("an arm64 Linux Image"), "{e}");
    // A raw binary stays what it was on x86: not an ELF.
    img[0x38] = 0;
    assert!(matches!(err(&img), LoadError::NotElf));
}

#[test]
fn not_executable() {
    let mut b = elf64_builder();
    b.e_type = 3; // ET_DYN
    assert!(matches!(err(&b.build()), LoadError::NotExecutable(3)));
}

#[test]
fn phdr_table_out_of_file() {
    let b = multiboot_builder(0);
    let mut img = b.build();
    let near_eof = img.len() as u32 - 8;
    put32(&mut img, 28, near_eof); // e_phoff near EOF
    assert!(matches!(err(&img), LoadError::PhdrTableOutOfFile { .. }));
    let b = elf64_builder();
    let mut img = b.build();
    put64(&mut img, 32, u64::MAX - 10); // e_phoff + size overflows
    assert!(matches!(err(&img), LoadError::PhdrTableOutOfFile { .. }));
}

#[test]
fn phdr_table_inside_elf_header() {
    let mut img = elf64_image();
    put64(&mut img, 32, 8);
    assert!(matches!(err(&img), LoadError::PhdrTableInHeader { .. }));
}

#[test]
fn bad_phentsize() {
    let mut img = multiboot_image();
    put16(&mut img, 42, 16);
    assert!(matches!(
        err(&img),
        LoadError::BadPhentsize {
            got: 16,
            expected: 32,
            ..
        }
    ));
}

#[test]
fn huge_phnum() {
    let mut img = elf64_image();
    put16(&mut img, 56, 0x7FFF);
    assert!(matches!(
        err(&img),
        LoadError::PhdrTableOutOfFile { phnum: 0x7FFF, .. }
    ));
    put16(&mut img, 56, 0xFFFF);
    assert!(matches!(err(&img), LoadError::ExtendedPhnum));
}

#[test]
fn filesz_greater_than_memsz() {
    let b = multiboot_builder(0);
    let mut img = b.build();
    put32(&mut img, b.phdr_off(1) + 20, 0x10); // memsz < filesz 0x80
    assert!(matches!(
        err(&img),
        LoadError::FileszExceedsMemsz {
            index: 1,
            filesz: 0x80,
            memsz: 0x10
        }
    ));
}

#[test]
fn file_offset_past_eof() {
    let b = multiboot_builder(0);
    let mut img = b.build();
    let len = img.len() as u32;
    put32(&mut img, b.phdr_off(1) + 4, len + 0x1000);
    assert!(matches!(
        err(&img),
        LoadError::SegmentOutOfFile { index: 1, .. }
    ));
    // Offset in the file but filesz running past the end.
    let mut img = b.build();
    put32(&mut img, b.phdr_off(1) + 4, len - 4);
    assert!(matches!(
        err(&img),
        LoadError::SegmentOutOfFile { index: 1, .. }
    ));
    // 64-bit offset + filesz wrapping.
    let b = elf64_builder();
    let mut img = b.build();
    put64(&mut img, b.phdr_off(1) + 8, u64::MAX - 4);
    assert!(matches!(
        err(&img),
        LoadError::SegmentOutOfFile { index: 1, .. }
    ));
}

#[test]
fn paddr_plus_memsz_overflow() {
    let b = elf64_builder();
    let mut img = b.build();
    put64(&mut img, b.phdr_off(1) + 24, u64::MAX - 0x10);
    assert!(matches!(
        err(&img),
        LoadError::SegmentAddressOverflow {
            index: 1,
            bits: 64,
            ..
        }
    ));
    // ELF32: past 4 GiB counts as overflow.
    let b = multiboot_builder(0);
    let mut img = b.build();
    put32(&mut img, b.phdr_off(1) + 12, 0xFFFF_F000);
    assert!(matches!(
        err(&img),
        LoadError::SegmentAddressOverflow {
            index: 1,
            bits: 32,
            ..
        }
    ));
}

#[test]
fn no_pt_load() {
    let mut b = multiboot_builder(0);
    for s in &mut b.segs {
        s.p_type = PT_NOTE;
    }
    assert!(matches!(err(&b.build()), LoadError::NoLoadSegment));
    let mut img = elf64_image();
    put16(&mut img, 56, 0);
    assert!(matches!(err(&img), LoadError::NoLoadSegment));
}

#[test]
fn entry_outside_segments() {
    let mut b = multiboot_builder(0);
    b.entry = 0x30_0000;
    assert!(matches!(
        err(&b.build()),
        LoadError::EntryOutsideSegments { entry: 0x30_0000 }
    ));
    // Inside memsz but in the BSS, not file bytes: also refused.
    let mut b = elf64_builder();
    b.entry = E64_DATA + 0x100;
    assert!(matches!(
        err(&b.build()),
        LoadError::EntryOutsideSegments { .. }
    ));
}

#[test]
fn overlapping_segments() {
    let mut b = elf64_builder();
    b.segs[1].paddr = E64_TEXT + 0x100;
    assert!(matches!(
        err(&b.build()),
        LoadError::OverlappingSegments {
            first: 0,
            second: 1,
            ..
        }
    ));
}

#[test]
fn elf32_without_multiboot_header() {
    let mut b = multiboot_builder(0);
    b.segs[0].data[..12].fill(0x90);
    let e = err(&b.build());
    assert!(matches!(e, LoadError::Elf32WithoutMultiboot));
    assert!(e.to_string().contains("only as Multiboot"), "{e}");
}

#[test]
fn multiboot_header_must_be_aligned_and_in_first_8k() {
    // Misaligned: shift the header by 2 bytes.
    let mut b = multiboot_builder(0);
    let mut text = vec![0x90, 0x90];
    text.extend(multiboot_header(0));
    text.extend(vec![0x90; 0x200 - text.len()]);
    b.segs[0].data = text;
    assert!(matches!(err(&b.build()), LoadError::Elf32WithoutMultiboot));
    // Beyond 8 KiB.
    let mut b = multiboot_builder(0);
    let mut text = vec![0x90; 0x2000];
    text.extend(multiboot_header(0));
    b.segs[0].data = text.clone();
    b.segs[0].memsz = text.len() as u64;
    b.segs[1].paddr = 0x11_0000;
    assert!(matches!(err(&b.build()), LoadError::Elf32WithoutMultiboot));
}

#[test]
fn bad_multiboot_checksum() {
    let b = multiboot_builder(0);
    let mut img = b.build();
    let off = b.data_off(0) + 8;
    put32(&mut img, off, 0x1234);
    let e = err(&img);
    assert!(matches!(
        e,
        LoadError::MultibootBadChecksum {
            checksum: 0x1234,
            ..
        }
    ));
    assert!(e.to_string().contains("checksum"));
}

#[test]
fn multiboot_unsupported_flag_names_the_bit() {
    let e = err(&multiboot_builder(1 << 5 | 1).build());
    assert!(matches!(
        e,
        LoadError::MultibootUnsupportedFlag { bit: 5, .. }
    ));
    assert!(e.to_string().contains("bit 5"), "{e}");
    let e = err(&multiboot_builder(1 << 16).build());
    assert!(matches!(e, LoadError::MultibootAoutKludge { .. }));
    assert!(e.to_string().contains("a.out"), "{e}");
}

#[test]
fn segment_beyond_ram() {
    // A .flat whose image ends at 16.4 MiB in an 8 MiB guest.
    let mut b = multiboot_builder(0);
    b.segs[1].memsz = 0x106_0000 - MB_DATA;
    let img = b.build();
    let mem = guest_mem(8 << 20);
    let e = load(&mem, &req(&img)).unwrap_err();
    assert!(matches!(
        e,
        LoadError::BeyondRam {
            end: 0x106_0000,
            ..
        }
    ));
    let msg = e.to_string();
    assert!(msg.contains("ends at 16.4 MiB"), "{msg}");
    assert!(msg.contains("beyond the 8 MiB of guest RAM"), "{msg}");
    assert!(msg.contains("--mem"), "{msg}");
    assert!(msg.contains("17 MiB"), "{msg}");
    // inspect alone has no RAM to compare with.
    assert!(inspect(&img).is_ok());
}

#[test]
fn segment_in_a_ram_hole() {
    use vm_memory::{GuestAddress, GuestMemoryMmap};
    let mem = GuestMemoryMmap::from_ranges(&[
        (GuestAddress(0), 0x10_0100),
        (GuestAddress(0x20_0000), 0x20_0000),
    ])
    .unwrap();
    let e = load(&mem, &req(&multiboot_image())).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::NotInRam {
                addr: 0x10_0100,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn segment_over_reserved_range_names_it() {
    let img = multiboot_image();
    let mem = guest_mem(4 << 20);
    let reserved = [
        Reserved {
            base: 0xFEE0_0000,
            len: 0x1000,
            name: "LAPIC",
        },
        Reserved {
            base: MB_DATA + 0x1000,
            len: 0x1000,
            name: "pci-testdev BAR0",
        },
    ];
    let mut r = req(&img);
    r.reserved = &reserved;
    let e = load(&mem, &r).unwrap_err();
    assert!(matches!(
        e,
        LoadError::OverlapsReserved {
            name: "pci-testdev BAR0",
            ..
        }
    ));
    assert!(e.to_string().contains("pci-testdev BAR0"), "{e}");
}

#[test]
fn segment_over_the_firmware_area() {
    let mem = guest_mem(4 << 20);
    for paddr in [0x9_FB00u64, 0x9_FF00, 0xA_0000, 0xE_0000, 0xF_F000] {
        let mut b = multiboot_builder(0);
        b.segs[0].paddr = paddr;
        b.segs[0].memsz = 0x200;
        b.entry = paddr + 12;
        let img = b.build();
        let e = load(&mem, &req(&img)).unwrap_err();
        assert!(
            matches!(e, LoadError::OverlapsFirmwareArea { .. }),
            "{paddr:#x}: {e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("0x9fc00..0x100000") && msg.contains("below 0x9fc00"),
            "{msg}"
        );
    }
}

#[test]
fn initrd_too_large() {
    let img = multiboot_image();
    let mem = guest_mem(4 << 20);
    let initrd = vec![0x41u8; 3 << 20];
    let mut r = req(&img);
    r.initrd = Some(&initrd);
    let e = load(&mem, &r).unwrap_err();
    assert!(matches!(e, LoadError::BeyondRam { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("initrd") && msg.contains("--mem"), "{msg}");
}

#[test]
fn initrd_over_reserved_range() {
    let img = multiboot_image();
    let mem = guest_mem(4 << 20);
    let initrd = vec![0x41u8; 0x2000];
    let reserved = [Reserved {
        base: 0x14_3000,
        len: 0x1000,
        name: "dev",
    }];
    let mut r = req(&img);
    r.initrd = Some(&initrd);
    r.reserved = &reserved;
    assert!(matches!(
        load(&mem, &r).unwrap_err(),
        LoadError::OverlapsReserved { name: "dev", .. }
    ));
}

#[test]
fn refused_load_writes_nothing() {
    let img = multiboot_image();
    let mem = guest_mem(4 << 20);
    fill(&mem, 0, 4 << 20, 0xC3);
    let initrd = vec![0u8; 8 << 20];
    let mut r = req(&img);
    r.initrd = Some(&initrd);
    assert!(load(&mem, &r).is_err());
    assert!(rd_bytes(&mem, 0, 4 << 20).iter().all(|&b| b == 0xC3));
}

#[test]
fn elf64_entry_above_4gib() {
    use vm_memory::{GuestAddress, GuestMemoryMmap};
    let mut b = elf64_builder();
    b.segs[0].paddr = 0x1_0000_0000;
    b.entry = 0x1_0000_0010;
    let img = b.build();
    assert!(inspect(&img).is_ok());
    // RAM above 4 GiB exists, so the only problem is the identity map.
    let mem = GuestMemoryMmap::from_ranges(&[
        (GuestAddress(0), 4 << 20),
        (GuestAddress(0x1_0000_0000), 1 << 20),
    ])
    .unwrap();
    let e = load(&mem, &req(&img)).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::EntryNotIdentityMapped {
                entry: 0x1_0000_0010
            }
        ),
        "{e}"
    );
}

#[test]
fn cmdline_too_long_or_with_nul() {
    let img = multiboot_image();
    let mem = guest_mem(4 << 20);
    let long = "a".repeat(CMDLINE_CAPACITY as usize);
    let mut r = req(&img);
    r.append = &long;
    assert!(matches!(
        load(&mem, &r).unwrap_err(),
        LoadError::CmdlineTooLong { .. }
    ));
    r.append = "a\0b";
    assert!(matches!(load(&mem, &r).unwrap_err(), LoadError::CmdlineNul));
    // The largest that fits is accepted.
    let fits = "a".repeat(CMDLINE_CAPACITY as usize - 1 - "t.flat ".len());
    r.append = &fits;
    load(&mem, &r).unwrap();
}

#[test]
fn too_many_reserved_ranges() {
    let img = multiboot_image();
    // Inside RAM, so each gap holds RAM and every range stays its own
    // entry (ranges with nothing between them would be one).
    let mem = guest_mem(32 << 20);
    let reserved: Vec<Reserved> = (0..400u64)
        .map(|i| Reserved {
            base: 0x80_0000 + i * 0x2000,
            len: 0x1000,
            name: "r",
        })
        .collect();
    let mut r = req(&img);
    r.reserved = &reserved;
    assert!(matches!(
        load(&mem, &r).unwrap_err(),
        LoadError::TooManyMmapEntries { .. }
    ));
}

#[test]
fn ram_must_cover_first_megabyte() {
    use vm_memory::{GuestAddress, GuestMemoryMmap};
    let mem = GuestMemoryMmap::from_ranges(&[(GuestAddress(0x10_0000), 0x40_0000)]).unwrap();
    assert!(matches!(
        load(&mem, &req(&multiboot_image())).unwrap_err(),
        LoadError::NoLowRam { .. }
    ));
}

fn elf64_with_note(note: Vec<u8>) -> Vec<u8> {
    let mut b = elf64_builder();
    b.segs.push(Seg {
        p_type: PT_NOTE,
        paddr: 0,
        data: note,
        memsz: 0,
    });
    b.build()
}

#[test]
fn elf64_notes_are_checked_before_linux_loader_sees_them() {
    // Well-formed notes (including a Xen PVH entry note) load fine.
    let mut ok = note(4, 4, 18, b"Xen\0", &0x20_0010u32.to_le_bytes());
    ok.extend(note(4, 0, 1, b"GNU\0", &[]));
    let img = elf64_with_note(ok);
    load(&guest_mem(4 << 20), &req(&img)).unwrap();
    // A PVH note without its address, a note running past its segment, and
    // stray bytes are refused by inspect, not half-way through load.
    for bad in [
        note(4, 0, 18, b"Xen\0", &[]),
        note(4, 64, 1, b"GNU\0", &[0; 8]),
        vec![1, 2, 3, 4, 5],
    ] {
        let e = err(&elf64_with_note(bad));
        assert!(matches!(e, LoadError::BadNote { index: 2, .. }), "{e}");
    }
}

#[test]
fn zero_sized_segments_anywhere_are_harmless() {
    // A PT_LOAD with memsz 0 far outside RAM loads nothing and is ignored.
    let mut b = multiboot_builder(0);
    b.segs.push(Seg::load(0xF000_0000, vec![], 0));
    load(&guest_mem(4 << 20), &req(&b.build())).unwrap();
}
