//! Bounds-checked ELF32/ELF64 parsing, for every architecture: the ELF
//! header, the PT_LOAD segments (by physical address) and the notes. Which
//! machine and classes are accepted is the caller's [`ElfTarget`]; what a
//! boot protocol adds on top (x86's Multiboot header) is the arch module's.
//!
//! This is the part of the loader that sees untrusted bytes, so it never
//! indexes a slice directly: every read goes through [`crate::bytes`],
//! which returns `None` past the end, and every sum of file-controlled
//! numbers is checked. It touches no guest memory, so it can be fuzzed on
//! its own. What it learns is an [`ImageInfo`] ([`crate::image`]).

use crate::bytes::{rd, u16_at, u32_at, u64_at};
use crate::error::LoadError;
use crate::image::LoadSegment;

const ELFCLASS32: u8 = 1;
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const ET_EXEC: u16 = 2;
/// `e_machine` of Intel 80386 (ELF32 Multiboot kernels).
pub(crate) const EM_386: u16 = 3;
/// `e_machine` of 32-bit Arm (AArch32).
pub(crate) const EM_ARM: u16 = 40;
/// `e_machine` of AMD64 / Intel 64.
pub(crate) const EM_X86_64: u16 = 62;
/// `e_machine` of 64-bit Arm (AArch64).
pub(crate) const EM_AARCH64: u16 = 183;
const PT_LOAD: u32 = 1;
const PT_NOTE: u32 = 4;
const PN_XNUM: u16 = 0xffff;

/// Which ELF files an architecture's loader accepts.
pub(crate) struct ElfTarget {
    /// `e_machine` accepted in an ELF32 file; `None`: no ELF32 at all.
    pub machine32: Option<u16>,
    /// `e_machine` accepted in an ELF64 file.
    pub machine64: u16,
    /// What the loader boots, for the wrong-machine message ("ELF64
    /// EM_AARCH64 (183) images").
    pub accepts: &'static str,
    /// Whether a Xen `XEN_ELFNOTE_PHYS32_ENTRY` note (x86's PVH) gives the
    /// entry point instead of `e_entry`.
    pub pvh_note: bool,
}

/// What [`parse`] learned.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // `bits` and `pvh`: x86 boot protocols
pub(crate) struct Elf {
    /// 32 or 64.
    pub bits: u8,
    /// The entry point: `e_entry`, or the PVH note's address when the target
    /// takes one and the image has one. Inside a segment's file bytes.
    pub entry: u64,
    /// The PT_LOAD segments in program-header order.
    pub segments: Vec<LoadSegment>,
    /// Whether the entry came from a PVH note.
    pub pvh: bool,
}

/// Class-dependent layout of the headers we read.
struct Class {
    bits: u8,
    ehsize: u64,
    phentsize: u16,
}

const CLASS32: Class = Class {
    bits: 32,
    ehsize: 52,
    phentsize: 32,
};
const CLASS64: Class = Class {
    bits: 64,
    ehsize: 64,
    phentsize: 56,
};

/// Parses and validates an ELF executable for `target`: the header, every
/// PT_LOAD (inside the file, `filesz <= memsz`, no address overflow, no two
/// overlapping), the notes, and an entry point among the file bytes.
/// Touches no guest memory; never panics, whatever the bytes.
pub(crate) fn parse(image: &[u8], target: &ElfTarget) -> Result<Elf, LoadError> {
    let class = identify(image)?;
    let header = read_header(image, class, target)?;
    check_phdr_table(&header, class, image.len() as u64)?;
    let (segments, pvh_entry) = read_segments(image, class, target, &header)?;
    check_no_overlap(&segments)?;
    // A PVH image is entered at its note's address, so that is the one
    // that must be among the file bytes.
    let entry = pvh_entry.unwrap_or(header.entry);
    check_entry(entry, &segments)?;
    Ok(Elf {
        bits: class.bits,
        entry,
        segments,
        pvh: pvh_entry.is_some(),
    })
}

