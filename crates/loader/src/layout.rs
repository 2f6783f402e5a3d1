//! Where the loader puts things in guest-physical memory.
//!
//! ```text
//! 0x00000 ..0x01000  page 0: NOT touched. kvm-unit-tests copies its real-mode
//!                    AP trampoline here (SIPI vector 0) before main().
//! 0x01000 ..0x02000  GDT (4 descriptors, see crate::gdt)
//! 0x02000 ..0x03000  PML4        \
//! 0x03000 ..0x04000  PDPT         | identity map of 0..4 GiB, 2 MiB pages,
//! 0x04000 ..0x08000  4 PDs       /  CR3 for ELF64 entry
//! 0x08000 ..0x08100  Multiboot info block (MBI), EBX/RBX at entry
//! 0x08100 ..0x08200  Multiboot module list (one entry: the initrd)
//! 0x08200 ..0x08220  boot loader name "trapline"
//! 0x08220 ..0x08230  module command line (empty string)
//! 0x09000 ..0x0a000  Multiboot memory map
//! 0x0a000 ..0x0c000  command line "<image_name> <append>"
//! 0x0c000 ..0x10000  boot stack for ELF64 images (RSP = 0x10000)
//! 0x10000 ..0x9fc00  free RAM (images may load here)
//! 0x9fc00 ..0xa0000  "EBDA", reported reserved like a PC BIOS does
//! 0xa0000 ..0xe0000  legacy VGA/option-ROM hole, absent from the memory map
//! 0xe0000 ..0x100000 reserved for ACPI tables (RSDP scan area; another
//!                    component writes them; the loader never does)
//! 0x100000..         images, then the initrd (page-aligned after the image)
//! ```
//!
//! Everything the loader writes lies in `[LOADER_AREA_START, LOADER_AREA_END)`,
//! below 640 KiB and out of page 0, which is what kvm-unit-tests needs: its
//! page allocator hands out `[edata, mem_upper * 1 KiB)`, re-reads the MBI and
//! memory map during `main`, and overwrites page 0. Images may not overlap the
//! loader area or the firmware area (`FIRMWARE_AREA_*`); the checks in
//! [`crate::load`] enforce it.

/// Size of a page (and the initrd's alignment).
pub const PAGE_SIZE: u64 = 0x1000;

/// First byte the loader writes. Page 0 below it stays plain, untouched RAM.
pub const LOADER_AREA_START: u64 = 0x1000;
/// One past the last byte the loader writes in low memory.
pub const LOADER_AREA_END: u64 = 0x1_0000;

/// The GDT (descriptors in [`crate::gdt::GDT`]).
pub const GDT_ADDR: u64 = 0x1000;

/// PML4 of the boot identity map; CR3 for [`crate::EntryMode::Long64`].
pub const PML4_ADDR: u64 = 0x2000;
/// The one PDPT; its first four entries point at the PDs.
pub const PDPT_ADDR: u64 = 0x3000;
/// First of [`PD_COUNT`] consecutive page directories of 2 MiB pages.
pub const PD_ADDR: u64 = 0x4000;
/// Page directories: one per GiB identity-mapped.
pub const PD_COUNT: u64 = 4;
/// How much the boot identity map covers (0 .. 4 GiB).
pub const IDENTITY_MAP_END: u64 = PD_COUNT << 30;

/// The Multiboot info block; EBX (Multiboot32) or RBX (ELF64) at entry.
pub const MBI_ADDR: u64 = 0x8000;
/// Bytes of the MBI the loader writes (through the framebuffer fields of
/// Multiboot 0.6.96; everything past `boot_loader_name` is zero).
pub const MBI_SIZE: u64 = 116;
/// The Multiboot module list (`mods_addr`).
pub const MODULES_ADDR: u64 = 0x8100;
/// The NUL-terminated boot loader name (`boot_loader_name`).
pub const BOOTLOADER_NAME_ADDR: u64 = 0x8200;
/// The module's command line (an empty string; kvm-unit-tests ignores it).
pub const MODULE_CMDLINE_ADDR: u64 = 0x8220;

/// The Multiboot memory map (`mmap_addr`). QEMU uses 0x9000 too.
pub const MMAP_ADDR: u64 = 0x9000;
/// Bytes available for the memory map.
pub const MMAP_CAPACITY: u64 = 0x1000;
/// Bytes per memory map entry (a 4-byte `size` = 20, then base, length, type).
pub const MMAP_ENTRY_SIZE: u64 = 24;

/// The command line (`cmdline`).
pub const CMDLINE_ADDR: u64 = 0xA000;
/// Bytes available for the command line, NUL included.
pub const CMDLINE_CAPACITY: u64 = 0x2000;

/// Lowest byte of the ELF64 boot stack.
pub const BOOT_STACK_BOTTOM: u64 = 0xC000;
/// Initial RSP for ELF64 images (16-byte aligned, grows down).
pub const BOOT_STACK_TOP: u64 = 0x1_0000;

/// `mem_lower` in KiB: conventional memory up to the EBDA, as on a PC.
pub const MEM_LOWER_KIB: u32 = 639;
/// Start of the EBDA-style reserved block (0x9FC00 = 639 KiB).
pub const EBDA_START: u64 = 0x9_FC00;
/// End of conventional memory (640 KiB).
pub const LOW_RAM_END: u64 = 0xA_0000;
/// Start of the area kept for ACPI tables (the RSDP scan window).
pub const FIRMWARE_AREA_START: u64 = 0xE_0000;
/// End of the ACPI area and start of "upper" memory (1 MiB).
pub const HIGH_MEMORY_START: u64 = 0x10_0000;

// The layout above, checked at compile time so an edit cannot make two areas
// overlap or escape the loader area.
const _: () = {
    assert!(GDT_ADDR >= LOADER_AREA_START && GDT_ADDR + 4 * 8 <= PML4_ADDR);
    assert!(PML4_ADDR + PAGE_SIZE == PDPT_ADDR);
    assert!(PDPT_ADDR + PAGE_SIZE == PD_ADDR);
    assert!(PD_ADDR + PD_COUNT * PAGE_SIZE <= MBI_ADDR);
    assert!(MBI_ADDR + MBI_SIZE <= MODULES_ADDR);
    assert!(MODULES_ADDR + 16 <= BOOTLOADER_NAME_ADDR);
    assert!(BOOTLOADER_NAME_ADDR + 9 <= MODULE_CMDLINE_ADDR);
    assert!(MODULE_CMDLINE_ADDR < MMAP_ADDR);
    assert!(MMAP_ADDR + MMAP_CAPACITY <= CMDLINE_ADDR);
    assert!(CMDLINE_ADDR + CMDLINE_CAPACITY <= BOOT_STACK_BOTTOM);
    assert!(BOOT_STACK_BOTTOM < BOOT_STACK_TOP && BOOT_STACK_TOP <= LOADER_AREA_END);
    assert!(BOOT_STACK_TOP & 15 == 0);
    assert!(LOADER_AREA_END <= EBDA_START);
    assert!((PML4_ADDR | PDPT_ADDR | PD_ADDR) & (PAGE_SIZE - 1) == 0);
    assert!(MEM_LOWER_KIB as u64 * 1024 == EBDA_START);
};
