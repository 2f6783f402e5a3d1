//! Loading x86 guests: the x86 boot protocols and the structures they
//! hand the guest (Multiboot info, the boot GDT and page tables, PVH's
//! `hvm_start_info`, a bzImage's `boot_params`). Built only on x86_64
//! hosts (it uses linux-loader's x86-only items); its public names are
//! re-exported at the crate root, where they have always been.
//!
//! Four kinds of image boot:
//!
//! * **Multiboot32** — an ELF32 EM_386 executable with a Multiboot v1 header.
//!   This is what a kvm-unit-tests `.flat` is (64-bit code wrapped by
//!   `objcopy -O elf32-i386`, ~12 MiB of BSS), and it must boot here exactly
//!   as under QEMU's `-kernel`: segments at `p_paddr`, BSS zeroed, EAX =
//!   0x2BADB002, EBX = a Multiboot info block (MBI), flat 32-bit protected
//!   mode with paging off.
//! * **Elf64** — an ELF64 EM_X86_64 executable, started directly in long mode
//!   on an identity map of the first 4 GiB that the loader writes, with RBX =
//!   the same MBI (so one guest runtime can read its command line, memory and
//!   initrd the same way in both cases).
//! * **Pvh** — an ELF64 with a Xen `XEN_ELFNOTE_PHYS32_ENTRY` note (Linux's
//!   `vmlinux`): entered at the note's address in flat 32-bit protected mode
//!   with EBX = an `hvm_start_info` (see [`linux::pvh`]).
//! * **BzImage** — a Linux bzImage (boot protocol 2.06+): its
//!   protected-mode kernel is copied to its load address and entered at its
//!   32-bit entry in flat protected mode with ESI = `boot_params` (see
//!   [`linux::bzimage`] and [`linux::zeropage`]).
//!
//! [`inspect`] parses and validates an image without touching guest memory
//! (it is the fuzzing surface); [`load`] validates *every* placement first
//! (RAM, device ranges, the firmware area, command line, initrd), chooses
//! where its own boot structures go ([`BootArea`]: their default place, or
//! free RAM when the image is linked there) and only then writes, so a
//! refused load leaves guest memory as it was. The result,
//! [`BootSetup`], describes the boot vCPU's start state in plain numbers; the
//! KVM crate turns it into registers (see [`gdt`] for the segment fields).
//!
//! Guest-physical placement of the loader's own structures is documented in
//! [`layout`] and [`place`].

mod bootinfo;
pub mod gdt;
pub mod layout;
pub mod linux;
mod multiboot;
pub mod place;

use std::io::Cursor;
use std::ops::Range;

use linux_loader::loader::{elf::Elf as LinuxElf, KernelLoader};
use vm_memory::GuestMemoryMmap;

pub use bootinfo::MemoryMap;
pub use bootinfo::{mbi_flags, MmapEntry, BOOTLOADER_NAME, MMAP_RAM, MMAP_RESERVED};
use bootinfo::{memory_map, AreaContents, MMAP_MAX_ENTRIES};
use layout::*;
pub use multiboot::MULTIBOOT_HEADER_MAGIC;
pub use place::BootArea;

use crate::detect::{self, ImageArch};
use crate::elf;
use crate::error::{LoadError, Mib};
use crate::guest::{write, zero_bss};
use crate::image::{ImageInfo, ImageKind, LoadSegment};
use crate::ram::Span;
use crate::ram::{align_up, reserved_range, Ram, Reserved};

/// EAX at Multiboot entry: tells the kernel a Multiboot loader started it.
pub const MULTIBOOT_BOOTLOADER_MAGIC: u32 = 0x2BAD_B002;

/// Control-register and flag values for the two entry modes, so the KVM code
/// does not re-derive them. Only what differs from KVM's reset state matters.
pub mod cpu {
    /// CR0.PE: protected mode.
    pub const CR0_PE: u64 = 1 << 0;
    /// CR0.ET: hard-wired to 1 on every CPU since the 486; QEMU reports it.
    pub const CR0_ET: u64 = 1 << 4;
    /// CR0.PG: paging.
    pub const CR0_PG: u64 = 1 << 31;
    /// CR4.PAE: required for long mode.
    pub const CR4_PAE: u64 = 1 << 5;
    /// EFER.LME: long mode enable.
    pub const EFER_LME: u64 = 1 << 8;
    /// EFER.LMA: long mode active (KVM wants it set explicitly in sregs).
    pub const EFER_LMA: u64 = 1 << 10;

