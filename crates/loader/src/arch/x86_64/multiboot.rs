//! The Multiboot v1 header an ELF32 x86 kernel carries (a kvm-unit-tests
//! x86 `.flat`): finding it and checking what it asks of the loader.

use crate::bytes::u32_at;
use crate::error::LoadError;
use crate::image::MultibootHeader;

/// Multiboot v1 header magic (in the kernel file).
pub const MULTIBOOT_HEADER_MAGIC: u32 = 0x1BAD_B002;
/// The Multiboot header must start within this many bytes of the file.
pub const MULTIBOOT_SEARCH: usize = 8192;

/// Finds the Multiboot v1 header the way QEMU does: the first 4-byte-aligned
/// magic in the first 8 KiB whose checksum is valid (a magic with a bad
/// checksum is skipped, but reported if nothing better is found).
pub(crate) fn find_multiboot(image: &[u8]) -> Result<MultibootHeader, LoadError> {
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
