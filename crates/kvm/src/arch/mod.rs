//! What differs between the architectures trapline runs on, behind the
//! same names (Firecracker's pattern): `Vm` (memory, interrupt controller,
//! vCPU creation and boot registers), `crash` (the vCPU dump), and the
//! arch-only pieces re-exported from the crate root.

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use self::aarch64::*;
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::*;
