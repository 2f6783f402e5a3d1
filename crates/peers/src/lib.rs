//! The VMMs the lab measures beside trapline, and the experiments that are
//! not probe runs:
//!
//! - [`qemu`]: QEMU booting the identical probe (`bench --peer qemu`);
//! - [`kvmtool`]: kvmtool's `lkvm` (`bench --peer kvmtool`);
//! - [`micro_bench`]: kvm-unit-tests' arm64 micro-bench on trapline and
//!   the peers (`bench --micro-bench`);
//! - [`experiments`]: `trapline linux-boot` and `trapline virtio-paths`
//!   (x86 only for now) and `trapline net-paths` (both architectures), the
//!   experiments that are not probe runs.
//!
//! Where the architectures differ it is in [`arch`]'s modules.

pub mod arch;
mod child;
pub mod experiments;
pub mod host;
pub mod kvmtool;
pub mod micro_bench;
pub mod qemu;
