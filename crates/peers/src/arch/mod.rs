//! Where x86_64 and arm64 peers differ: each architecture's module exports
//! the same names (`qemu::*` for the QEMU peer's binary and machine,
//! `kvmtool::*` for what kvmtool can run of the probe, `experiments::*`
//! for whether the experiments run here, `qemu_net::*` for the data path's
//! QEMU machine); the rest of the crate is shared.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use aarch64::{experiments, kvmtool, qemu, qemu_net};
#[cfg(target_arch = "x86_64")]
pub use x86_64::{experiments, kvmtool, qemu, qemu_net};
