//! The arm64 Linux `Image` header (Documentation/arch/arm64/booting.rst):
//! 64 bytes at the start of the uncompressed kernel.
//!
//! ```text
//! 0x00  u32 code0        executable code (a branch, or "MZ" with an EFI stub)
//! 0x04  u32 code1
//! 0x08  u64 text_offset  where the image goes above a 2 MiB-aligned base
//! 0x10  u64 image_size   bytes the kernel uses from its start (BSS included);
//!                        0 in kernels before 3.17, which also means
//!                        text_offset is 0x80000
//! 0x18  u64 flags        bit 0: big-endian; bits 1-2: page size;
//!                        bit 3: may be placed anywhere in RAM
//! 0x20  u64 res2, res3, res4
//! 0x38  u32 magic        "ARM\x64"
//! 0x3C  u32 res5         PE header offset (EFI stub)
//! ```
//!
//! Every field is little-endian whatever the kernel's endianness. The image
//! is entered at its first byte. Like the ELF reader, this reads untrusted
//! bytes through the crate's bounds-checked readers and never panics.

use crate::bytes::u64_at;
use crate::detect::{ARM64_IMAGE_MAGIC, ARM64_IMAGE_MAGIC_OFFSET};
use crate::error::LoadError;

/// Bytes of the header (up to and including `res5`).
pub const HEADER_LEN: u64 = 0x40;
/// `text_offset` assumed when `image_size` is 0 (kernels before 3.17).
pub const LEGACY_TEXT_OFFSET: u64 = 0x8_0000;
/// `flags` bit 0: the kernel is big-endian.
pub const FLAG_BIG_ENDIAN: u64 = 1 << 0;
/// `flags` bit 3: the kernel may be placed anywhere in RAM (else its 2 MiB
/// base should be as close to the start of RAM as possible; trapline puts
/// it there in both cases).
pub const FLAG_PHYS_ANYWHERE: u64 = 1 << 3;

/// What trapline uses from an arm64 `Image` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arm64ImageHeader {
    /// Offset of the image above its 2 MiB-aligned base (already
    /// [`LEGACY_TEXT_OFFSET`] for an old kernel that states no size).
    pub text_offset: u64,
    /// Bytes the kernel occupies from its first byte: `image_size`, or the
    /// file length when that is larger or `image_size` is 0.
    pub footprint: u64,
    /// The header's `flags`.
    pub flags: u64,
}

fn bad(reason: impl Into<String>) -> LoadError {
    LoadError::BadArm64Image {
        reason: reason.into(),
    }
}

/// Reads and checks the header of `image`, which carries the magic at
/// [`ARM64_IMAGE_MAGIC_OFFSET`].
pub fn parse(image: &[u8]) -> Result<Arm64ImageHeader, LoadError> {
    let len = image.len() as u64;
    let trunc = || LoadError::Truncated {
        what: "arm64 Image header",
        need: HEADER_LEN,
        len,
    };
    let magic_end = ARM64_IMAGE_MAGIC_OFFSET + ARM64_IMAGE_MAGIC.len() as u64;
    if len < magic_end
        || image.get(ARM64_IMAGE_MAGIC_OFFSET as usize..magic_end as usize)
            != Some(&ARM64_IMAGE_MAGIC[..])
    {
        return Err(bad(format!(
            "it has no \"ARM\\x64\" magic at offset {ARM64_IMAGE_MAGIC_OFFSET:#x}"
        )));
    }
    // The header's fields end before the magic; res5 after it is unused.
    let text_offset = u64_at(image, 0x08).ok_or_else(trunc)?;
    let image_size = u64_at(image, 0x10).ok_or_else(trunc)?;
    let flags = u64_at(image, 0x18).ok_or_else(trunc)?;
    if flags & FLAG_BIG_ENDIAN != 0 {
        return Err(bad(format!(
            "it is a big-endian kernel (flags {flags:#x}, bit 0); trapline runs little-endian guests: build the kernel without CONFIG_CPU_BIG_ENDIAN"
        )));
    }
    let text_offset = if image_size == 0 {
        LEGACY_TEXT_OFFSET
    } else {
        text_offset
    };
    if text_offset % 8 != 0 {
        return Err(bad(format!(
            "its text_offset {text_offset:#x} is not 8-byte aligned: the header is corrupt"
        )));
    }
    Ok(Arm64ImageHeader {
        text_offset,
        footprint: image_size.max(len),
        flags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn header(text_offset: u64, image_size: u64, flags: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len.max(0x3C)];
        b[0x08..0x10].copy_from_slice(&text_offset.to_le_bytes());
        b[0x10..0x18].copy_from_slice(&image_size.to_le_bytes());
        b[0x18..0x20].copy_from_slice(&flags.to_le_bytes());
        b[0x38..0x3C].copy_from_slice(b"ARM\x64");
        b.truncate(len);
        b
    }

    #[test]
    fn reads_a_modern_header() {
        let h = parse(&header(0, 0x20_0000, FLAG_PHYS_ANYWHERE, 0x1000)).unwrap();
        assert_eq!(h.text_offset, 0);
        assert_eq!(
            h.footprint, 0x20_0000,
            "image_size covers BSS past the file"
        );
        assert_eq!(h.flags, FLAG_PHYS_ANYWHERE);
    }

    #[test]
    fn an_old_kernel_without_size_sits_at_0x80000_and_spans_its_file() {
        let h = parse(&header(0x1234_5678, 0, 0, 0x3000)).unwrap();
        assert_eq!((h.text_offset, h.footprint), (LEGACY_TEXT_OFFSET, 0x3000));
    }

    #[test]
    fn refuses_big_endian_misaligned_and_magicless() {
        let e = parse(&header(0, 0x1000, FLAG_BIG_ENDIAN, 0x40)).unwrap_err();
        assert!(e.to_string().contains("big-endian"), "{e}");
        let e = parse(&header(3, 0x1000, 0, 0x40)).unwrap_err();
        assert!(e.to_string().contains("text_offset"), "{e}");
        let mut b = header(0, 0x1000, 0, 0x40);
        b[0x38] = b'X';
        assert!(matches!(parse(&b), Err(LoadError::BadArm64Image { .. })));
        assert!(matches!(
            parse(&b[..0x3B]),
            Err(LoadError::BadArm64Image { .. })
        ));
    }
}
