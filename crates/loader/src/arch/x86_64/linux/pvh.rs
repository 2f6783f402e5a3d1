//! The PVH start of day: `hvm_start_info` and what it points at.
//!
//! Placement reuses the loader's boot area ([`BootArea`], wherever
//! [`crate::place`] put it): the GDT where every image has it, the start
//! info in the Multiboot info block's slot, the module list in the Multiboot
//! module list's slot, the memory map in the Multiboot memory map's slot
//! (both entry formats are 24 bytes), and the command line in its usual
//! slot.

use linux_loader::loader::elf::start_info::{
    hvm_memmap_table_entry, hvm_modlist_entry, hvm_start_info,
};
use vm_memory::{ByteValued, GuestMemoryMmap};

use crate::arch::x86_64::bootinfo::MemoryMap;
use crate::arch::x86_64::layout::*;
use crate::arch::x86_64::place::BootArea;
use crate::error::LoadError;

/// `hvm_start_info.magic`: "xEn3" with the high bit of each byte cleared.
pub const XEN_HVM_START_MAGIC: u32 = 0x336e_c578;
/// Version 1 of the structure carries the memory map.
pub const START_INFO_VERSION: u32 = 1;

/// Where the `hvm_start_info` goes (EBX at entry).
pub const fn start_info_addr(area: BootArea) -> u64 {
    area.mbi()
}

/// Where the module list goes (one entry: the initrd).
pub const fn modlist_addr(area: BootArea) -> u64 {
    area.modules()
}

/// Where the memory map goes.
pub const fn memmap_addr(area: BootArea) -> u64 {
    area.mmap()
}

const _: () = {
    assert!(std::mem::size_of::<hvm_start_info>() as u64 <= MODULES_OFFSET - MBI_OFFSET);
    assert!(
        std::mem::size_of::<hvm_modlist_entry>() as u64 <= BOOTLOADER_NAME_OFFSET - MODULES_OFFSET
    );
    assert!(std::mem::size_of::<hvm_memmap_table_entry>() as u64 == MMAP_ENTRY_SIZE);
};

/// What varies per PVH boot.
pub struct PvhArea<'a> {
    /// Where the boot area is.
    pub area: BootArea,
    /// The command line, without its NUL.
    pub cmdline: &'a [u8],
    /// Where the initrd was put.
    pub initrd: Option<std::ops::Range<u64>>,
    /// RAM, reserved low areas and device ranges.
    pub map: &'a MemoryMap,
    /// The RSDP's address (0: the kernel scans for it).
    pub rsdp: u64,
}

/// The `hvm_start_info` for a boot.
pub fn start_info(a: &PvhArea<'_>) -> hvm_start_info {
    hvm_start_info {
        magic: XEN_HVM_START_MAGIC,
        version: START_INFO_VERSION,
        flags: 0,
        nr_modules: u32::from(a.initrd.is_some()),
        modlist_paddr: if a.initrd.is_some() {
            modlist_addr(a.area)
        } else {
            0
        },
        cmdline_paddr: a.area.cmdline(),
        rsdp_paddr: a.rsdp,
        memmap_paddr: memmap_addr(a.area),
        memmap_entries: a.map.entries.len() as u32,
        reserved: 0,
    }
}

/// The memory map in the PVH format (types are E820's, as Multiboot's are).
pub fn memmap(map: &MemoryMap) -> Vec<hvm_memmap_table_entry> {
    map.entries
        .iter()
        .map(|e| hvm_memmap_table_entry {
            addr: e.base,
            size: e.len,
            type_: e.kind,
            reserved: 0,
        })
        .collect()
}

/// Writes the boot area for a PVH boot at `a.area.base()` (`fresh`: guest
/// memory is still zero). The caller has checked the command line and the
/// map fit their slots.
pub fn write_boot_area(
    mem: &GuestMemoryMmap,
    fresh: bool,
    a: &PvhArea<'_>,
) -> Result<(), LoadError> {
    let mut img = a.area.image(mem, fresh);
    img.put(start_info_addr(a.area), start_info(a).as_slice());
    if let Some(initrd) = &a.initrd {
        let m = hvm_modlist_entry {
            paddr: initrd.start,
            size: initrd.end - initrd.start,
            cmdline_paddr: 0,
            reserved: 0,
        };
        img.put(modlist_addr(a.area), m.as_slice());
    }
    for (i, e) in memmap(a.map).iter().enumerate() {
        img.put(
            memmap_addr(a.area) + i as u64 * MMAP_ENTRY_SIZE,
            e.as_slice(),
        );
    }
    img.put(a.area.cmdline(), a.cmdline); // NUL: the area is zeroed
    img.finish()
}
