//! Where the loader puts things in guest-physical memory.
//!
//! trapline's own boot structures live together in one *boot area* of
//! [`BOOT_AREA_SIZE`] bytes. Its default place is `0x1000..0x10000`; when the
//! image (or the initrd, or a device range) claims any of it, the area moves
//! to free RAM instead (see [`crate::place`]), so an image linked anywhere in
//! RAM outside the PC's firmware area loads, as under QEMU's `-kernel`.
//!
//! The area's inside, as offsets from its base (default addresses in
//! brackets):
//!
//! ```text
//! +0x0000..0x1000  GDT (4 descriptors, see crate::gdt)           [0x1000]
//! +0x1000..0x2000  PML4        \                                  [0x2000]
//! +0x2000..0x3000  PDPT         | identity map of 0..4 GiB,      [0x3000]
//! +0x3000..0x7000  4 PDs       /  2 MiB pages, CR3 for ELF64     [0x4000]
//! +0x7000..0x7100  Multiboot info block (MBI), EBX/RBX at entry  [0x8000]
//! +0x7100..0x7200  Multiboot module list (one entry: the initrd) [0x8100]
//! +0x7200..0x7220  boot loader name "trapline"                   [0x8200]
//! +0x7220..0x7230  module command line (empty string)            [0x8220]
//! +0x8000..0x9000  Multiboot memory map (a bzImage's boot_params) [0x9000]
//! +0x9000..0xB000  command line "<image_name> <append>"          [0xA000]
//! +0xB000..0xF000  boot stack (ESP/RSP at entry = its top)       [0xC000]
//! ```
//!
//! The rest of the guest-physical map around it:
//!
//! ```text
//! 0x00000 ..0x01000  page 0: NOT touched by the loader. kvm-unit-tests copies
//!                    its real-mode AP trampoline here (SIPI vector 0).
//! 0x01000 ..0x10000  the boot area's default place
//! 0x10000 ..0x9fc00  free RAM (images may load here, and anywhere below it
//!                    from 0x1000: the boot area then moves)
//! 0x9fc00 ..0xa0000  "EBDA", reported reserved like a PC BIOS does
//! 0xa0000 ..0xe0000  legacy VGA/option-ROM hole, absent from the memory map
//! 0xe0000 ..0x100000 reserved for ACPI tables (RSDP scan area; another
//!                    component writes them; the loader never does)
//! 0x100000..         images, then the initrd (page-aligned after the image)
//! ```
//!
//! At its default place the area is below 640 KiB and out of page 0, which
//! is what kvm-unit-tests needs: its page allocator hands out
//! `[edata, mem_upper * 1 KiB)`, re-reads the MBI and memory map during
//! `main`, and overwrites page 0. Images may not overlap the firmware area
//! (`EBDA_START..HIGH_MEMORY_START`); the checks in [`crate::load`] enforce
//! it.

/// Size of a page (and the initrd's and the boot area's alignment).
pub const PAGE_SIZE: u64 = 0x1000;

/// The boot area's default base. Page 0 below it stays plain, untouched RAM.
pub const LOADER_AREA_START: u64 = 0x1000;
/// One past the boot area's last byte at its default place.
pub const LOADER_AREA_END: u64 = 0x1_0000;
/// Bytes of the boot area, wherever it is (a whole number of pages).
pub const BOOT_AREA_SIZE: u64 = LOADER_AREA_END - LOADER_AREA_START;

/// Offset of the GDT (descriptors in [`crate::gdt::GDT`]).
pub const GDT_OFFSET: u64 = 0x0;
/// Offset of the PML4 of the boot identity map (CR3 for ELF64 entry).
pub const PML4_OFFSET: u64 = 0x1000;
/// Offset of the one PDPT; its first four entries point at the PDs.
pub const PDPT_OFFSET: u64 = 0x2000;
/// Offset of the first of [`PD_COUNT`] consecutive page directories.
pub const PD_OFFSET: u64 = 0x3000;
/// Offset of the Multiboot info block; EBX (Multiboot32) or RBX (ELF64).
pub const MBI_OFFSET: u64 = 0x7000;
/// Offset of the Multiboot module list (`mods_addr`).
pub const MODULES_OFFSET: u64 = 0x7100;
/// Offset of the NUL-terminated boot loader name (`boot_loader_name`).
pub const BOOTLOADER_NAME_OFFSET: u64 = 0x7200;
/// Offset of the module's command line (an empty string).
pub const MODULE_CMDLINE_OFFSET: u64 = 0x7220;
/// Offset of the Multiboot memory map (`mmap_addr`).
pub const MMAP_OFFSET: u64 = 0x8000;
/// Offset of the command line (`cmdline`).
pub const CMDLINE_OFFSET: u64 = 0x9000;
/// Offset of the lowest byte of the boot stack.
pub const BOOT_STACK_OFFSET: u64 = 0xB000;
/// Offset of the initial stack pointer (16-byte aligned, grows down).
pub const BOOT_STACK_TOP_OFFSET: u64 = BOOT_AREA_SIZE;

