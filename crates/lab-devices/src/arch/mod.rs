//! What differs between the architectures the lab runs on, behind the same
//! names: where the probe pages sit and how large they are, the probe
//! devices' ranges, each fixture's fast paths, the irqfd's interrupt line,
//! and the one fast path each architecture has alone.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub(crate) use self::aarch64::*;
#[cfg(target_arch = "x86_64")]
pub(crate) use self::x86_64::*;
