//! The arm64 loader (`trapline_loader::arch::aarch64`), on any host: the
//! project's real arm64 payloads, raw images as kvm-unit-tests builds them,
//! arm64 Linux `Image` headers, where the initrd and the device tree go, and
//! every image it must refuse (x86 images, truncated or corrupt files,
//! segments outside RAM), each with an actionable error and no panic.

mod common;

use common::*;
use trapline_abi::{VIRT_PAYLOAD_BASE, VIRT_RAM_BASE, VIRT_RAW_IMAGE_BASE};
use trapline_loader::arch::aarch64::{
    inspect, load, Arm64Kind, LoadPlan, LoadRequest, DTB_ALIGN, DTB_MAX_LEN,
};
use trapline_loader::LoadError;
use vm_memory::{GuestAddress, GuestMemoryMmap};

const MIB: u64 = 1 << 20;
const EM_AARCH64: u16 = 183;

/// `mib` MiB of RAM where the `virt` machine has it.
fn virt_mem(mib: u64) -> GuestMemoryMmap {
    GuestMemoryMmap::from_ranges(&[(GuestAddress(VIRT_RAM_BASE), (mib * MIB) as usize)]).unwrap()
}

fn req(image: &[u8]) -> LoadRequest<'_> {
    LoadRequest {
        image,
        initrd: None,
        fresh_memory: false,
    }
}

fn load_ok(mem: &GuestMemoryMmap, image: &[u8]) -> LoadPlan {
    load(mem, &req(image)).unwrap_or_else(|e| panic!("load failed: {e}"))
}

/// `inspect` refuses the image, and `load` refuses it the same way.
fn refused(image: &[u8]) -> LoadError {
    let e = inspect(image).expect_err("inspect accepted a bad image");
    let e2 = load_refused(image);
    assert_eq!(e.to_string(), e2.to_string());
    e
}

/// `load` into 8 MiB of RAM refuses the image and leaves guest memory
/// untouched.
fn load_refused(image: &[u8]) -> LoadError {
    let mem = virt_mem(8);
    fill(&mem, VIRT_RAM_BASE, (8 * MIB) as usize, 0xA5);
    let e = load(&mem, &req(image)).expect_err("load accepted a bad image");
    let _ = format!("{e} {e:?}");
    assert!(rd_bytes(&mem, VIRT_RAM_BASE, (8 * MIB) as usize)
        .iter()
        .all(|&b| b == 0xA5));
    e
}

/// The PT_LOADs of an ELF64 as (p_offset, p_paddr, p_filesz, p_memsz), read
/// here independently of the loader.
fn pt_loads(elf: &[u8]) -> Vec<(u64, u64, u64, u64)> {
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    let phoff = u64_at(32) as usize;
    (0..usize::from(u16_at(56)))
        .map(|i| phoff + i * 56)
        .filter(|&ph| u32_at(ph) == 1)
        .map(|ph| {
            (
                u64_at(ph + 8),
                u64_at(ph + 24),
                u64_at(ph + 32),
                u64_at(ph + 40),
            )
        })
        .collect()
}

fn e_entry(elf: &[u8]) -> u64 {
    u64::from_le_bytes(elf[24..32].try_into().unwrap())
}

fn aarch64_elf(segs: Vec<Seg>, entry: u64) -> Vec<u8> {
    ElfBuilder {
        class64: true,
        machine: EM_AARCH64,
        e_type: 2,
        entry,
        segs,
    }
    .build()
}

/// An arm64 Linux `Image` header followed by `len - 64` pattern bytes.
fn linux_image(text_offset: u64, image_size: u64, len: usize) -> Vec<u8> {
    let mut img = pattern(len, 0x5A);
    img[..8].copy_from_slice(&[0; 8]);
    img[0x08..0x10].copy_from_slice(&text_offset.to_le_bytes());
    img[0x10..0x18].copy_from_slice(&image_size.to_le_bytes());
    img[0x18..0x38].copy_from_slice(&[0; 0x20]);
    img[0x38..0x3C].copy_from_slice(b"ARM\x64");
    img
}

// ---- The project's own arm64 payloads. ----

