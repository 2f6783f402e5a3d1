//! Loading arm64 guests for the `virt` machine (RAM from
//! [`VIRT_RAM_BASE`], devices below it).
//!
//! Three kinds of image ([`Arm64Kind`]), told apart by [`crate::detect`]:
//!
//! * **ELF64 AArch64** (`e_machine` 183, ET_EXEC): trapline's own payloads.
//!   Each PT_LOAD is copied to its physical address (`p_paddr`), which must
//!   lie in RAM; entered at `e_entry`.
//! * **arm64 Linux `Image`** ("ARM\x64" at 0x38, see [`linux_image`]):
//!   copied to the start of RAM (a 2 MiB-aligned base) + `text_offset`,
//!   occupying `image_size` bytes from there; entered at its first byte.
//! * **Raw** — anything else that is not recognised as another format
//!   (no magic at all: a kvm-unit-tests arm64 `.flat`, which is the
//!   `objcopy -O binary` of a position-independent ELF that relocates
//!   itself): copied whole to [`VIRT_RAW_IMAGE_BASE`] (RAM + 512 KiB, 64 KiB
//!   aligned: QEMU's `KERNEL64_LOAD_ADDR` for an arm64 kernel without an
//!   `Image` header) and entered at its first byte. An x86 image (ELF32
//!   i386, ELF64 x86-64, bzImage), an ELF for any other machine, gzip or EFI
//!   zboot data are refused with an error naming what they are.
//!
//! Every kind is entered the same way (the machine's job, from the
//! [`LoadPlan`]): the boot vCPU at EL1h with the MMU and caches off and
//! DAIF masked, PC = [`LoadPlan::entry`], x0 = [`LoadPlan::dtb`], x1-x3 = 0;
//! secondaries powered off until PSCI CPU_ON.
//!
//! Where the initrd and the device tree go follows QEMU's `virt` loader
//! (hw/arm/boot.c), so guests find them where they do under QEMU: the
//! initrd page-aligned at RAM + min(RAM / 2, 128 MiB), or right after the
//! image if that is higher; the device tree after the initrd (or where the
//! initrd would go), aligned to 2 MiB (arm64 Linux maps it with 2 MiB
//! blocks and wants it 8-byte aligned, at most 2 MiB, and not sharing a
//! 2 MiB block with anything needing other attributes). Both therefore lie
//! above the image, as kvm-unit-tests requires of the device tree (above
//! its stack, which a raw image's file does not cover: the gap of up to
//! RAM / 2 is where its BSS and stack go).
//!
//! As on x86, every check comes before the first write, so a refused load
//! leaves guest memory as it was; no input makes it panic.

pub mod linux_image;

use std::ops::Range;

use trapline_abi::{VIRT_RAM_BASE, VIRT_RAW_IMAGE_BASE};
use vm_memory::GuestMemoryMmap;

pub use linux_image::Arm64ImageHeader;

use crate::detect::{self, ImageArch, ImageFormat};
use crate::elf::{self, ElfTarget};
use crate::error::{LoadError, Mib};
use crate::guest::{write, zero_bss};
use crate::image::LoadSegment;
use crate::ram::Span;
use crate::ram::{align_up, Ram};

/// Alignment of a raw image's load address (kvm-unit-tests' sections are
/// 64 KiB aligned).
pub const RAW_IMAGE_ALIGN: u64 = 0x1_0000;
/// Alignment of the base an arm64 Linux `Image` is placed above.
pub const LINUX_IMAGE_BASE_ALIGN: u64 = 0x20_0000;
/// Alignment of the device tree's address (2 MiB, as QEMU for arm64).
pub const DTB_ALIGN: u64 = 0x20_0000;
/// The largest device tree arm64 Linux accepts.
pub const DTB_MAX_LEN: u64 = 0x20_0000;
/// The initrd goes at least this far into RAM when RAM is large enough
/// (QEMU: RAM + min(RAM / 2, 128 MiB)).
pub const INITRD_MAX_OFFSET: u64 = 128 << 20;
/// Alignment of the initrd.
pub const INITRD_ALIGN: u64 = 0x1000;

