//! Bounds-checked ELF32/ELF64 and Multiboot v1 header parsing.
//!
//! This is the part of the loader that sees untrusted bytes, so it never
//! indexes a slice directly: every read goes through [`crate::bytes`],
//! which returns `None` past the end, and every sum of file-controlled
//! numbers is checked. It touches no guest memory, so it can be fuzzed on
//! its own. What it learns is an [`ImageInfo`] ([`crate::image`]).

use crate::bytes::{rd, u16_at, u32_at, u64_at};
use crate::error::LoadError;
use crate::image::{ImageInfo, ImageKind, LoadSegment, MultibootHeader};

/// Multiboot v1 header magic (in the kernel file).
pub const MULTIBOOT_HEADER_MAGIC: u32 = 0x1BAD_B002;
/// The Multiboot header must start within this many bytes of the file.
pub const MULTIBOOT_SEARCH: usize = 8192;

const ELFCLASS32: u8 = 1;
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const ET_EXEC: u16 = 2;
const EM_386: u16 = 3;
const EM_X86_64: u16 = 62;
const PT_LOAD: u32 = 1;
const PT_NOTE: u32 = 4;
const PN_XNUM: u16 = 0xffff;

/// Class-dependent layout of the headers we read.
struct Class {
    bits: u8,
    ehsize: u64,
    phentsize: u16,
    machine: u16,
}

const CLASS32: Class = Class {
    bits: 32,
    ehsize: 52,
    phentsize: 32,
    machine: EM_386,
};
const CLASS64: Class = Class {
    bits: 64,
    ehsize: 64,
    phentsize: 56,
    machine: EM_X86_64,
};

