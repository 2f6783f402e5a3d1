//! The payload sets, one module per architecture exporting the same names
//! (`HELLO`, `SMP`, `HOSTILE`, `VBLK`, `PROBE`, ..., `PAYLOADS`); the one
//! trapline is built for is re-exported at the crate root. An x86_64 build
//! also has the arm64 set under `aarch64::` with the `aarch64-payloads`
//! feature (for host-side loader tests).

#[cfg(target_arch = "x86_64")]
pub mod x86_64;
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::*;

#[cfg(any(target_arch = "aarch64", feature = "aarch64-payloads"))]
pub mod aarch64;
#[cfg(target_arch = "aarch64")]
pub use self::aarch64::*;