/// The ELF identification: the magic, the class (whose header must fit in
/// the file) and little-endian data.
fn identify(image: &[u8]) -> Result<&'static Class, LoadError> {
    let len = image.len() as u64;
    if image.is_empty() {
        return Err(LoadError::Empty);
    }
    // A file shorter than the magic that matches it so far is a truncated
    // ELF; anything else without the magic is not ELF at all.
    let magic = b"\x7fELF";
    if !image.starts_with(magic) {
        if image.len() < magic.len() && magic.starts_with(image) {
            return Err(LoadError::Truncated {
                what: "ELF identification",
                need: 16,
                len,
            });
        }
        return Err(LoadError::NotElf);
    }
    if image.len() < 16 {
        return Err(LoadError::Truncated {
            what: "ELF identification",
            need: 16,
            len,
        });
    }
    let class = match image[4] {
        ELFCLASS32 => &CLASS32,
        ELFCLASS64 => &CLASS64,
        other => return Err(LoadError::BadClass(other)),
    };
    if len < class.ehsize {
        return Err(LoadError::Truncated {
            what: if class.bits == 32 {
                "ELF32 header"
            } else {
                "ELF64 header"
            },
            need: class.ehsize,
            len,
        });
    }
    if image[5] != ELFDATA2LSB {
        return Err(LoadError::NotLittleEndian(image[5]));
    }
    Ok(class)
}

/// The ELF header fields the loader uses.
struct Header {
    entry: u64,
    phoff: u64,
    phentsize: u16,
    phnum: u16,
}

/// The header of an executable for `target`'s machine.
fn read_header(image: &[u8], class: &Class, target: &ElfTarget) -> Result<Header, LoadError> {
    // Every header field is inside the file (len >= ehsize), but keep going
    // through the checked readers: one code path, no panics.
    let trunc = || LoadError::Truncated {
        what: "ELF header",
        need: class.ehsize,
        len: image.len() as u64,
    };
    let e_type = u16_at(image, 16).ok_or_else(trunc)?;
    let e_machine = u16_at(image, 18).ok_or_else(trunc)?;
    let wanted = if class.bits == 32 {
        target.machine32
    } else {
        Some(target.machine64)
    };
    if wanted != Some(e_machine) {
        return Err(LoadError::WrongMachine {
            bits: class.bits,
            machine: e_machine,
            expected: target.accepts,
        });
    }
    if e_type != ET_EXEC {
        return Err(LoadError::NotExecutable(e_type));
    }
    let (entry, phoff, phentsize, phnum) = if class.bits == 32 {
        (
            u64::from(u32_at(image, 24).ok_or_else(trunc)?),
            u64::from(u32_at(image, 28).ok_or_else(trunc)?),
            u16_at(image, 42).ok_or_else(trunc)?,
            u16_at(image, 44).ok_or_else(trunc)?,
        )
    } else {
        (
            u64_at(image, 24).ok_or_else(trunc)?,
            u64_at(image, 32).ok_or_else(trunc)?,
            u16_at(image, 54).ok_or_else(trunc)?,
            u16_at(image, 56).ok_or_else(trunc)?,
        )
    };
    Ok(Header {
        entry,
        phoff,
        phentsize,
        phnum,
    })
}

/// The error for a program header table that does not fit in the file.
fn table_out(h: &Header, len: u64) -> LoadError {
    LoadError::PhdrTableOutOfFile {
        phoff: h.phoff,
        phnum: h.phnum,
        phentsize: h.phentsize,
        len,
    }
}

