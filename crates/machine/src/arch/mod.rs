//! The platform of each architecture (the PC on x86_64, QEMU's `virt` on
//! aarch64), behind the same names: how it takes part in assembling a
//! [`crate::Machine`] (`VCPUS_FIRST`, `HAS_PIT`, `Boot`, `refuse`,
//! `load_image`, `create_vcpus`, `add_devices`, `prepare_boot`,
//! `counter_khz`: see [`crate::assemble`]), what the machine keeps of it
//! (`Platform`), its interrupt lines (`KvmIrqLines`), its address map
//! (`layout`), and S3 (`ResumeAt`, `sleep_and_resume`, `resume`).

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use self::aarch64::*;
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::*;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("trapline-machine knows x86_64 and aarch64; add crates/machine/src/arch/<arch>/");
