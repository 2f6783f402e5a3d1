//! trapline's guest image loader.
//!
//! Neutral parts, built on every host: ELF parsing (by machine), the image
//! description ([`ImageInfo`], [`LoadSegment`]), the bounds-checked byte
//! readers, RAM arithmetic, the errors ([`LoadError`]) and [`detect`]:
//! which architecture an image is for, from its magic numbers, so an image
//! for the other architecture is refused by name.
//!
//! Per architecture, under [`arch`]:
//!
//! * `arch::x86_64` (x86_64 hosts only: it uses linux-loader's x86-only
//!   items) boots Multiboot ELF32 (an x86 kvm-unit-tests `.flat`), ELF64,
//!   Linux through PVH and a bzImage. Its names (`load`, `inspect`,
//!   `LoadRequest`, `BootSetup`, `gdt`, `layout`, `linux`, `place`, ...)
//!   are re-exported here, where they have always been.
//! * [`arch::aarch64`] (pure Rust, built on every host so its tests run on
//!   x86 too) loads arm64 guests for the `virt` machine: raw images (a
//!   kvm-unit-tests arm64 `.flat`), ELF64 AArch64 and the arm64 Linux
//!   `Image`, and plans where the device tree and initrd go.

#![deny(missing_docs)]

pub mod arch;
mod bytes;
pub mod detect;
mod elf;
mod error;
mod guest;
mod image;
mod ram;

pub use error::{LoadError, Mib};
pub use image::{BzImageHeader, ImageInfo, ImageKind, LoadSegment, MultibootHeader};
pub use ram::{Reserved, Span};

// Empty on aarch64 (arch::root says why).
#[allow(unused_imports)]
pub use arch::root::*;
