//! Loading an arm64 image into `virt`'s RAM: ELF64 AArch64 (trapline's own
//! payloads: PT_LOAD segments at their physical addresses, entered at
//! `e_entry`) or a raw image (a kvm-unit-tests `.flat`: loaded and entered
//! at `VIRT_RAW_IMAGE_BASE`, 64 KiB aligned). An x86 image is refused with
//! a message saying so.
//!
//! TEMPORARY: this is the machine's own minimal loader until
//! `trapline-loader` gains its arm64 loaders (being written beside this);
//! then this module becomes a call to it.

use trapline_abi as abi;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

/// Where an image landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadedImage {
    /// The entry point (a GPA: the MMU is off at entry).
    pub entry: u64,
    /// First byte loaded.
    pub start: u64,
    /// One past the last byte the image occupies (its BSS included).
    pub end: u64,
}

const EM_AARCH64: u16 = 183;
const EM_386: u16 = 3;
const EM_X86_64: u16 = 62;
const PT_LOAD: u32 = 1;

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// Why `image` is an x86 image, if it is one.
fn x86_kind(image: &[u8]) -> Option<&'static str> {
    if image.starts_with(b"\x7fELF") {
        return match u16_at(image, 18) {
            Some(EM_386) => Some("an ELF32 x86 (i386) image"),
            Some(EM_X86_64) => Some("an ELF64 x86_64 image"),
            _ => None,
        };
    }
    if image.get(0x202..0x206) == Some(b"HdrS") {
        return Some("an x86 bzImage");
    }
    // A Multiboot v1 header: the magic, 4-byte aligned, in the first 8 KiB.
    let window = &image[..image.len().min(8192)];
    (window
        .chunks_exact(4)
        .any(|w| w == 0x1bad_b002u32.to_le_bytes()))
    .then_some("a Multiboot (x86) image")
}

/// Load `image` into `memory` (RAM from `VIRT_RAM_BASE`).
pub fn load(memory: &GuestMemoryMmap, image: &[u8], ram_end: u64) -> Result<LoadedImage, String> {
    if let Some(kind) = x86_kind(image) {
        return Err(format!(
            "this is {kind}; trapline on arm64 runs ELF64 AArch64 images and raw (.flat) arm64 images"
        ));
    }
    if image.starts_with(b"\x7fELF") {
        load_elf(memory, image, ram_end)
    } else {
        load_raw(memory, image, ram_end)
    }
}

fn load_raw(memory: &GuestMemoryMmap, image: &[u8], ram_end: u64) -> Result<LoadedImage, String> {
    let start = abi::VIRT_RAW_IMAGE_BASE;
    let end = start + image.len() as u64;
    if image.is_empty() || end > ram_end {
        return Err(format!(
            "a raw image of {} bytes does not fit in RAM at {start:#x} (RAM ends at {ram_end:#x}): use a larger --mem",
            image.len()
        ));
    }
    memory
        .write_slice(image, GuestAddress(start))
        .map_err(|e| format!("writing the image: {e}"))?;
    Ok(LoadedImage {
        entry: start,
        start,
        end,
    })
}

fn load_elf(memory: &GuestMemoryMmap, image: &[u8], ram_end: u64) -> Result<LoadedImage, String> {
    let bad = |what: &str| format!("not a loadable ELF64 AArch64 image: {what}");
    if image.get(4) != Some(&2) || image.get(5) != Some(&1) {
        return Err(bad("not a little-endian ELF64 file"));
    }
    if u16_at(image, 18) != Some(EM_AARCH64) {
        return Err(bad("its machine is not AArch64"));
    }
    let entry = u64_at(image, 24).ok_or_else(|| bad("truncated header"))?;
    let phoff = u64_at(image, 32).ok_or_else(|| bad("truncated header"))? as usize;
    let phentsize = u16_at(image, 54).ok_or_else(|| bad("truncated header"))? as usize;
    let phnum = u16_at(image, 56).ok_or_else(|| bad("truncated header"))? as usize;
    let (mut start, mut end) = (u64::MAX, 0u64);
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        let p_type = u32_at(image, ph).ok_or_else(|| bad("truncated program header"))?;
        if p_type != PT_LOAD {
            continue;
        }
        let field = |o| u64_at(image, ph + o).ok_or_else(|| bad("truncated program header"));
        let (offset, paddr, filesz, memsz) = (field(8)?, field(24)?, field(32)?, field(40)?);
        let seg_end = paddr
            .checked_add(memsz)
            .ok_or_else(|| bad("segment wraps"))?;
        if paddr < abi::VIRT_RAM_BASE || seg_end > ram_end || filesz > memsz {
            return Err(format!(
                "segment {paddr:#x}..{seg_end:#x} is not inside RAM ({:#x}..{ram_end:#x}): use a larger --mem or relink",
                abi::VIRT_RAM_BASE
            ));
        }
        let bytes = usize::try_from(offset)
            .ok()
            .and_then(|o| image.get(o..o.checked_add(filesz as usize)?))
            .ok_or_else(|| bad("segment runs past the end of the file"))?;
        memory
            .write_slice(bytes, GuestAddress(paddr))
            .map_err(|e| format!("writing a segment: {e}"))?;
        // The rest (BSS) is fresh, zeroed guest memory.
        start = start.min(paddr);
        end = end.max(seg_end);
    }
    if end == 0 {
        return Err(bad("no PT_LOAD segment"));
    }
    if entry < start || entry >= end {
        return Err(bad("the entry point is outside the loaded segments"));
    }
    Ok(LoadedImage { entry, start, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ram() -> GuestMemoryMmap {
        GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(abi::VIRT_RAM_BASE), 16 << 20)]).unwrap()
    }
    const END: u64 = abi::VIRT_RAM_BASE + (16 << 20);

    #[test]
    fn the_builtin_payloads_load_at_the_payload_base() {
        let m = ram();
        for (name, bytes) in trapline_guest::PAYLOADS {
            let l = load(&m, bytes, END).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(l.start, abi::VIRT_PAYLOAD_BASE, "{name}");
            assert!(l.entry >= l.start && l.entry < l.end, "{name}");
        }
    }

    #[test]
    fn a_raw_image_goes_to_the_raw_base() {
        let m = ram();
        let l = load(&m, &[0x1f, 0x20, 0x03, 0xd5], END).unwrap();
        assert_eq!(
            (l.entry, l.end),
            (abi::VIRT_RAW_IMAGE_BASE, abi::VIRT_RAW_IMAGE_BASE + 4)
        );
        assert_eq!(
            m.read_obj::<u32>(GuestAddress(l.entry)).unwrap(),
            0xd503_201f
        );
    }

    #[test]
    fn x86_images_are_refused_by_name() {
        let m = ram();
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[18] = 62;
        assert!(load(&m, &elf, END).unwrap_err().contains("x86_64"));
        let mut mb = vec![0u8; 64];
        mb[8..12].copy_from_slice(&0x1bad_b002u32.to_le_bytes());
        assert!(load(&m, &mb, END).unwrap_err().contains("Multiboot"));
        let mut bz = vec![0u8; 0x300];
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        assert!(load(&m, &bz, END).unwrap_err().contains("bzImage"));
    }
}
