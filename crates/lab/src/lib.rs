//! The exit-cost lab: measures, from inside a guest, what each way a guest
//! can notify its host costs, checks that each path did what it claims,
//! and reports statistics (see `trapline bench --help`).
//!
//! The same lab runs on x86_64 and arm64: the catalog holds each
//! architecture's scenarios, the probe payload is built for each, and the
//! runner, checks and report are shared. What exists on x86 only: the
//! raw-KVM floor ladder (`floor`; a stub on arm64 that measures nothing
//! yet), `--view linux-boot` and `--view virtio`. kvm-unit-tests' arm64
//! `micro-bench` (`micro_bench`) is parsed into rows on arm64.

#[macro_use]
pub mod out;
mod arch;
pub mod catalog;
mod child;
pub mod cli;
pub mod doorbell;
mod error;
mod flags;
pub use trapline_floor as floor;
pub mod footprint;
pub mod host;
pub mod kvmtool;
#[cfg(target_arch = "x86_64")]
pub mod linux_boot;
// The experiments it lists are x86's (arm64 refuses them).
#[cfg(target_arch = "x86_64")]
mod list;
pub mod micro_bench;
pub mod outputs;
pub mod peer;
pub mod present;
mod progress;
pub mod pump;
pub mod results;
pub mod runner;
pub mod saved;
mod terminal;
mod time;
#[cfg(target_arch = "x86_64")]
pub mod virtio;

pub use error::LabError;
pub use runner::{dry_run, listing, run_lab, DryRun, LabOptions};
