//! The exit-cost lab: measures, from inside a guest, what each way a guest
//! can notify its host costs, checks that each path did what it claims,
//! and reports statistics (see `trapline bench --help`).

pub mod catalog;
pub mod cli;
pub mod doorbell;
mod error;
pub mod floor;
pub mod footprint;
pub mod host;
pub mod lab;
pub mod linux_boot;
pub mod peer;
mod progress;
pub mod pump;
pub mod results;
pub mod runner;
mod terminal;
mod time;
pub mod virtio;

pub use error::LabError;
pub use runner::{listing, run_lab, LabOptions};