const _: () = assert!(VIRT_RAW_IMAGE_BASE.is_multiple_of(RAW_IMAGE_ALIGN));
const _: () = assert!(VIRT_RAM_BASE.is_multiple_of(LINUX_IMAGE_BASE_ALIGN));

/// The ELF files the arm64 loader boots.
const AARCH64_ELF: ElfTarget = ElfTarget {
    machine32: None,
    machine64: elf::EM_AARCH64,
    accepts: "ELF64 EM_AARCH64 (183) executables, arm64 Linux Images and raw images",
    pvh_note: false,
};

/// What kind of arm64 image was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm64Kind {
    /// No recognised magic: copied whole to [`VIRT_RAW_IMAGE_BASE`] (a
    /// kvm-unit-tests `.flat`).
    Raw,
    /// ELF64 AArch64 executable: PT_LOAD segments at their physical
    /// addresses.
    Elf,
    /// arm64 Linux `Image`: at the start of RAM + `text_offset`.
    LinuxImage,
}

/// What [`inspect`] learned about an arm64 image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arm64ImageInfo {
    /// How it is loaded.
    pub kind: Arm64Kind,
    /// Guest-physical entry point (the first byte for raw and `Image`).
    pub entry: u64,
    /// What is copied where: the PT_LOADs of an ELF; one segment (the whole
    /// file, `memsz` = its footprint) for a raw image or an `Image`.
    pub segments: Vec<LoadSegment>,
    /// The header, for [`Arm64Kind::LinuxImage`].
    pub linux: Option<Arm64ImageHeader>,
}

impl Arm64ImageInfo {
    /// Lowest and one-past-highest guest-physical byte the image occupies.
    pub fn span(&self) -> Span {
        crate::image::segments_span(&self.segments)
    }
}

/// What to load, for [`load`].
#[derive(Debug, Clone, Copy)]
pub struct LoadRequest<'a> {
    /// The whole image file.
    pub image: &'a [u8],
    /// Initial ramdisk (QEMU's `-initrd`; kvm-unit-tests reads its
    /// environment from it), copied as is.
    pub initrd: Option<&'a [u8]>,
    /// The caller promises guest RAM is freshly mapped anonymous memory
    /// that reads as zero: ELF BSS is then not written (as on x86).
    pub fresh_memory: bool,
}

/// The result of [`load`]: where everything is, and what the machine must
/// still do. The image (and the initrd) are already in guest memory.
///
/// The machine then:
/// 1. builds the device tree with `/chosen/linux,initrd-start` and
///    `linux,initrd-end` = [`initrd`](Self::initrd)'s start and end (when
///    there is one) and `bootargs` = the command line;
/// 2. writes it with [`LoadPlan::write_dtb`] (at [`dtb`](Self::dtb), at
///    most [`dtb_max_len`](Self::dtb_max_len) bytes);
/// 3. starts the boot vCPU at EL1h (PSTATE 0x3c5: DAIF masked), MMU off,
///    PC = [`entry`](Self::entry), x0 = [`dtb`](Self::dtb), x1-x3 = 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadPlan {
    /// What was loaded.
    pub kind: Arm64Kind,
    /// PC of the boot vCPU.
    pub entry: u64,
    /// Guest-physical bytes the image occupies (ELF BSS and an `Image`'s
    /// `image_size` included; a raw image: its file).
    pub image: Range<u64>,
    /// Where the initrd was copied, if one was given (page-aligned start).
    pub initrd: Option<Range<u64>>,
    /// Where the device tree goes: x0 at entry. 2 MiB-aligned, above the
    /// image and the initrd.
    pub dtb: u64,
    /// The largest device tree that fits there: [`DTB_MAX_LEN`], or less
    /// where RAM ends sooner. Never 0.
    pub dtb_max_len: u64,
}

