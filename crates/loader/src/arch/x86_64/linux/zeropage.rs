//! The bzImage start of day: `boot_params` (the "zero page") and what it
//! points at.
//!
//! Entry: the kernel's 32-bit entry (`code32_start`, the protected-mode
//! kernel's first byte) in flat 32-bit protected mode, paging off, ESI =
//! `boot_params`. That is the vCPU state trapline already starts Multiboot
//! and PVH guests in, so it needs no new mode and works for every protocol
//! version trapline accepts; the 64-bit entry (load address + 0x200) would
//! need protocol 2.12+ and an identity map for nothing the kernel's own
//! startup_32 does not do itself.
//!
//! Placement reuses the loader's boot area ([`BootArea`]): the GDT where
//! every image has it, `boot_params` (4 KiB) in the Multiboot memory map's
//! 4 KiB slot (the E820 table lives inside `boot_params`, so that slot is
//! free), the command line in its usual slot.

use std::ops::Range;

use linux_loader::loader::bootparam::{boot_e820_entry, boot_params, CAN_USE_HEAP};
use vm_memory::{ByteValued, GuestMemoryMmap};

use super::bzimage::{BzImageHeader, SETUP_HEADER_OFFSET};
use crate::arch::x86_64::bootinfo::MemoryMap;
use crate::arch::x86_64::layout::*;
use crate::arch::x86_64::place::BootArea;
use crate::error::LoadError;

/// `type_of_loader` for a boot loader without an assigned id.
pub const LOADER_TYPE_UNDEFINED: u8 = 0xFF;
/// E820 entries `boot_params` holds.
pub const E820_MAX_ENTRIES: usize = 128;
/// `heap_end_ptr` as QEMU sets it: the end of the setup heap, relative to
/// the real-mode code's segment, minus 0x200. Only the real-mode setup code
/// reads it, and trapline never runs that code; it is set so a kernel that
/// looks at CAN_USE_HEAP finds the pair consistent.
pub const HEAP_END_PTR: u16 = 0xFE00;
/// Protocol 2.14 added `acpi_rsdp_addr` (in `boot_params`, offset 0x70).
const RSDP_PROTOCOL: u16 = 0x020E;

const _: () = assert!(std::mem::size_of::<boot_params>() as u64 == MMAP_CAPACITY);

/// Where `boot_params` goes (ESI at entry).
pub const fn boot_params_addr(area: BootArea) -> u64 {
    area.mmap()
}

/// What varies per bzImage boot.
pub struct ZeroPage<'a> {
    /// Where the boot area is.
    pub area: BootArea,
    /// The whole image file (its setup header is copied).
    pub image: &'a [u8],
    /// What [`super::bzimage::inspect`] found.
    pub header: &'a BzImageHeader,
    /// Where the protected-mode kernel was loaded.
    pub load_addr: u64,
    /// The command line, without its NUL.
    pub cmdline: &'a [u8],
    /// Where the initrd was put.
    pub initrd: Option<Range<u64>>,
    /// RAM, reserved low areas and device ranges: the same map a PVH or
    /// Multiboot guest gets.
    pub map: &'a MemoryMap,
    /// The RSDP's address (0: the kernel scans for it).
    pub rsdp: u64,
}

/// The `boot_params` for a boot. The caller has checked that the map has at
/// most [`E820_MAX_ENTRIES`] entries and that every address here is below
/// 4 GiB.
pub fn boot_params(z: &ZeroPage<'_>) -> boot_params {
    let mut p = boot_params::default();
    // The image's own header, as far as it says it goes (bytes past that
    // are setup code, not header fields, and stay zero).
    let (from, to) = (SETUP_HEADER_OFFSET as usize, z.header.header_end as usize);
    if let Some(src) = z.image.get(from..to) {
        p.as_mut_slice()[from..to].copy_from_slice(src);
    }
    let h = &mut p.hdr;
    h.type_of_loader = LOADER_TYPE_UNDEFINED;
    h.loadflags |= CAN_USE_HEAP;
    h.heap_end_ptr = HEAP_END_PTR;
    h.code32_start = z.load_addr as u32;
    h.cmd_line_ptr = z.area.cmdline() as u32;
    let (image, size) = z
        .initrd
        .as_ref()
        .map_or((0, 0), |r| (r.start as u32, (r.end - r.start) as u32));
    h.ramdisk_image = image;
    h.ramdisk_size = size;
    // No setup_data list: the image's default is 0, but a pointer the
    // kernel would follow must be ours, not whatever the file holds.
    h.setup_data = 0;
    if z.header.version >= RSDP_PROTOCOL {
        p.acpi_rsdp_addr = z.rsdp;
    }
    for (slot, e) in p.e820_table.iter_mut().zip(&z.map.entries) {
        *slot = boot_e820_entry {
            addr: e.base,
            size: e.len,
            // Multiboot's memory types are E820's.
            r#type: e.kind,
        };
    }
    p.e820_entries = z.map.entries.len().min(E820_MAX_ENTRIES) as u8;
    p
}

/// Writes the boot area for a bzImage boot at `z.area.base()` (`fresh`:
/// guest memory is still zero). The caller has checked the command line and
/// the map fit.
pub fn write_boot_area(
    mem: &GuestMemoryMmap,
    fresh: bool,
    z: &ZeroPage<'_>,
) -> Result<(), LoadError> {
    let mut img = z.area.image(mem, fresh);
    img.put(boot_params_addr(z.area), boot_params(z).as_slice());
    img.put(z.area.cmdline(), z.cmdline); // NUL: the area is zeroed
    img.finish()
}