#[test]
fn every_arm64_payload_loads_at_its_physical_addresses() {
    for (name, elf) in trapline_guest::aarch64::PAYLOADS {
        let mem = virt_mem(128);
        fill(&mem, VIRT_RAM_BASE, (16 * MIB) as usize, 0xEE);
        let plan = load_ok(&mem, elf);
        assert_eq!(plan.kind, Arm64Kind::Elf, "{name}");
        assert_eq!(plan.entry, e_entry(elf), "{name}");
        assert_eq!(
            plan.entry, VIRT_PAYLOAD_BASE,
            "{name}: _start is the first byte"
        );
        let segs = pt_loads(elf);
        assert!(!segs.is_empty());
        for &(offset, paddr, filesz, memsz) in &segs {
            let (o, f) = (offset as usize, filesz as usize);
            assert_eq!(
                rd_bytes(&mem, paddr, f),
                &elf[o..o + f],
                "{name}: segment at {paddr:#x}"
            );
            // BSS zeroed (memory was not fresh).
            assert!(
                rd_bytes(&mem, paddr + filesz, (memsz - filesz) as usize)
                    .iter()
                    .all(|&b| b == 0),
                "{name}: BSS at {:#x}",
                paddr + filesz
            );
            assert!(plan.image.start <= paddr && paddr + memsz <= plan.image.end);
        }
        assert_eq!(plan.image.start, VIRT_PAYLOAD_BASE, "{name}");
        // The device tree where QEMU puts it with 128 MiB: RAM + 64 MiB.
        assert_eq!(plan.dtb, VIRT_RAM_BASE + 64 * MIB, "{name}");
        assert!(plan.dtb >= plan.image.end);
        assert_eq!(plan.dtb_max_len, DTB_MAX_LEN);
        assert_eq!(plan.initrd, None);
        // Nothing below the image was written.
        assert!(rd_bytes(
            &mem,
            VIRT_RAM_BASE,
            (VIRT_PAYLOAD_BASE - VIRT_RAM_BASE) as usize
        )
        .iter()
        .all(|&b| b == 0xEE));
    }
}

#[test]
fn a_payload_with_too_little_ram_asks_for_more_memory() {
    // The payloads link at RAM + 2 MiB: 2 MiB of RAM cannot hold them.
    let mem = virt_mem(2);
    let e = load(&mem, &req(trapline_guest::aarch64::HELLO)).unwrap_err();
    assert!(matches!(e, LoadError::BeyondRam { .. }), "{e}");
    assert!(e.to_string().contains("--mem"), "{e}");
}

#[test]
fn fresh_memory_leaves_bss_unwritten() {
    let elf = aarch64_elf(
        vec![Seg::load(VIRT_PAYLOAD_BASE, pattern(0x100, 1), 0x2000)],
        VIRT_PAYLOAD_BASE,
    );
    let mem = virt_mem(16);
    fill(&mem, VIRT_PAYLOAD_BASE + 0x100, 0x1F00, 0x77);
    let mut r = req(&elf);
    r.fresh_memory = true;
    load(&mem, &r).unwrap();
    assert_eq!(rd_bytes(&mem, VIRT_PAYLOAD_BASE + 0x100, 4), [0x77; 4]);
    r.fresh_memory = false;
    load(&mem, &r).unwrap();
    assert_eq!(rd_bytes(&mem, VIRT_PAYLOAD_BASE + 0x100, 4), [0; 4]);
}

// ---- Raw images (kvm-unit-tests .flat). ----

#[test]
fn a_raw_image_is_copied_to_ram_plus_512k_and_entered_at_its_first_byte() {
    assert_eq!(
        VIRT_RAW_IMAGE_BASE,
        VIRT_RAM_BASE + 0x8_0000,
        "QEMU's KERNEL64_LOAD_ADDR"
    );
    assert_eq!(VIRT_RAW_IMAGE_BASE % 0x1_0000, 0);
    // Starts like kvm-unit-tests' arm64 start (code, no magic).
    let flat = pattern(0x3_1234, 0x42);
    let mem = virt_mem(128);
    let plan = load_ok(&mem, &flat);
    assert_eq!(plan.kind, Arm64Kind::Raw);
    assert_eq!(plan.entry, VIRT_RAW_IMAGE_BASE);
    assert_eq!(
        plan.image,
        VIRT_RAW_IMAGE_BASE..VIRT_RAW_IMAGE_BASE + 0x3_1234
    );
    assert_eq!(rd_bytes(&mem, VIRT_RAW_IMAGE_BASE, flat.len()), flat);
    assert_eq!(plan.dtb, VIRT_RAM_BASE + 64 * MIB);
    assert_eq!(plan.dtb % DTB_ALIGN, 0);
}

#[test]
fn the_initrd_goes_where_qemu_puts_it_and_the_dtb_after_it() {
    let flat = pattern(0x1_0000, 3);
    let env = b"TESTNAME=selftest-setup\nERRATA_xyz=y\n".to_vec();
    for (mib, at) in [(128, 64 * MIB), (1024, 128 * MIB), (16, 8 * MIB)] {
        let mem = virt_mem(mib);
        let plan = load(
            &mem,
            &LoadRequest {
                image: &flat,
                initrd: Some(&env),
                fresh_memory: true,
            },
        )
        .unwrap();
        let start = VIRT_RAM_BASE + at;
        assert_eq!(
            plan.initrd,
            Some(start..start + env.len() as u64),
            "{mib} MiB"
        );
        assert_eq!(rd_bytes(&mem, start, env.len()), env);
        assert_eq!(
            plan.dtb,
            start + 2 * MIB,
            "{mib} MiB: 2 MiB-aligned after it"
        );
    }
}

