//! The exit-cost lab: measures, from inside a guest, what each way a guest
//! can notify its host costs, checks that each path did what it claims,
//! and reports statistics (see `trapline bench --help`).

#[cfg(target_arch = "x86_64")]
pub mod catalog;
#[cfg(target_arch = "x86_64")]
pub mod cli;
#[cfg(target_arch = "aarch64")]
#[path = "cli_arm64.rs"]
pub mod cli;
#[cfg(target_arch = "x86_64")]
pub mod doorbell;
#[cfg(target_arch = "x86_64")]
mod error;
#[cfg(target_arch = "x86_64")]
pub mod floor;
#[cfg(target_arch = "x86_64")]
pub mod footprint;
#[cfg(target_arch = "x86_64")]
pub mod host;
#[cfg(target_arch = "x86_64")]
pub mod lab;
#[cfg(target_arch = "x86_64")]
pub mod linux_boot;
pub mod outputs;
#[cfg(target_arch = "x86_64")]
pub mod peer;
pub mod present;
#[cfg(target_arch = "x86_64")]
mod progress;
#[cfg(target_arch = "x86_64")]
pub mod pump;
pub mod results;
#[cfg(target_arch = "x86_64")]
pub mod runner;
pub mod saved;
mod terminal;
mod time;
#[cfg(target_arch = "x86_64")]
pub mod virtio;

#[cfg(target_arch = "x86_64")]
pub use error::LabError;
#[cfg(target_arch = "x86_64")]
pub use runner::{dry_run, listing, run_lab, DryRun, LabOptions};