    /// CR0 at Multiboot entry: 0x11, as measured under QEMU (paging off).
    pub const PROTECTED32_CR0: u64 = CR0_PE | CR0_ET;
    /// CR4 at Multiboot entry.
    pub const PROTECTED32_CR4: u64 = 0;
    /// EFER at Multiboot entry.
    pub const PROTECTED32_EFER: u64 = 0;

    /// CR0 at ELF64 entry.
    pub const LONG64_CR0: u64 = CR0_PE | CR0_ET | CR0_PG;
    /// CR4 at ELF64 entry.
    pub const LONG64_CR4: u64 = CR4_PAE;
    /// EFER at ELF64 entry.
    pub const LONG64_EFER: u64 = EFER_LME | EFER_LMA;

    /// RFLAGS at entry for both modes: only the always-one bit 1; IF = 0
    /// because nothing has set up an IDT yet.
    pub const BOOT_RFLAGS: u64 = 0x2;
}

/// What to load, and what to tell the guest.
#[derive(Debug, Clone, Copy)]
pub struct LoadRequest<'a> {
    /// The whole image file.
    pub image: &'a [u8],
    /// argv\[0\] as QEMU gives it: the `-kernel` path as the user typed it.
    /// kvm-unit-tests drops the first word of the command line, so this must
    /// be exactly one word: whitespace inside it is replaced by `_`, and an
    /// empty name becomes `trapline` (otherwise the first real argument
    /// would be taken for argv\[0\] and lost).
    pub image_name: &'a str,
    /// Arguments after argv\[0\] (QEMU's `-append`), may be empty.
    pub append: &'a str,
    /// Initial ramdisk, passed as Multiboot module 0 (kvm-unit-tests reads
    /// its environment from it).
    pub initrd: Option<&'a [u8]>,
    /// Device ranges the machine owns.
    pub reserved: &'a [Reserved],
    /// Guest-physical address of the ACPI RSDP, told to Linux (PVH:
    /// `hvm_start_info.rsdp_paddr`; bzImage protocol 2.14+:
    /// `boot_params.acpi_rsdp_addr`); `None`: it scans for it.
    pub rsdp: Option<u64>,
    /// The caller promises guest RAM is freshly mapped anonymous memory
    /// that nothing has written yet, so it already reads as zero: BSS is
    /// then not written. Writing it would fault in every page of it (a
    /// kvm-unit-tests image has ~12 MiB of BSS), costing boot time and host
    /// memory for nothing.
    pub fresh_memory: bool,
}

/// How the boot vCPU starts. Plain numbers only: no KVM types here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryMode {
    /// Multiboot v1, PVH and bzImage: flat 32-bit protected mode, paging
    /// off, IF = 0. CS = [`gdt::SELECTOR_CODE32`], DS/ES/FS/GS/SS =
    /// [`gdt::SELECTOR_DATA`]; CR0/CR4/EFER from [`cpu`]`::PROTECTED32_*`.
    Protected32 {
        /// Entry point (`e_entry`, the PVH note's entry, or the bzImage's
        /// `code32_start`).
        eip: u32,
        /// [`MULTIBOOT_BOOTLOADER_MAGIC`] (Multiboot), else 0.
        eax: u32,
        /// Guest-physical address of the MBI (of the `hvm_start_info` for
        /// PVH; 0 for a bzImage).
        ebx: u32,
        /// Guest-physical address of `boot_params` for a bzImage, else 0.
        esi: u32,
    },
    /// ELF64: long mode, paging on with the loader's identity map.
    /// CS = [`gdt::SELECTOR_CODE64`], DS/ES/FS/GS/SS = [`gdt::SELECTOR_DATA`];
    /// CR0/CR4/EFER from [`cpu`]`::LONG64_*`.
    Long64 {
        /// Entry point (`e_entry`, identity-mapped).
        rip: u64,
        /// Top of the loader's boot stack.
        rsp: u64,
        /// Guest-physical address of the MBI.
        rbx: u64,
        /// The PML4 the loader wrote.
        cr3: u64,
    },
}

