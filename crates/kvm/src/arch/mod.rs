//! What differs between the architectures trapline runs on, behind the
//! same names (Firecracker's pattern): `Vm` and `VmConfig` (memory,
//! interrupt controller, vCPU creation and boot registers), `CpuModel`,
//! `crash` (the vCPU dump), the exit hook (`decode_exit`, `handle_exit`,
//! `finish_exit` with `ArchExit` and `VcpuAction`: kvmtool's per-arch
//! `kvm_cpu__handle_exit`), `CAPABILITIES` (what the lab reports beside
//! the shared ones), and the arch-only pieces the crate root re-exports.

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use self::aarch64::*;
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::*;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("trapline-kvm knows x86_64 and aarch64; add crates/kvm/src/arch/<arch>/");
