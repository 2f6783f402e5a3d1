//! Booting Linux: the PVH boot ABI (an ELF `vmlinux` with a Xen
//! `XEN_ELFNOTE_PHYS32_ENTRY` note, see [`pvh`]).
//!
//! Linux gets its command line as given (no argv\[0\] in front, unlike a
//! Multiboot test), the initrd as its one boot module, the same memory map
//! a Multiboot guest gets (RAM, the reserved low areas, every device range)
//! and the RSDP's address, so it needs no BIOS scan.

pub mod pvh;