#[test]
fn the_device_tree_is_written_where_the_plan_says_and_not_past_its_room() {
    let mem = virt_mem(128);
    let plan = load_ok(&mem, &pattern(0x1000, 9));
    let dtb = pattern(0x2345, 0xD0);
    plan.write_dtb(&mem, &dtb).unwrap();
    assert_eq!(rd_bytes(&mem, plan.dtb, dtb.len()), dtb);
    let big = vec![0u8; (DTB_MAX_LEN + 1) as usize];
    let e = plan.write_dtb(&mem, &big).unwrap_err();
    assert!(matches!(e, LoadError::DeviceTreeTooLarge { .. }), "{e}");
    // Where RAM ends before 2 MiB past the DTB, the room shrinks with it.
    let mem = virt_mem(3);
    let plan = load_ok(&mem, &pattern(0x1000, 9));
    assert_eq!((plan.dtb, plan.dtb_max_len), (VIRT_RAM_BASE + 2 * MIB, MIB));
    assert!(plan.write_dtb(&mem, &vec![0; MIB as usize + 1]).is_err());
    plan.write_dtb(&mem, &vec![1; MIB as usize]).unwrap();
}

#[test]
fn a_raw_image_too_big_for_ram_asks_for_more_memory() {
    let e = load(&virt_mem(2), &req(&pattern((2 * MIB) as usize, 1))).unwrap_err();
    assert!(matches!(e, LoadError::BeyondRam { .. }), "{e}");
    assert!(e.to_string().contains("--mem"), "{e}");
    // Fits, but leaves no room for the device tree above it.
    let e = load(&virt_mem(4), &req(&pattern((3 * MIB) as usize, 1))).unwrap_err();
    assert!(matches!(e, LoadError::NoRoomForDeviceTree { .. }), "{e}");
}

// ---- arm64 Linux Image. ----

#[test]
fn a_linux_image_goes_at_the_start_of_ram_plus_text_offset() {
    let img = linux_image(0, 4 * MIB, 0x3000);
    let mem = virt_mem(128);
    let plan = load_ok(&mem, &img);
    assert_eq!(plan.kind, Arm64Kind::LinuxImage);
    assert_eq!(plan.entry, VIRT_RAM_BASE);
    assert_eq!(
        plan.image,
        VIRT_RAM_BASE..VIRT_RAM_BASE + 4 * MIB,
        "image_size"
    );
    assert_eq!(rd_bytes(&mem, VIRT_RAM_BASE, img.len()), img);
    assert!(plan.dtb >= plan.image.end);
    // A kernel older than 3.17 (image_size 0) goes at text_offset 0x80000.
    let img = linux_image(0, 0, 0x3000);
    let plan = load_ok(&mem, &img);
    assert_eq!(plan.entry, VIRT_RAM_BASE + 0x8_0000);
    assert_eq!(plan.image.end, plan.entry + 0x3000);
    let info = inspect(&linux_image(0x8_0000, 0x10_0000, 0x100)).unwrap();
    assert_eq!(info.entry, VIRT_RAM_BASE + 0x8_0000);
    assert_eq!(info.linux.unwrap().footprint, 0x10_0000);
}

#[test]
fn corrupt_linux_image_headers_are_refused() {
    let mut img = linux_image(0, MIB, 0x100);
    img[0x18] = 1; // big-endian
    assert!(matches!(refused(&img), LoadError::BadArm64Image { .. }));
    let img = linux_image(u64::MAX - 0xFFF, MIB, 0x100);
    assert!(matches!(refused(&img), LoadError::BadArm64Image { .. }));
    // Sized past any RAM: the user is told how much memory it needs.
    let img = linux_image(0, 64 * MIB, 0x100);
    let e = load_refused(&img);
    assert!(matches!(e, LoadError::BeyondRam { .. }), "{e}");
}

// ---- Images for the other architecture, and other refusals. ----

