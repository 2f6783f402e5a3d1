//! Which architecture an image is for, from its magic numbers alone.
//!
//! Both architectures' loaders ask this first, so an image built for the
//! other one is refused by name ("an ELF64 x86-64 executable, an image for
//! x86_64") instead of failing later as a corrupt ELF or, on arm64, running
//! as a raw binary. It reads a few bytes at fixed offsets and validates
//! nothing else: each format's own parser does that. It is neutral code,
//! built on every host, so both directions are tested on either.

use crate::bytes::{rd, u16_at};
use crate::elf::{EM_386, EM_AARCH64, EM_ARM, EM_X86_64};
use crate::error::LoadError;
pub use crate::image::ImageArch;

/// What an image looks like from its magic numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// Starts with `\x7fELF`. `bits` is 32 or 64 when `EI_CLASS` says so;
    /// `machine` is `e_machine` when the file is little-endian and long
    /// enough to hold it.
    Elf {
        /// 32 or 64, if the class byte is valid.
        bits: Option<u8>,
        /// `e_machine`, if readable.
        machine: Option<u16>,
    },
    /// An x86 Linux bzImage: boot_flag 0xAA55 at 0x1FE and "HdrS" at 0x202.
    BzImage,
    /// An arm64 Linux `Image`: "ARM\x64" at 0x38 (its header's `magic`).
    Arm64Image,
    /// gzip data (1F 8B), such as a distribution's compressed arm64
    /// `vmlinuz`.
    Gzip,
    /// A Linux EFI zboot image ("MZ", then "zimg" at 4): a compressed kernel
    /// with an EFI decompressor in front.
    EfiZboot,
    /// None of the above: on arm64, a raw image (a kvm-unit-tests `.flat`).
    Unrecognised,
}

/// Offset of the arm64 `Image` header's `magic` field.
pub const ARM64_IMAGE_MAGIC_OFFSET: u64 = 0x38;
/// The arm64 `Image` header's `magic`: "ARM\x64".
pub const ARM64_IMAGE_MAGIC: [u8; 4] = *b"ARM\x64";

impl ImageFormat {
    /// Recognises `image` by its magic numbers (never fails, never panics).
    pub fn identify(image: &[u8]) -> ImageFormat {
        if image.starts_with(b"\x7fELF") {
            let bits = match image.get(4) {
                Some(1) => Some(32),
                Some(2) => Some(64),
                _ => None,
            };
            // e_machine's bytes are in the file's byte order; only a
            // little-endian one is read (trapline loads no other).
            let machine = if image.get(5) == Some(&1) {
                u16_at(image, 18)
            } else {
                None
            };
            return ImageFormat::Elf { bits, machine };
        }
        if image.get(0x1FE..0x200) == Some(&[0x55, 0xAA][..])
            && image.get(0x202..0x206) == Some(&b"HdrS"[..])
        {
            return ImageFormat::BzImage;
        }
        if rd::<4>(image, ARM64_IMAGE_MAGIC_OFFSET) == Some(ARM64_IMAGE_MAGIC) {
            return ImageFormat::Arm64Image;
        }
        if image.starts_with(&[0x1F, 0x8B]) {
            return ImageFormat::Gzip;
        }
        if image.starts_with(b"MZ") && rd::<4>(image, 4) == Some(*b"zimg") {
            return ImageFormat::EfiZboot;
        }
        ImageFormat::Unrecognised
    }

    /// The architecture the image is for, when its format says.
    pub fn arch(self) -> Option<ImageArch> {
        match self {
            ImageFormat::Elf {
                machine: Some(EM_386 | EM_X86_64),
                ..
            }
            | ImageFormat::BzImage => Some(ImageArch::X86_64),
            ImageFormat::Elf {
                machine: Some(EM_AARCH64),
                ..
            }
            | ImageFormat::Arm64Image => Some(ImageArch::Aarch64),
            _ => None,
        }
    }

