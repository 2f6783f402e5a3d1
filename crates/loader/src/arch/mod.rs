//! The per-architecture loaders (Firecracker's pattern: one module per
//! architecture, selected by `cfg(target_arch)`).
//!
//! The x86 loader is built only on x86_64 hosts, where the crate root
//! re-exports it. The arm64 loader is plain byte copying into guest memory,
//! so it is built on every host: its unit tests then run on x86 CI with the
//! real arm64 payloads, and an aarch64 trapline calls it as
//! `trapline_loader::arch::aarch64`.

pub mod aarch64;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

/// What the crate root re-exports for the host: x86's loader, where its
/// names have always been (an aarch64 trapline calls `arch::aarch64`).
#[cfg(target_arch = "x86_64")]
pub(crate) mod root {
    pub use super::x86_64::{
        cpu, gdt, inspect, layout, linux, load, mbi_flags, place, BootArea, BootSetup, EntryMode,
        GdtInfo, LoadRequest, MemoryMap, MmapEntry, BOOTLOADER_NAME, MMAP_RAM, MMAP_RESERVED,
        MULTIBOOT_BOOTLOADER_MAGIC, MULTIBOOT_HEADER_MAGIC,
    };
}
/// Nothing: the arm64 loader is reached as `arch::aarch64`.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) mod root {}