#[test]
fn x86_images_are_refused_as_images_for_x86_64() {
    let mut multiboot = multiboot_image();
    let elf64 = elf64_image();
    let mut bz = vec![0u8; 0x1000];
    bz[0x1FE..0x200].copy_from_slice(&[0x55, 0xAA]);
    bz[0x202..0x206].copy_from_slice(b"HdrS");
    for (img, what) in [
        (&multiboot, "ELF32 i386"),
        (&elf64, "ELF64 x86-64"),
        (&bz, "bzImage"),
    ] {
        let e = refused(img);
        assert!(matches!(e, LoadError::WrongArchitecture { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains(what) && msg.contains("an image for x86_64"),
            "{msg}"
        );
    }
    // Even a truncated x86 ELF is named by its machine.
    multiboot.truncate(20);
    assert!(matches!(
        refused(&multiboot),
        LoadError::WrongArchitecture { .. }
    ));
}

#[test]
fn other_machines_compressed_and_empty_files_are_refused() {
    let mut b = elf64_builder();
    b.machine = 243; // RISC-V
    let e = refused(&b.build());
    assert!(
        matches!(e, LoadError::WrongMachine { machine: 243, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("EM_AARCH64"), "{e}");
    let mut b = multiboot_builder(0);
    b.machine = 40; // AArch32
    let e = refused(&b.build());
    assert!(matches!(e, LoadError::WrongMachine { bits: 32, .. }), "{e}");
    let e = refused(&[0x1F, 0x8B, 8, 0, 0, 0]);
    assert!(matches!(e, LoadError::Compressed { .. }), "{e}");
    assert!(e.to_string().contains("zcat"), "{e}");
    assert!(matches!(refused(&[]), LoadError::Empty));
    let mut b = elf64_builder();
    b.machine = EM_AARCH64;
    b.e_type = 3; // ET_DYN: kvm-unit-tests' .elf rather than its .flat
    assert!(matches!(refused(&b.build()), LoadError::NotExecutable(3)));
}

#[test]
fn truncated_aarch64_elf_headers_are_errors() {
    let hello = trapline_guest::aarch64::HELLO;
    assert!(matches!(
        refused(&hello[..40]),
        LoadError::Truncated { need: 64, .. }
    ));
    assert!(matches!(refused(&hello[..6]), LoadError::Truncated { .. }));
    let phoff = u64::from_le_bytes(hello[32..40].try_into().unwrap()) as usize;
    assert!(matches!(
        refused(&hello[..phoff + 10]),
        LoadError::PhdrTableOutOfFile { .. }
    ));
    // Every shorter prefix that cuts into a segment's bytes is refused.
    let (offset, _, filesz, _) = pt_loads(hello)[0];
    let cut = (offset + filesz / 2) as usize;
    assert!(matches!(
        refused(&hello[..cut]),
        LoadError::SegmentOutOfFile { .. }
    ));
    for len in 0..hello.len().min(4096) {
        let _ = inspect(&hello[..len]);
    }
}

#[test]
fn segments_outside_ram_are_refused() {
    // Linked at 0 (x86 habits): below RAM, among the devices.
    let elf = aarch64_elf(
        vec![Seg::load(0x8_0000, pattern(0x100, 1), 0x100)],
        0x8_0000,
    );
    let e = load_refused(&elf);
    assert!(matches!(e, LoadError::OutsideRam { .. }), "{e}");
    assert!(e.to_string().contains("0x40000000"), "{e}");
    // Straddling the start of RAM.
    let elf = aarch64_elf(
        vec![Seg::load(VIRT_RAM_BASE - 0x80, pattern(0x100, 1), 0x100)],
        VIRT_RAM_BASE,
    );
    assert!(matches!(load_refused(&elf), LoadError::OutsideRam { .. }));
    // BSS running past the end of RAM: more memory would help.
    let elf = aarch64_elf(
        vec![Seg::load(VIRT_PAYLOAD_BASE, pattern(0x100, 1), 64 * MIB)],
        VIRT_PAYLOAD_BASE,
    );
    let e = load_refused(&elf);
    assert!(matches!(e, LoadError::BeyondRam { .. }), "{e}");
    // An entry point outside the loaded bytes.
    let elf = aarch64_elf(
        vec![Seg::load(VIRT_PAYLOAD_BASE, pattern(0x100, 1), 0x1000)],
        VIRT_PAYLOAD_BASE + 0x200,
    );
    assert!(matches!(
        refused(&elf),
        LoadError::EntryOutsideSegments { .. }
    ));
}

#[test]
fn random_bytes_never_panic() {
    // xorshift64*: deterministic, so a failure reproduces.
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let hello = trapline_guest::aarch64::HELLO;
    let mem = virt_mem(4);
    for _ in 0..2000 {
        let mut img = hello.to_vec();
        for _ in 0..(next() % 8 + 1) {
            let at = (next() as usize) % img.len();
            img[at] = next() as u8;
        }
        img.truncate((next() as usize) % (img.len() + 1));
        if let Err(e) = load(&mem, &req(&img)) {
            let _ = e.to_string();
        }
    }
}