impl LoadPlan {
    /// Writes the device tree blob at [`dtb`](Self::dtb), refusing one
    /// larger than [`dtb_max_len`](Self::dtb_max_len).
    pub fn write_dtb(&self, mem: &GuestMemoryMmap, dtb: &[u8]) -> Result<(), LoadError> {
        let len = dtb.len() as u64;
        if len > self.dtb_max_len {
            return Err(LoadError::DeviceTreeTooLarge {
                len,
                room: self.dtb_max_len,
                dtb: self.dtb,
            });
        }
        write(mem, "the device tree", self.dtb, dtb)
    }
}

/// Parses and validates an arm64 image without touching guest memory (the
/// fuzzing surface). An image for x86 is
/// [`LoadError::WrongArchitecture`]; compressed kernels are
/// [`LoadError::Compressed`]; an empty file is [`LoadError::Empty`]; any
/// other unrecognised bytes are a raw image. Never panics.
pub fn inspect(image: &[u8]) -> Result<Arm64ImageInfo, LoadError> {
    if image.is_empty() {
        return Err(LoadError::Empty);
    }
    let format = detect::expect_arch(image, ImageArch::Aarch64)?;
    let whole_file = |paddr: u64, memsz: u64| LoadSegment {
        index: 0,
        paddr,
        offset: 0,
        filesz: image.len() as u64,
        memsz,
    };
    match format {
        ImageFormat::Elf { .. } => {
            let elf = elf::parse(image, &AARCH64_ELF)?;
            Ok(Arm64ImageInfo {
                kind: Arm64Kind::Elf,
                entry: elf.entry,
                segments: elf.segments,
                linux: None,
            })
        }
        ImageFormat::Arm64Image => {
            let h = linux_image::parse(image)?;
            let start = VIRT_RAM_BASE
                .checked_add(h.text_offset)
                .filter(|s| s.checked_add(h.footprint).is_some())
                .ok_or_else(|| LoadError::BadArm64Image {
                    reason: format!(
                        "its text_offset {:#x} and image_size {:#x} overflow the address space: the header is corrupt",
                        h.text_offset, h.footprint
                    ),
                })?;
            Ok(Arm64ImageInfo {
                kind: Arm64Kind::LinuxImage,
                entry: start,
                segments: vec![whole_file(start, h.footprint)],
                linux: Some(h),
            })
        }
        ImageFormat::Gzip | ImageFormat::EfiZboot => Err(LoadError::Compressed {
            what: format.describe(),
        }),
        // expect_arch() refused the x86 formats.
        ImageFormat::BzImage | ImageFormat::Unrecognised => Ok(Arm64ImageInfo {
            kind: Arm64Kind::Raw,
            entry: VIRT_RAW_IMAGE_BASE,
            segments: vec![whole_file(VIRT_RAW_IMAGE_BASE, image.len() as u64)],
            linux: None,
        }),
    }
}

/// Loads an arm64 image (and initrd) into guest memory and plans where the
/// device tree goes.
///
/// Steps, all checks before any write:
/// 1. [`inspect`] the image.
/// 2. Check every segment lies inside one run of guest RAM
///    ([`LoadError::BeyondRam`] when more `--mem` would help,
///    [`LoadError::OutsideRam`] when it is below RAM or in a hole).
/// 3. Place the initrd and the device tree (see the module docs) and check
///    they fit in RAM.
/// 4. Copy the segments' file bytes, zero their BSS (unless
///    `fresh_memory`), copy the initrd.
pub fn load(mem: &GuestMemoryMmap, req: &LoadRequest<'_>) -> Result<LoadPlan, LoadError> {
    let info = inspect(req.image)?;
    let ram = Ram::of(mem);
    let what = |seg: &LoadSegment| match info.kind {
        Arm64Kind::Raw => format!("the raw image ({} bytes)", seg.filesz),
        Arm64Kind::LinuxImage => "the arm64 Linux Image (image_size from text_offset)".to_string(),
        Arm64Kind::Elf => format!("PT_LOAD segment {}", seg.index),
    };
    let loaded: Vec<&LoadSegment> = info.segments.iter().filter(|s| s.memsz > 0).collect();
    for seg in &loaded {
        check_in_ram(&what(seg), seg.paddr..seg.end(), &ram)?;
    }
    let span = info.span();
    // The RAM run the image is in: the initrd and device tree go there too.
    let run = ram
        .runs
        .iter()
        .find(|r| r.contains(&span.start))
        .cloned()
        .ok_or(LoadError::NoLoadSegment)?;
    let (initrd, dtb, dtb_max_len) =
        place_initrd_and_dtb(&run, span.end, req.initrd.map(|d| d.len() as u64))?;

    // ---- Everything is checked; from here on we only write. ----

    for seg in info.segments.iter().filter(|s| s.filesz > 0) {
        // inspect() checked offset + filesz <= image.len().
        let bytes = &req.image[seg.offset as usize..(seg.offset + seg.filesz) as usize];
        write(mem, "the image", seg.paddr, bytes)?;
    }
    zero_bss(mem, &info.segments, req.fresh_memory)?;
    if let (Some(data), Some(range)) = (req.initrd, &initrd) {
        write(mem, "the initrd", range.start, data)?;
    }
    Ok(LoadPlan {
        kind: info.kind,
        entry: info.entry,
        image: span.start..span.end,
        initrd,
        dtb,
        dtb_max_len,
    })
}