/// GDTR contents for the boot vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GdtInfo {
    /// Guest-physical (= linear) address of the table.
    pub base: u64,
    /// Size in bytes minus one.
    pub limit: u16,
}

/// The result of [`load`]: everything the VMM needs to start the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootSetup {
    /// What was loaded.
    pub kind: ImageKind,
    /// Initial register state of the boot vCPU.
    pub entry: EntryMode,
    /// GDTR for the boot vCPU; descriptors are in [`gdt::GDT`].
    pub gdt: GdtInfo,
    /// Selector for CS ([`gdt::SELECTOR_CODE32`] or [`gdt::SELECTOR_CODE64`]).
    pub code_selector: u16,
    /// Selector for DS, ES, FS, GS and SS.
    pub data_selector: u16,
    /// Guest-physical address of the Multiboot info block (of the
    /// `hvm_start_info` for [`ImageKind::Pvh`], of `boot_params` for
    /// [`ImageKind::BzImage`]).
    pub mbi_address: u64,
    /// Guest-physical bytes the image occupies (lowest segment start to
    /// highest segment end, BSS included).
    pub image: Range<u64>,
    /// Where the initrd was put, if one was given (page-aligned start).
    pub initrd: Option<Range<u64>>,
    /// The command line as written for the guest (without the NUL).
    pub cmdline: String,
    /// `mem_upper` as written in the MBI (KiB of RAM from 1 MiB).
    pub mem_upper_kib: u32,
    /// The memory map as written in the MBI.
    pub memory_map: Vec<MmapEntry>,
    /// Where the boot structures were put (GDT, page tables, MBI, memory
    /// map, command line, boot stack): their default place unless the image,
    /// the initrd or a device range claims it.
    pub boot_area: BootArea,
}

impl BootSetup {
    /// The decoded descriptor for CS, to fill the vCPU's code segment.
    pub fn code_segment(&self) -> gdt::SegmentFields {
        gdt::decode_gdt_entry(
            self.code_selector,
            gdt::GDT[usize::from(self.code_selector >> 3)],
        )
    }

    /// The decoded descriptor for DS/ES/FS/GS/SS.
    pub fn data_segment(&self) -> gdt::SegmentFields {
        gdt::decode_gdt_entry(
            self.data_selector,
            gdt::GDT[usize::from(self.data_selector >> 3)],
        )
    }
}

/// Parses and validates an image without touching guest memory.
///
/// Accepts an ELF32 EM_386 ET_EXEC with a valid Multiboot v1 header
/// ([`ImageKind::Multiboot32`]), an ELF64 EM_X86_64 ET_EXEC
/// ([`ImageKind::Elf64`], or [`ImageKind::Pvh`] with a PVH note) or a Linux
/// bzImage ([`ImageKind::BzImage`], described as one segment: see
/// [`linux::bzimage::inspect`]). Every header size, offset, count and sum
/// is bounds-checked; segments are reported by physical address
/// (`p_paddr`). An image for another architecture (an AArch64 ELF, an arm64
/// Linux `Image`) is refused as such ([`LoadError::WrongArchitecture`]);
/// anything else that is neither ELF nor a bzImage is [`LoadError::NotElf`].
/// Never panics, whatever the bytes.
pub fn inspect(image: &[u8]) -> Result<ImageInfo, LoadError> {
    detect::expect_arch(image, ImageArch::X86_64)?;
    if let Some(e) = not_a_kernel(image) {
        return Err(e);
    }
    if linux::bzimage::is_bzimage(image) {
        return linux::bzimage::inspect(image);
    }
    let elf = elf::parse(image, &X86_ELF)?;
    // Asked last: a truncated file then reports the truncation rather than a
    // missing header, and a real non-Multiboot ELF32 (valid program headers)
    // still gets the "Multiboot only" answer.
    let multiboot = if elf.bits == 32 {
        Some(multiboot::find_multiboot(image)?)
    } else {
        None
    };
    Ok(ImageInfo {
        kind: if elf.bits == 32 {
            ImageKind::Multiboot32
        } else if elf.pvh {
            ImageKind::Pvh
        } else {
            ImageKind::Elf64
        },
        entry: elf.entry,
        segments: elf.segments,
        multiboot,
        bzimage: None,
    })
}

