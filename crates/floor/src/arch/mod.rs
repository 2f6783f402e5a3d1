//! What differs between the architectures the floor runs on, behind the
//! same names (as `trapline-kvm`'s `arch`): `code` (the probe's loops and
//! [`FloorKind`]), `pieces` ([`Pieces`]: what a raw VM may have), `ladder`
//! (which pieces each rung has and which loops it runs) and `vm`
//! ([`RawVm`], whose runs give the crate's shared `FloorSample`).
//!
//! The arm64 floor's logic that needs no KVM (its code, pieces and ladder)
//! is compiled on every host, so its tests run on x86 too and the x86
//! build's name checks see the arm64 rows; only its `vm` is arm64's alone.

pub mod aarch64;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use self::aarch64::{anatomy, code, ladder, pieces, vm};
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::{anatomy, code, ladder, pieces, vm};

pub use code::FloorKind;
pub use pieces::Pieces;
pub use vm::RawVm;
