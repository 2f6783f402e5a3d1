//! Recognising and validating a Linux bzImage (the x86 boot protocol's
//! setup header, Documentation/arch/x86/boot.rst).
//!
//! A bzImage is `(setup_sects + 1) * 512` bytes of real-mode setup code
//! (with the setup header at 0x1F1) followed by the protected-mode kernel:
//! a self-decompressing blob whose 32-bit entry is its first byte. trapline
//! skips the real-mode part, as every VMM does, and loads only the
//! protected-mode kernel.
//!
//! Like the ELF reader (`elf.rs`), this reads untrusted bytes: every read
//! goes through the crate's bounds-checked readers (`bytes.rs`) and every
//! sum of header numbers is checked, so any file gives an answer and none
//! a panic. Nothing here touches guest memory.

use crate::arch::x86_64::layout::{HIGH_MEMORY_START, IDENTITY_MAP_END};
use crate::bytes::{u16_at, u32_at, u64_at, u8_at};
use crate::error::LoadError;
pub use crate::image::BzImageHeader;
use crate::image::{ImageInfo, ImageKind, LoadSegment};

/// File offset of the setup header (`setup_sects`, its first field).
pub const SETUP_HEADER_OFFSET: u64 = 0x1F1;
/// One past the last header byte `boot_params` has room for (the
/// `kernel_info_offset` field of protocol 2.15 ends here).
pub const SETUP_HEADER_MAX_END: u64 = 0x26C;
/// The oldest boot protocol trapline loads: 2.06 is the first to state the
/// command-line limit (`cmdline_size`) rather than leaving the loader to guess.
pub const MIN_PROTOCOL: u16 = 0x0206;
/// `loadflags` bit 0: the protected-mode kernel loads at 1 MiB (a bzImage,
/// not a zImage).
pub const LOADED_HIGH: u8 = 1 << 0;

/// True when `image` carries the setup header's two signatures: boot_flag
/// 0xAA55 at 0x1FE and "HdrS" at 0x202.
pub fn is_bzimage(image: &[u8]) -> bool {
    image.get(0x1FE..0x200) == Some(&[0x55, 0xAA][..])
        && image.get(0x202..0x206) == Some(&b"HdrS"[..])
}

fn bad(reason: impl Into<String>) -> LoadError {
    LoadError::BadBzImage {
        reason: reason.into(),
    }
}

/// Validates a bzImage ([`is_bzimage`] must hold) and describes it as one
/// loaded segment: the protected-mode kernel's file bytes at its load
/// address, with `memsz` stretched over the memory it decompresses into,
/// so the initrd and the boot area are placed clear of it.
///
/// Where it goes: a relocatable kernel is loaded at `pref_address` (its
/// decompressor would move there anyway: it never runs below that
/// address), anything else at 1 MiB, the protocol's default `code32_start`;
/// a non-relocatable kernel still moves itself to `pref_address`, so the
/// span runs from 1 MiB to the end of that. A kernel that does not fit
/// guest RAM there cannot boot in it at all, and [`crate::load`] says so.
pub fn inspect(image: &[u8]) -> Result<ImageInfo, LoadError> {
    let fields = SetupHeader::new(image)?;
    let version = fields.version;
    let loadflags = fields.u8(0x211)?;
    if loadflags & LOADED_HIGH == 0 {
        return Err(bad(
            "a zImage (LOADED_HIGH clear in loadflags: its kernel loads low at 0x10000), which trapline does not load: build a bzImage (make bzImage) or boot the vmlinux through its PVH entry",
        ));
    }
    let declared_end = 0x202 + u64::from(fields.u8(0x201)?);
    let header_end = declared_end
        .clamp(fields.end, SETUP_HEADER_MAX_END)
        .min(fields.len);
    let (setup_size, filesz) = protected_mode_kernel(&fields)?;

    let cmdline_size = fields.u32(0x238)?;
    // Protocol 2.03+, so always there.
    let initrd_addr_max = fields.u32(0x22C)?;
    let relocatable = fields.u8(0x234)? != 0;
    let (pref_address, init_size) = if version >= 0x020A {
        (fields.u64(0x258)?, fields.u32(0x260)?)
    } else {
        // Older kernels do not say; they decompress from 1 MiB on.
        (0, 0)
    };
    let (load, end) = placement(filesz, relocatable, pref_address, init_size)?;

    Ok(ImageInfo {
        kind: ImageKind::BzImage,
        // The 32-bit entry (code32_start) is the protected-mode kernel's
        // first byte, wherever it was loaded.
        entry: load,
        segments: vec![LoadSegment {
            index: 0,
            paddr: load,
            offset: setup_size,
            filesz,
            memsz: end - load,
        }],
        multiboot: None,
        bzimage: Some(BzImageHeader {
            version,
            setup_size,
            header_end,
            cmdline_size,
            initrd_addr_max,
            relocatable,
            pref_address,
            init_size,
        }),
    })
}