/// See [`crate::inspect`].
pub fn inspect(image: &[u8]) -> Result<ImageInfo, LoadError> {
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
    // From here on every header field is inside the file (len >= ehsize), but
    // keep going through the checked readers: one code path, no panics.
    let trunc = || LoadError::Truncated {
        what: "ELF header",
        need: class.ehsize,
        len,
    };
    let e_type = u16_at(image, 16).ok_or_else(trunc)?;
    let e_machine = u16_at(image, 18).ok_or_else(trunc)?;
    if e_machine != class.machine {
        return Err(LoadError::WrongMachine {
            bits: class.bits,
            machine: e_machine,
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

    if phnum == 0 {
        return Err(LoadError::NoLoadSegment);
    }
    if phnum == PN_XNUM {
        return Err(LoadError::ExtendedPhnum);
    }
    if phentsize != class.phentsize {
        return Err(LoadError::BadPhentsize {
            bits: class.bits,
            got: phentsize,
            expected: class.phentsize,
        });
    }
    if phoff < class.ehsize {
        return Err(LoadError::PhdrTableInHeader {
            phoff,
            ehsize: class.ehsize,
        });
    }
    let table_out = || LoadError::PhdrTableOutOfFile {
        phoff,
        phnum,
        phentsize,
        len,
    };
    let table_end = u64::from(phnum)
        .checked_mul(u64::from(phentsize))
        .and_then(|n| n.checked_add(phoff))
        .ok_or_else(table_out)?;
    if table_end > len {
        return Err(table_out());
    }

    let mut segments = Vec::new();
    let mut pvh_entry = None;
    for index in 0..usize::from(phnum) {
        let ph = phoff + index as u64 * u64::from(phentsize);
        let p_type = u32_at(image, ph).ok_or_else(table_out)?;
        if p_type == PT_NOTE && class.bits == 64 {
            let offset = u64_at(image, ph + 8).ok_or_else(table_out)?;
            let filesz = u64_at(image, ph + 32).ok_or_else(table_out)?;
            if let Some(e) = check_notes(image, index, offset, filesz)? {
                pvh_entry.get_or_insert(u64::from(e));
            }
        }
        if p_type != PT_LOAD {
            continue;
        }
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
        segments.push(LoadSegment {
            index,
            paddr,
            offset,
            filesz,
            memsz,
        });
    }
    if segments.is_empty() {
        return Err(LoadError::NoLoadSegment);
    }

    // Overlapping segments would make the result depend on copy order (and
    // one segment's BSS zeroing would wipe another's bytes): refuse them.
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

    // The entry must be a byte that came from the file: jumping into BSS or
    // unloaded memory would execute zeros or garbage. A PVH image is
    // entered at its note's address, so that is the one that must be there.
    let entry = pvh_entry.unwrap_or(entry);
    if !segments
        .iter()
        .any(|s| entry >= s.paddr && entry - s.paddr < s.filesz)
    {
        return Err(LoadError::EntryOutsideSegments { entry });
    }

    // Asked last: a truncated file then reports the truncation rather than a
    // missing header, and a real non-Multiboot ELF32 (valid program headers)
    // still gets the "Multiboot only" answer.
    let multiboot = if class.bits == 32 {
        Some(find_multiboot(image)?)
    } else {
        None
    };

    Ok(ImageInfo {
        kind: if class.bits == 32 {
            ImageKind::Multiboot32
        } else if pvh_entry.is_some() {
            ImageKind::Pvh
        } else {
            ImageKind::Elf64
        },
        entry,
        segments,
        multiboot,
        bzimage: None,
    })
}

/// Validates an ELF64 PT_NOTE segment: inside the file, and a whole number of
/// well-formed notes (12-byte header, name and descriptor each padded to 4
/// bytes, all inside the segment), and a Xen PVH entry note, if present, has
/// the 4-byte address it promises. linux-loader walks these notes when it
/// copies an ELF64 image; checking them here means that an image
/// [`inspect`] accepts cannot then fail half-way through [`crate::load`].
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

/// Finds the Multiboot v1 header the way QEMU does: the first 4-byte-aligned
/// magic in the first 8 KiB whose checksum is valid (a magic with a bad
/// checksum is skipped, but reported if nothing better is found).
fn find_multiboot(image: &[u8]) -> Result<MultibootHeader, LoadError> {
    let window = image.len().min(MULTIBOOT_SEARCH) as u64;
    let mut bad = None;
    let mut off = 0u64;
    while off + 12 <= window {
        if u32_at(image, off) == Some(MULTIBOOT_HEADER_MAGIC) {
            let flags = u32_at(image, off + 4).unwrap_or(0);
            let checksum = u32_at(image, off + 8).unwrap_or(0);
            if MULTIBOOT_HEADER_MAGIC
                .wrapping_add(flags)
                .wrapping_add(checksum)
                == 0
            {
                check_multiboot_flags(flags)?;
                return Ok(MultibootHeader { offset: off, flags });
            }
            bad.get_or_insert(LoadError::MultibootBadChecksum {
                offset: off,
                flags,
                checksum,
            });
        }
        off += 4;
    }
    Err(bad.unwrap_or(LoadError::Elf32WithoutMultiboot))
}

/// Multiboot v1: bits 0–15 are requirements a loader must fail on if it
/// cannot meet them; bits 16–31 are optional features. We meet bit 0 (we
/// page-align modules anyway) and bit 1 (we always pass mem_* and the mmap),
/// and ignore bit 2 (video mode) as QEMU does, since there is no display.
fn check_multiboot_flags(flags: u32) -> Result<(), LoadError> {
    const HONOURED: u32 = 0b111;
    const AOUT_KLUDGE: u32 = 1 << 16;
    let unsupported = flags & 0xffff & !HONOURED;
    if unsupported != 0 {
        return Err(LoadError::MultibootUnsupportedFlag {
            bit: unsupported.trailing_zeros(),
            flags,
        });
    }
    if flags & AOUT_KLUDGE != 0 {
        return Err(LoadError::MultibootAoutKludge { flags });
    }
    Ok(())
}