/// Page directories: one per GiB identity-mapped.
pub const PD_COUNT: u64 = 4;
/// How much the boot identity map covers (0 .. 4 GiB).
pub const IDENTITY_MAP_END: u64 = PD_COUNT << 30;
/// Bytes of the MBI the loader writes (through the framebuffer fields of
/// Multiboot 0.6.96; everything past `boot_loader_name` is zero).
pub const MBI_SIZE: u64 = 116;
/// Bytes available for the memory map.
pub const MMAP_CAPACITY: u64 = 0x1000;
/// Bytes per memory map entry (a 4-byte `size` = 20, then base, length, type).
pub const MMAP_ENTRY_SIZE: u64 = 24;
/// Bytes available for the command line, NUL included.
pub const CMDLINE_CAPACITY: u64 = 0x2000;

/// The GDT at the boot area's default place.
pub const GDT_ADDR: u64 = LOADER_AREA_START + GDT_OFFSET;
/// The PML4 at the default place.
pub const PML4_ADDR: u64 = LOADER_AREA_START + PML4_OFFSET;
/// The PDPT at the default place.
pub const PDPT_ADDR: u64 = LOADER_AREA_START + PDPT_OFFSET;
/// The first PD at the default place.
pub const PD_ADDR: u64 = LOADER_AREA_START + PD_OFFSET;
/// The MBI at the default place.
pub const MBI_ADDR: u64 = LOADER_AREA_START + MBI_OFFSET;
/// The module list at the default place.
pub const MODULES_ADDR: u64 = LOADER_AREA_START + MODULES_OFFSET;
/// The boot loader name at the default place.
pub const BOOTLOADER_NAME_ADDR: u64 = LOADER_AREA_START + BOOTLOADER_NAME_OFFSET;
/// The module command line at the default place.
pub const MODULE_CMDLINE_ADDR: u64 = LOADER_AREA_START + MODULE_CMDLINE_OFFSET;
/// The memory map at the default place (QEMU uses 0x9000 too).
pub const MMAP_ADDR: u64 = LOADER_AREA_START + MMAP_OFFSET;
/// The command line at the default place.
pub const CMDLINE_ADDR: u64 = LOADER_AREA_START + CMDLINE_OFFSET;
/// Lowest byte of the boot stack at the default place.
pub const BOOT_STACK_BOTTOM: u64 = LOADER_AREA_START + BOOT_STACK_OFFSET;
/// Initial ESP/RSP at the default place.
pub const BOOT_STACK_TOP: u64 = LOADER_AREA_START + BOOT_STACK_TOP_OFFSET;

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

// The layout above, checked at compile time so an edit cannot make two
// structures overlap or escape the area.
const _: () = {
    assert!(GDT_OFFSET + 4 * 8 <= PML4_OFFSET);
    assert!(PML4_OFFSET + PAGE_SIZE == PDPT_OFFSET);
    assert!(PDPT_OFFSET + PAGE_SIZE == PD_OFFSET);
    assert!(PD_OFFSET + PD_COUNT * PAGE_SIZE <= MBI_OFFSET);
    assert!(MBI_OFFSET + MBI_SIZE <= MODULES_OFFSET);
    assert!(MODULES_OFFSET + 16 <= BOOTLOADER_NAME_OFFSET);
    assert!(BOOTLOADER_NAME_OFFSET + 9 <= MODULE_CMDLINE_OFFSET);
    assert!(MODULE_CMDLINE_OFFSET < MMAP_OFFSET);
    assert!(MMAP_OFFSET + MMAP_CAPACITY <= CMDLINE_OFFSET);
    assert!(CMDLINE_OFFSET + CMDLINE_CAPACITY <= BOOT_STACK_OFFSET);
    assert!(BOOT_STACK_OFFSET < BOOT_STACK_TOP_OFFSET);
    assert!(BOOT_STACK_TOP_OFFSET <= BOOT_AREA_SIZE);
    assert!(BOOT_STACK_TOP_OFFSET & 15 == 0);
    assert!(BOOT_AREA_SIZE & (PAGE_SIZE - 1) == 0);
    assert!(LOADER_AREA_START & (PAGE_SIZE - 1) == 0);
    assert!(LOADER_AREA_END <= EBDA_START);
    assert!((PML4_OFFSET | PDPT_OFFSET | PD_OFFSET) & (PAGE_SIZE - 1) == 0);
    assert!(MEM_LOWER_KIB as u64 * 1024 == EBDA_START);
};
