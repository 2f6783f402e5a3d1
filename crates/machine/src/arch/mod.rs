//! The platform of each architecture: the PC on x86_64, QEMU's `virt` on
//! aarch64. Each builds a [`crate::Machine`] (`Machine::build`) from the
//! same [`crate::MachineConfig`].

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;