/// Checks that `range` (non-empty) lies in one run of RAM.
fn check_in_ram(what: &str, range: Range<u64>, ram: &Ram) -> Result<(), LoadError> {
    if range.is_empty() || ram.first_hole(&range).is_none() {
        return Ok(());
    }
    let first = ram.runs.first().map_or(0, |r| r.start);
    let top = ram.top();
    if range.start >= first && range.end > top && ram.first_hole(&(range.start..top)).is_none() {
        const MIB: u64 = 1 << 20;
        return Err(LoadError::BeyondRam {
            what: what.to_string(),
            end: range.end,
            end_mib: Mib(range.end - first),
            ram_mib: Mib(ram.size()),
            need_mib: Mib(align_up(range.end - first, MIB)),
        });
    }
    Err(LoadError::OutsideRam {
        what: what.to_string(),
        range: Span {
            start: range.start,
            end: range.end,
        },
        ram: Span {
            start: first,
            end: top,
        },
    })
}

/// Where the initrd (`initrd_len` bytes, if any) and the device tree go in
/// the RAM run `run`, above `image_end`: QEMU's rule (see the module docs).
/// Returns the initrd's range, the device tree's address and its room.
fn place_initrd_and_dtb(
    run: &Range<u64>,
    image_end: u64,
    initrd_len: Option<u64>,
) -> Result<(Option<Range<u64>>, u64, u64), LoadError> {
    let size = run.end - run.start;
    let initrd_start = align_up(
        (run.start + (size / 2).min(INITRD_MAX_OFFSET)).max(image_end),
        INITRD_ALIGN,
    );
    let initrd = match initrd_len {
        None => None,
        Some(len) => {
            let end = initrd_start.saturating_add(len);
            if end > run.end {
                const MIB: u64 = 1 << 20;
                return Err(LoadError::BeyondRam {
                    what: format!(
                        "the initrd ({len} bytes, placed page-aligned at {initrd_start:#x}, above the image)"
                    ),
                    end,
                    end_mib: Mib(end - run.start),
                    ram_mib: Mib(size),
                    need_mib: Mib(align_up(end - run.start, MIB)),
                });
            }
            Some(initrd_start..end)
        }
    };
    let below = initrd.as_ref().map_or(initrd_start, |r| r.end);
    let dtb = align_up(below, DTB_ALIGN);
    if dtb >= run.end {
        return Err(LoadError::NoRoomForDeviceTree {
            what: if initrd.is_some() {
                "the image and the initrd"
            } else {
                "the image"
            },
            dtb,
            ram_end: run.end,
            need_mib: Mib(dtb.saturating_add(DTB_MAX_LEN) - run.start),
        });
    }
    Ok((initrd, dtb, (run.end - dtb).min(DTB_MAX_LEN)))
}

#[cfg(test)]
mod tests;