/// What to do with a compressed file given as the kernel.
const DECOMPRESS: &str = "decompress it first (a compressed vmlinux: `xz -dk vmlinux.xz`, \
     `gunzip -k vmlinux.gz`), or, if it is an initramfs, pass it with --initrd and give --kernel \
     a vmlinux or bzImage";

/// Files that are often passed as a kernel by mistake, by their magic
/// numbers: compressed data and cpio archives (an initramfs).
fn not_a_kernel(image: &[u8]) -> Option<LoadError> {
    const MAGICS: [(&[u8], &str); 6] = [
        (&[0x1F, 0x8B], "gzip-compressed data"),
        (&[0xFD, b'7', b'z', b'X', b'Z', 0x00], "xz-compressed data"),
        (&[0x28, 0xB5, 0x2F, 0xFD], "zstd-compressed data"),
        (b"BZh", "bzip2-compressed data"),
        (&[0x04, 0x22, 0x4D, 0x18], "lz4-compressed data"),
        (&[0x02, 0x21, 0x4C, 0x18], "lz4-compressed data"),
    ];
    if let Some((_, what)) = MAGICS.iter().find(|(m, _)| image.starts_with(m)) {
        return Some(LoadError::NotAKernel {
            what,
            hint: DECOMPRESS,
        });
    }
    // newc, newc with CRC, and portable ASCII cpio headers.
    if [b"070701", b"070702", b"070707"]
        .iter()
        .any(|m| image.starts_with(*m))
    {
        return Some(LoadError::NotAKernel {
            what: "a cpio archive (an initramfs)",
            hint: "pass it with --initrd, and give --kernel a vmlinux or bzImage",
        });
    }
    None
}

/// The ELF files the x86 loader boots: ELF32 i386 (Multiboot) and ELF64
/// x86-64, the latter through its PVH note when it has one.
const X86_ELF: elf::ElfTarget = elf::ElfTarget {
    machine32: Some(elf::EM_386),
    machine64: elf::EM_X86_64,
    accepts: "ELF32 EM_386 (3, Multiboot) and ELF64 EM_X86_64 (62) images",
    pvh_note: true,
};

/// Loads an image into guest memory and writes the boot information.
///
/// Steps, all checks before any write:
/// 1. [`inspect`] the image.
/// 2. Check RAM covers 0–1 MiB; check every segment lies in RAM, outside the
///    PC firmware area (EBDA, VGA hole, ACPI tables: see [`layout`]), and
///    outside every [`Reserved`] range.
/// 3. Place the initrd at the first page boundary at or above both 1 MiB and
///    the image's highest byte (as QEMU does) and check it the same way, and
///    below 4 GiB (Multiboot module fields are 32-bit) and, for a bzImage,
///    at or below its `initrd_addr_max`.
/// 4. Place the boot area ([`place`]) where no segment, initrd or device
///    range is; only an image that leaves no free RAM for it is refused.
/// 5. Build the command line and memory map and check they fit.
/// 6. Copy segments (ELF64 via linux-loader, Multiboot and bzImage by our
///    own loop), zero every `memsz - filesz`
///    tail explicitly (memory might not be fresh), copy the initrd, write the
///    boot area (GDT, page tables, MBI, module list, mmap, strings, stack
///    space — zero-filled). Page 0 is never written.
pub fn load(mem: &GuestMemoryMmap, req: &LoadRequest<'_>) -> Result<BootSetup, LoadError> {
    let info = inspect(req.image)?;
    let ram = Ram::of(mem);
    check_low_ram(&ram)?;
    let loaded = check_segments(&info, &ram, req.reserved)?;
    if info.kind == ImageKind::Elf64 && info.entry >= IDENTITY_MAP_END {
        return Err(LoadError::EntryNotIdentityMapped { entry: info.entry });
    }
    let span = info.span();
    let initrd = place_initrd(&info, req, &ram)?;
    let taken: Vec<Range<u64>> = loaded
        .iter()
        .map(|s| s.paddr..s.end())
        .chain(initrd.clone())
        .chain(req.reserved.iter().map(reserved_range))
        .collect();
    let area = place::place_boot_area(&ram, &taken)?;
    let (entry, code_selector) = entry_mode(&info, area);
    let cmdline = cmdline_for(&info, req)?;
    let map = checked_memory_map(&info, &ram, req.reserved, area)?;

    // ---- Everything is checked; from here on we only write. ----

    copy_image(mem, &info, req)?;
    zero_bss(mem, &info.segments, req.fresh_memory)?;
    if let (Some(data), Some(range)) = (req.initrd, &initrd) {
        write(mem, "the initrd", range.start, data)?;
    }
    write_boot_info(
        mem,
        &info,
        req,
        &AreaContents {
            area,
            cmdline: cmdline.as_bytes(),
            initrd: initrd.clone(),
            map: &map,
        },
    )?;

    Ok(BootSetup {
        kind: info.kind,
        entry,
        gdt: GdtInfo {
            base: area.gdt(),
            limit: gdt::GDT_LIMIT,
        },
        code_selector,
        data_selector: gdt::SELECTOR_DATA,
        mbi_address: match info.kind {
            ImageKind::BzImage => linux::zeropage::boot_params_addr(area),
            _ => area.mbi(),
        },
        image: span.start..span.end,
        initrd,
        cmdline,
        mem_upper_kib: map.mem_upper,
        memory_map: map.entries,
        boot_area: area,
    })
}

