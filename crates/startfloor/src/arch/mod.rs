//! What differs between the architectures: the VM with its interrupt
//! controller and guest RAM, the one vCPU with its boot registers, and the
//! guest's single instruction that exits to user space. Each module
//! exports the same names: `GUEST`, `Vm`, `Platform`, `create_vm`,
//! `create_vcpu`, `finish_platform` and `expected_exit`.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use self::aarch64::*;
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::*;