    /// The format in words, for messages ("an ELF64 x86-64 executable").
    pub fn describe(self) -> &'static str {
        match self {
            ImageFormat::Elf {
                bits: Some(32),
                machine: Some(EM_386),
            } => {
                "an ELF32 i386 executable (a Multiboot kernel, such as an x86 kvm-unit-tests .flat)"
            }
            ImageFormat::Elf {
                machine: Some(EM_386),
                ..
            } => "an i386 ELF file",
            ImageFormat::Elf {
                bits: Some(64),
                machine: Some(EM_X86_64),
            } => "an ELF64 x86-64 executable",
            ImageFormat::Elf {
                machine: Some(EM_X86_64),
                ..
            } => "an x86-64 ELF file",
            ImageFormat::Elf {
                bits: Some(64),
                machine: Some(EM_AARCH64),
            } => "an ELF64 AArch64 executable",
            ImageFormat::Elf {
                machine: Some(EM_AARCH64),
                ..
            } => "an AArch64 ELF file",
            ImageFormat::Elf {
                machine: Some(EM_ARM),
                ..
            } => "a 32-bit Arm (AArch32) ELF file",
            ImageFormat::Elf { .. } => "an ELF file",
            ImageFormat::BzImage => "a Linux bzImage",
            ImageFormat::Arm64Image => "an arm64 Linux Image",
            ImageFormat::Gzip => "gzip-compressed data",
            ImageFormat::EfiZboot => "a compressed Linux EFI zboot image",
            ImageFormat::Unrecognised => "a raw binary",
        }
    }
}

/// Identifies `image` and refuses it if its format says it is for another
/// architecture than `machine` ([`LoadError::WrongArchitecture`]). Formats
/// that name no architecture pass: their own parser decides.
pub fn expect_arch(image: &[u8], machine: ImageArch) -> Result<ImageFormat, LoadError> {
    let format = ImageFormat::identify(image);
    match format.arch() {
        Some(image_arch) if image_arch != machine => Err(LoadError::WrongArchitecture {
            what: format.describe(),
            image_arch,
            machine_arch: machine,
        }),
        _ => Ok(format),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(class: u8, data: u8, machine: u16) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = class;
        b[5] = data;
        b[18..20].copy_from_slice(&machine.to_le_bytes());
        b
    }

    #[test]
    fn elf_files_by_class_and_machine() {
        let id = |b: &[u8]| ImageFormat::identify(b);
        assert_eq!(id(&elf(1, 1, 3)).arch(), Some(ImageArch::X86_64));
        assert_eq!(id(&elf(2, 1, 62)).arch(), Some(ImageArch::X86_64));
        assert_eq!(id(&elf(2, 1, 183)).arch(), Some(ImageArch::Aarch64));
        assert_eq!(id(&elf(2, 1, 243)).arch(), None, "RISC-V names no arch");
        assert_eq!(
            id(&elf(2, 2, 183)),
            ImageFormat::Elf {
                bits: Some(64),
                machine: None
            },
            "a big-endian e_machine is not read"
        );
        assert_eq!(
            id(b"\x7fELF\x02"),
            ImageFormat::Elf {
                bits: Some(64),
                machine: None
            },
            "too short for e_machine"
        );
        assert!(id(&elf(1, 1, 3)).describe().contains("i386"));
        assert!(id(&elf(2, 1, 183)).describe().contains("AArch64"));
    }

    #[test]
    fn linux_kernels_and_compressed_data() {
        let mut bz = vec![0u8; 0x300];
        bz[0x1FE..0x200].copy_from_slice(&[0x55, 0xAA]);
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        assert_eq!(ImageFormat::identify(&bz), ImageFormat::BzImage);
        let mut arm = vec![0u8; 0x40];
        arm[0x38..0x3C].copy_from_slice(b"ARM\x64");
        assert_eq!(ImageFormat::identify(&arm), ImageFormat::Arm64Image);
        // An EFI-stub arm64 Image starts with "MZ" too: the magic decides.
        arm[..2].copy_from_slice(b"MZ");
        assert_eq!(ImageFormat::identify(&arm), ImageFormat::Arm64Image);
        assert_eq!(
            ImageFormat::identify(&arm[..0x3B]),
            ImageFormat::Unrecognised
        );
        assert_eq!(ImageFormat::identify(&[0x1F, 0x8B, 8]), ImageFormat::Gzip);
        assert_eq!(ImageFormat::identify(b"MZ\0\0zimg"), ImageFormat::EfiZboot);
        assert_eq!(ImageFormat::identify(&[]), ImageFormat::Unrecognised);
    }

    #[test]
    fn wrong_architecture_both_ways() {
        let e = expect_arch(&elf(2, 1, 62), ImageArch::Aarch64).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("ELF64 x86-64") && msg.contains("for x86_64"),
            "{msg}"
        );
        let e = expect_arch(&elf(2, 1, 183), ImageArch::X86_64).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("AArch64") && msg.contains("for aarch64"),
            "{msg}"
        );
        assert!(expect_arch(&elf(2, 1, 183), ImageArch::Aarch64).is_ok());
        assert!(expect_arch(b"raw bytes", ImageArch::X86_64).is_ok());
    }
}