/// Guest RAM must cover 0–1 MiB: the boot structures and the low-memory
/// map live there.
fn check_low_ram(ram: &Ram) -> Result<(), LoadError> {
    if ram.first_hole(&(0..HIGH_MEMORY_START)).is_none() {
        return Ok(());
    }
    let found = match ram.runs.first() {
        None => "nowhere (no RAM at all)".to_string(),
        Some(r) if r.start != 0 => format!("at {:#x}", r.start),
        Some(r) => format!("at 0 but stops at {:#x}", r.end),
    };
    Err(LoadError::NoLowRam { found })
}

/// The segments that take memory, each checked to lie in RAM, outside the
/// firmware area and every reserved range.
fn check_segments<'a>(
    info: &'a ImageInfo,
    ram: &Ram,
    reserved: &[Reserved],
) -> Result<Vec<&'a LoadSegment>, LoadError> {
    let loaded: Vec<&LoadSegment> = info.segments.iter().filter(|s| s.memsz > 0).collect();
    for seg in &loaded {
        let what = if info.kind == ImageKind::BzImage {
            format!(
                "the bzImage's protected-mode kernel and the memory it decompresses into ({})",
                seg.span()
            )
        } else {
            format!("PT_LOAD segment {} ({})", seg.index, seg.span())
        };
        check_placement(&what, seg.paddr..seg.end(), ram, reserved)?;
    }
    Ok(loaded)
}

/// Where the initrd goes, if there is one: page-aligned after the image and
/// 1 MiB, below 4 GiB and a bzImage's `initrd_addr_max`, in free RAM.
fn place_initrd(
    info: &ImageInfo,
    req: &LoadRequest<'_>,
    ram: &Ram,
) -> Result<Option<Range<u64>>, LoadError> {
    let Some(data) = req.initrd else {
        return Ok(None);
    };
    let start = align_up(info.span().end.max(HIGH_MEMORY_START), PAGE_SIZE);
    let end = start.saturating_add(data.len() as u64);
    let what = format!(
        "the initrd ({} bytes, placed page-aligned after the image at {:#x})",
        data.len(),
        start
    );
    if end > IDENTITY_MAP_END {
        return Err(LoadError::InitrdAbove4GiB { what });
    }
    if let Some(h) = &info.bzimage {
        // initrd_addr_max is the highest byte the initrd may occupy.
        let max = u64::from(h.initrd_addr_max);
        if end > 0 && end - 1 > max {
            return Err(LoadError::InitrdAboveAddrMax { what, end, max });
        }
    }
    check_placement(&what, start..end, ram, req.reserved)?;
    Ok(Some(start..end))
}

