//! Each architecture's list of scenarios, behind the same names. Both are
//! compiled on every host (the catalog's tests hold each against the ABI,
//! and the peers' tests read both); `SCENARIOS` is the host's.

pub mod aarch64;
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use self::aarch64::SCENARIOS;
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::SCENARIOS;
