//! Booting Linux: the PVH boot ABI (an ELF `vmlinux` with a Xen
//! `XEN_ELFNOTE_PHYS32_ENTRY` note, see [`pvh`]) and the bzImage boot
//! protocol (the setup header, see [`bzimage`]; `boot_params`, see
//! [`zeropage`]).
//!
//! Linux gets its command line as given (no argv\[0\] in front, unlike a
//! Multiboot test), the initrd (PVH: its one boot module; bzImage:
//! `ramdisk_image`), the same memory map a Multiboot guest gets (RAM, the
//! reserved low areas, every device range; the E820 table of a bzImage) and
//! the RSDP's address, so it needs no BIOS scan.

pub mod bzimage;
pub mod pvh;
pub mod zeropage;