/// A program header table of this class's entries, after the ELF header
/// and inside the file.
fn check_phdr_table(h: &Header, class: &Class, len: u64) -> Result<(), LoadError> {
    if h.phnum == 0 {
        return Err(LoadError::NoLoadSegment);
    }
    if h.phnum == PN_XNUM {
        return Err(LoadError::ExtendedPhnum);
    }
    if h.phentsize != class.phentsize {
        return Err(LoadError::BadPhentsize {
            bits: class.bits,
            got: h.phentsize,
            expected: class.phentsize,
        });
    }
    if h.phoff < class.ehsize {
        return Err(LoadError::PhdrTableInHeader {
            phoff: h.phoff,
            ehsize: class.ehsize,
        });
    }
    let table_end = u64::from(h.phnum)
        .checked_mul(u64::from(h.phentsize))
        .and_then(|n| n.checked_add(h.phoff))
        .ok_or_else(|| table_out(h, len))?;
    if table_end > len {
        return Err(table_out(h, len));
    }
    Ok(())
}

/// Every PT_LOAD, checked, and the PVH entry of the first note that has
/// one (ELF64 images, when `target` boots through PVH).
fn read_segments(
    image: &[u8],
    class: &Class,
    target: &ElfTarget,
    h: &Header,
) -> Result<(Vec<LoadSegment>, Option<u64>), LoadError> {
    let len = image.len() as u64;
    let mut segments = Vec::new();
    let mut pvh_entry = None;
    for index in 0..usize::from(h.phnum) {
        let ph = h.phoff + index as u64 * u64::from(h.phentsize);
        let p_type = u32_at(image, ph).ok_or_else(|| table_out(h, len))?;
        if p_type == PT_NOTE && class.bits == 64 && target.pvh_note {
            let offset = u64_at(image, ph + 8).ok_or_else(|| table_out(h, len))?;
            let filesz = u64_at(image, ph + 32).ok_or_else(|| table_out(h, len))?;
            if let Some(e) = check_notes(image, index, offset, filesz)? {
                pvh_entry.get_or_insert(u64::from(e));
            }
        }
        if p_type == PT_LOAD {
            segments.push(read_load_segment(image, class, h, index, ph)?);
        }
    }
    if segments.is_empty() {
        return Err(LoadError::NoLoadSegment);
    }
    Ok((segments, pvh_entry))
}

/// The PT_LOAD at file offset `ph`: its bytes inside the file, no more of
/// them than of memory, and an end the class can address.
fn read_load_segment(
    image: &[u8],
    class: &Class,
    h: &Header,
    index: usize,
    ph: u64,
) -> Result<LoadSegment, LoadError> {
    let len = image.len() as u64;
    let table_out = || table_out(h, len);
    let (offset, paddr, filesz, memsz) = if class.bits == 32 {
        (
            u64::from(u32_at(image, ph + 4).ok_or_else(table_out)?),
            u64::from(u32_at(image, ph + 12).ok_or_else(table_out)?),
            u64::from(u32_at(image, ph + 16).ok_or_else(table_out)?),
            u64::from(u32_at(image, ph + 20).ok_or_else(table_out)?),
        )
    } else {
        (
            u64_at(image, ph + 8).ok_or_else(table_out)?,
            u64_at(image, ph + 24).ok_or_else(table_out)?,
            u64_at(image, ph + 32).ok_or_else(table_out)?,
            u64_at(image, ph + 40).ok_or_else(table_out)?,
        )
    };
    if filesz > memsz {
        return Err(LoadError::FileszExceedsMemsz {
            index,
            filesz,
            memsz,
        });
    }
    match offset.checked_add(filesz) {
        Some(end) if end <= len => {}
        _ => {
            return Err(LoadError::SegmentOutOfFile {
                index,
                offset,
                filesz,
                len,
            })
        }
    }
    // An ELF32 segment must end at or below 4 GiB: 32-bit code cannot
    // address past it, and QEMU computes these sums in 32 bits.
    let limit = if class.bits == 32 {
        1u64 << 32
    } else {
        u64::MAX
    };
    match paddr.checked_add(memsz) {
        Some(end) if end <= limit => {}
        _ => {
            return Err(LoadError::SegmentAddressOverflow {
                index,
                paddr,
                memsz,
                bits: class.bits,
            })
        }
    }
    Ok(LoadSegment {
        index,
        paddr,
        offset,
        filesz,
        memsz,
    })
}