/// How the boot vCPU enters the image, and its code selector.
fn entry_mode(info: &ImageInfo, area: BootArea) -> (EntryMode, u16) {
    match info.kind {
        ImageKind::Multiboot32 => (
            EntryMode::Protected32 {
                // inspect() bounds ELF32 entries to 32 bits; the boot area
                // lies below 4 GiB.
                eip: info.entry as u32,
                eax: MULTIBOOT_BOOTLOADER_MAGIC,
                ebx: area.mbi() as u32,
                esi: 0,
            },
            gdt::SELECTOR_CODE32,
        ),
        ImageKind::Pvh => (
            EntryMode::Protected32 {
                // The PVH note's address is 32 bits; the boot area lies
                // below 4 GiB.
                eip: info.entry as u32,
                eax: 0,
                ebx: linux::pvh::start_info_addr(area) as u32,
                esi: 0,
            },
            gdt::SELECTOR_CODE32,
        ),
        ImageKind::BzImage => (
            EntryMode::Protected32 {
                // inspect() keeps a bzImage below 4 GiB; the boot area lies
                // below 4 GiB.
                eip: info.entry as u32,
                eax: 0,
                ebx: 0,
                esi: linux::zeropage::boot_params_addr(area) as u32,
            },
            gdt::SELECTOR_CODE32,
        ),
        ImageKind::Elf64 => (
            EntryMode::Long64 {
                rip: info.entry,
                rsp: area.stack_top(),
                rbx: area.mbi(),
                cr3: area.pml4(),
            },
            gdt::SELECTOR_CODE64,
        ),
    }
}

/// The command line the guest gets, checked against its slot.
fn cmdline_for(info: &ImageInfo, req: &LoadRequest<'_>) -> Result<String, LoadError> {
    let slot = CMDLINE_CAPACITY as usize - 1;
    match (info.kind, &info.bzimage) {
        // Linux reads its parameters from the first word on; a bzImage's
        // kernel takes at most cmdline_size bytes of them.
        (ImageKind::BzImage, Some(h)) => {
            check_cmdline(req.append.to_string(), slot.min(h.cmdline_size as usize))
        }
        (ImageKind::Pvh, _) => check_cmdline(req.append.to_string(), slot),
        _ => build_cmdline(req.image_name, req.append),
    }
}

/// The memory map, checked to fit the boot protocol's table.
fn checked_memory_map(
    info: &ImageInfo,
    ram: &Ram,
    reserved: &[Reserved],
    area: BootArea,
) -> Result<MemoryMap, LoadError> {
    let map = memory_map(ram, reserved, area);
    let max_entries = if info.kind == ImageKind::BzImage {
        linux::zeropage::E820_MAX_ENTRIES
    } else {
        MMAP_MAX_ENTRIES
    };
    if map.entries.len() > max_entries {
        return Err(LoadError::TooManyMmapEntries {
            entries: map.entries.len(),
            max: max_entries,
        });
    }
    Ok(map)
}

/// Copies the image's segments into guest memory.
fn copy_image(
    mem: &GuestMemoryMmap,
    info: &ImageInfo,
    req: &LoadRequest<'_>,
) -> Result<(), LoadError> {
    match info.kind {
        ImageKind::Multiboot32 | ImageKind::BzImage => {
            // A bzImage is one segment: the protected-mode kernel (the file
            // after its setup code) at the load address inspect() chose.
            let what = if info.kind == ImageKind::BzImage {
                "the bzImage's protected-mode kernel"
            } else {
                "a PT_LOAD segment"
            };
            for seg in info.segments.iter().filter(|s| s.filesz > 0) {
                // inspect() checked offset + filesz <= image.len().
                let bytes = &req.image[seg.offset as usize..(seg.offset + seg.filesz) as usize];
                write(mem, what, seg.paddr, bytes)?;
            }
        }
        ImageKind::Elf64 | ImageKind::Pvh => {
            // The project's ELF loader does the copy; our own checks above
            // already guarantee every segment it will touch is valid RAM.
            LinuxElf::load(mem, None, &mut Cursor::new(req.image), None)
                .map_err(LoadError::Elf64Copy)?;
        }
    }
    Ok(())
}

