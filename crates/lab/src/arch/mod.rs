//! Where x86 ends and arm64 begins in the running lab, behind the same
//! names (the scenario lists are the catalog's, `catalog/arch/`): how a
//! probe VM ends well and what its ucall exits as, the scenario the exit
//! profile's cost is measured on, what the host cannot run, the kvmtool
//! peer, the raw-KVM floor's checks, and the report's clock.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub(crate) use self::aarch64::*;
#[cfg(target_arch = "x86_64")]
pub(crate) use self::x86_64::*;
