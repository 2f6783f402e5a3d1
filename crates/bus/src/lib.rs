//! The buses every exit goes through, and what is counted on the way.
//!
//! A [`BusBuilder`] collects device ranges while the machine is assembled;
//! [`BusBuilder::build`] freezes them into a [`Bus`], an immutable sorted
//! table that every vCPU shares. Lookup is a binary search; devices are
//! called through `&self` and lock inside only if they must. An access
//! wider, narrower or less aligned than a device takes is cut into pieces
//! the way QEMU cuts it ([`AccessSizes`]). Nothing here locks, allocates or
//! logs on the access path.
//!
//! What an exit was is one [`ExitKind`]: the per-vCPU [`ExitCounters`]
//! count under it and the `--stat` [`ExitProfile`] keys by it.

mod access;
pub mod arch;
mod bus;
mod device;
mod exit_kind;
pub mod profile;
mod stats;

pub use access::AccessSizes;
pub use arch::cycles;
pub use bus::{Access, Bus, BusBuilder, BusError, Mapping};
pub use device::{fill_all_ones, AbsentDevice, BusDevice, IoOutcome, StopReason};
pub use exit_kind::ExitKind;
pub use profile::{ExitProfile, HandlingTotals, ProfileSnapshot};
pub use stats::{ExitCounters, ExitSnapshot};