/// The setup header's fields as far as the file's boot protocol defines
/// them, each read bounds-checked (a file too short for them is refused
/// up front).
struct SetupHeader<'a> {
    image: &'a [u8],
    len: u64,
    /// The boot protocol's version (0x0206 is 2.06).
    version: u16,
    /// One past the last field this version defines.
    end: u64,
}

impl<'a> SetupHeader<'a> {
    /// Refuses a protocol older than [`MIN_PROTOCOL`] and a file that
    /// ends inside its version's fields.
    fn new(image: &'a [u8]) -> Result<Self, LoadError> {
        let len = image.len() as u64;
        let version = u16_at(image, 0x206).ok_or(LoadError::Truncated {
            what: "bzImage setup header",
            need: 0x208,
            len,
        })?;
        if version < MIN_PROTOCOL {
            return Err(LoadError::BzImageTooOld {
                major: (version >> 8) as u8,
                minor: version as u8,
            });
        }
        // The fields this protocol version defines must all be in the file.
        let end: u64 = if version >= 0x020A { 0x264 } else { 0x23C };
        let header = SetupHeader {
            image,
            len,
            version,
            end,
        };
        if len < end {
            return Err(header.truncated());
        }
        Ok(header)
    }

    fn truncated(&self) -> LoadError {
        self.cut_off("bzImage setup header", self.end)
    }

    fn cut_off(&self, what: &'static str, need: u64) -> LoadError {
        LoadError::Truncated {
            what,
            need,
            len: self.len,
        }
    }

    fn u8(&self, off: u64) -> Result<u8, LoadError> {
        u8_at(self.image, off).ok_or_else(|| self.truncated())
    }

    fn u32(&self, off: u64) -> Result<u32, LoadError> {
        u32_at(self.image, off).ok_or_else(|| self.truncated())
    }

    fn u64(&self, off: u64) -> Result<u64, LoadError> {
        u64_at(self.image, off).ok_or_else(|| self.truncated())
    }
}

/// The real-mode setup code's size and the protected-mode kernel's bytes
/// after it; a file that stops short of either is refused.
fn protected_mode_kernel(fields: &SetupHeader<'_>) -> Result<(u64, u64), LoadError> {
    let setup_sects = match fields.u8(0x1F1)? {
        // The protocol's rule: 0 means 4.
        0 => 4,
        n => u64::from(n),
    };
    let setup_size = (setup_sects + 1) * 512;
    if fields.len <= setup_size {
        return Err(fields.cut_off(
            "bzImage protected-mode kernel (after (setup_sects + 1) * 512 bytes of setup code)",
            setup_size + 1,
        ));
    }
    let filesz = fields.len - setup_size;
    // syssize: the protected-mode kernel's size in 16-byte units (the
    // kernel's build tool pads the file to exactly that). Less in the file
    // is a cut-off download, which would otherwise boot into garbage.
    let syssize = u64::from(fields.u32(0x1F4)?) * 16;
    if filesz < syssize {
        return Err(fields.cut_off(
            "bzImage protected-mode kernel (syssize * 16 bytes after the setup code)",
            setup_size + syssize,
        ));
    }
    Ok((setup_size, filesz))
}

/// Where the protected-mode kernel loads and where the memory it
/// decompresses into ends (see [`inspect`]); refused when that passes
/// 4 GiB.
fn placement(
    filesz: u64,
    relocatable: bool,
    pref_address: u64,
    init_size: u32,
) -> Result<(u64, u64), LoadError> {
    let need = filesz.max(u64::from(init_size));
    let usable_pref = pref_address >= HIGH_MEMORY_START
        && pref_address
            .checked_add(need)
            .is_some_and(|end| end <= IDENTITY_MAP_END);
    let runtime = if usable_pref {
        pref_address
    } else {
        HIGH_MEMORY_START
    };
    let load = if relocatable {
        runtime
    } else {
        HIGH_MEMORY_START
    };
    let end = load
        .checked_add(filesz)
        .zip(runtime.checked_add(u64::from(init_size)))
        .map(|(a, b)| a.max(b))
        .filter(|&end| end <= IDENTITY_MAP_END)
        .ok_or_else(|| {
            bad(format!(
                "its {filesz}-byte protected-mode kernel loaded at {load:#x}, or the {init_size} bytes it decompresses into (init_size) at {runtime:#x}, would end above 4 GiB, where its 32-bit entry cannot reach"
            ))
        })?;
    Ok((load, end))
}