/// Overlapping segments would make the result depend on copy order (and
/// one segment's BSS zeroing would wipe another's bytes): refuse them.
fn check_no_overlap(segments: &[LoadSegment]) -> Result<(), LoadError> {
    let mut sorted: Vec<&LoadSegment> = segments.iter().filter(|s| s.memsz > 0).collect();
    sorted.sort_by_key(|s| s.paddr);
    for pair in sorted.windows(2) {
        if pair[1].paddr < pair[0].end() {
            return Err(LoadError::OverlappingSegments {
                first: pair[0].index,
                first_range: pair[0].span(),
                second: pair[1].index,
                second_range: pair[1].span(),
            });
        }
    }
    Ok(())
}

/// The entry must be a byte that came from the file: jumping into BSS or
/// unloaded memory would execute zeros or garbage.
fn check_entry(entry: u64, segments: &[LoadSegment]) -> Result<(), LoadError> {
    if segments
        .iter()
        .any(|s| entry >= s.paddr && entry - s.paddr < s.filesz)
    {
        Ok(())
    } else {
        Err(LoadError::EntryOutsideSegments { entry })
    }
}

/// Validates an ELF64 PT_NOTE segment: inside the file, and a whole number of
/// well-formed notes (12-byte header, name and descriptor each padded to 4
/// bytes, all inside the segment), and a Xen PVH entry note, if present, has
/// the 4-byte address it promises. linux-loader walks these notes when it
/// copies an ELF64 image; checking them here means that an image
/// [`inspect`] accepts cannot then fail half-way through `load`.
/// Returns the first PVH entry address found.
fn check_notes(
    image: &[u8],
    index: usize,
    offset: u64,
    filesz: u64,
) -> Result<Option<u32>, LoadError> {
    const XEN_ELFNOTE_PHYS32_ENTRY: u32 = 18;
    let bad = |reason: String| LoadError::BadNote { index, reason };
    let end = match offset.checked_add(filesz) {
        Some(end) if end <= image.len() as u64 => end,
        _ => {
            return Err(bad(format!(
            "its {filesz:#x} bytes at file offset {offset:#x} run past the end of the {}-byte file",
            image.len()
        )))
        }
    };
    let align4 = |v: u32| (u64::from(v) + 3) & !3;
    let mut at = offset;
    let mut pvh = None;
    while at < end {
        if end - at < 12 {
            return Err(bad(format!("{} stray bytes after the last note", end - at)));
        }
        // In bounds: at + 12 <= end <= len.
        let namesz = u32_at(image, at).unwrap_or(0);
        let descsz = u32_at(image, at + 4).unwrap_or(0);
        let n_type = u32_at(image, at + 8).unwrap_or(0);
        let size = 12 + align4(namesz) + align4(descsz);
        if size > end - at {
            return Err(bad(format!(
                "the note at file offset {at:#x} (name {namesz} bytes, descriptor {descsz} bytes) runs past the end of the segment"
            )));
        }
        if n_type == XEN_ELFNOTE_PHYS32_ENTRY
            && namesz == 4
            && rd::<4>(image, at + 12) == Some(*b"Xen\0")
            && descsz < 4
        {
            return Err(bad(format!(
                "the Xen PVH entry note at file offset {at:#x} has a {descsz}-byte descriptor; it needs 4"
            )));
        }
        if n_type == XEN_ELFNOTE_PHYS32_ENTRY
            && namesz == 4
            && rd::<4>(image, at + 12) == Some(*b"Xen\0")
        {
            // descsz >= 4 checked above; the descriptor follows the
            // 4-byte-padded name and lies inside the segment.
            pvh = pvh.or(u32_at(image, at + 12 + align4(namesz)));
        }
        at += size;
    }
    Ok(pvh)
}