/// Writes the boot protocol's structures into the boot area: PVH's
/// start info, a bzImage's zero page, or the Multiboot information.
fn write_boot_info(
    mem: &GuestMemoryMmap,
    info: &ImageInfo,
    req: &LoadRequest<'_>,
    c: &AreaContents<'_>,
) -> Result<(), LoadError> {
    if info.kind == ImageKind::Pvh {
        linux::pvh::write_boot_area(
            mem,
            req.fresh_memory,
            &linux::pvh::PvhArea {
                area: c.area,
                cmdline: c.cmdline,
                initrd: c.initrd.clone(),
                map: c.map,
                rsdp: req.rsdp.unwrap_or(0),
            },
        )
    } else if let Some(header) = &info.bzimage {
        linux::zeropage::write_boot_area(
            mem,
            req.fresh_memory,
            &linux::zeropage::ZeroPage {
                area: c.area,
                image: req.image,
                header,
                load_addr: info.entry,
                cmdline: c.cmdline,
                initrd: c.initrd.clone(),
                map: c.map,
                rsdp: req.rsdp.unwrap_or(0),
            },
        )
    } else {
        bootinfo::write_boot_area(mem, req.fresh_memory, c)
    }
}

/// `"<image_name> <append>"`, or just the name when there are no arguments
/// (QEMU's format; kvm-unit-tests takes the first word as argv\[0\]).
fn build_cmdline(image_name: &str, append: &str) -> Result<String, LoadError> {
    let name: String = if image_name.is_empty() {
        BOOTLOADER_NAME.to_string()
    } else {
        image_name
            .chars()
            .map(|c| if c.is_whitespace() { '_' } else { c })
            .collect()
    };
    let cmdline = if append.is_empty() {
        name
    } else {
        format!("{name} {append}")
    };
    check_cmdline(cmdline, CMDLINE_CAPACITY as usize - 1)
}

/// Refuses a command line with a NUL or longer than `max` bytes (its slot's
/// room less the NUL, or less where the kernel takes less).
fn check_cmdline(cmdline: String, max: usize) -> Result<String, LoadError> {
    if cmdline.contains('\0') {
        return Err(LoadError::CmdlineNul);
    }
    if cmdline.len() > max {
        return Err(LoadError::CmdlineTooLong {
            len: cmdline.len(),
            max,
        });
    }
    Ok(cmdline)
}

/// Checks that `range` (non-empty) may receive loaded bytes: not over the
/// PC firmware area, not over a device, all in RAM. (The boot area is placed
/// afterwards, around whatever passes here.) Device ranges are checked before
/// RAM because "give it more memory" is the wrong advice for an image linked
/// over the LAPIC.
fn check_placement(
    what: &str,
    range: Range<u64>,
    ram: &Ram,
    reserved: &[Reserved],
) -> Result<(), LoadError> {
    if range.is_empty() {
        return Ok(());
    }
    let overlaps = |r: &Range<u64>| r.start < range.end && range.start < r.end;
    let firmware = EBDA_START..HIGH_MEMORY_START;
    if overlaps(&firmware) {
        return Err(LoadError::OverlapsFirmwareArea {
            what: what.to_string(),
            area: "the legacy BIOS/ACPI area",
            range: Span {
                start: firmware.start,
                end: firmware.end,
            },
            ebda: EBDA_START,
        });
    }
    for res in reserved {
        let r = reserved_range(res);
        if !r.is_empty() && overlaps(&r) {
            return Err(LoadError::OverlapsReserved {
                what: what.to_string(),
                name: res.name,
                range: Span {
                    start: r.start,
                    end: r.end,
                },
            });
        }
    }
    if let Some(addr) = ram.first_hole(&range) {
        if addr >= ram.top() {
            const MIB: u64 = 1 << 20;
            return Err(LoadError::BeyondRam {
                what: what.to_string(),
                end: range.end,
                end_mib: Mib(range.end),
                ram_mib: Mib(ram.size()),
                need_mib: Mib(align_up(range.end, MIB)),
            });
        }
        return Err(LoadError::NotInRam {
            what: what.to_string(),
            addr,
        });
    }
    Ok(())
}
