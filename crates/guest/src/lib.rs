//! trapline's own guest payloads, built from `c/` by `build.rs` and
//! embedded as bytes: the set for the architecture trapline is built for,
//! under the same names on both (`HELLO`, `SMP`, `HOSTILE`, `PAYLOADS`,
//! [`payload`]). See this crate's `README.md` for each payload's command
//! line, ucalls and exit codes.
//!
//! - x86_64 (module `x86_64`): kvm-unit-tests style Multiboot `.flat` images and
//!   more (`probe`, `compat`, ...).
//! - aarch64 (module `aarch64`): ELF64 AArch64 images for the `virt` machine,
//!   entered at EL1 with x0 = the device tree. An x86_64 build has them too
//!   under `aarch64::` with the `aarch64-payloads` feature (for host-side
//!   loader tests).

mod arch;
pub use arch::*;

/// The payload called `name`, if there is one.
pub fn payload(name: &str) -> Option<&'static [u8]> {
    PAYLOADS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

pub mod cpio;
