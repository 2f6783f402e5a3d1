//! The exit-cost lab: measures, from inside a guest, what each way a guest
//! can notify its host costs, checks that each path did what it claims,
//! and reports statistics (see `trapline bench --help`).
//!
//! The same lab runs on x86_64 and arm64: the catalog holds each
//! architecture's scenarios, the probe payload is built for each, and the
//! runner, checks and report are shared. What exists on x86 only: the
//! raw-KVM floor ladder (`floor`; a stub on arm64 that measures nothing
//! yet). The peers it runs beside trapline (QEMU, kvmtool) are
//! trapline-peers'.

/// std's `eprintln!` for every module of this crate (declared before them
/// all): the line in words, and no panic when stderr is gone (see
/// `trapline_stdio::words`).
macro_rules! eprintln {
    () => {
        trapline_stdio::out::error_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        trapline_stdio::out::error_line(format_args!($($arg)*))
    };
}

mod anatomy;
mod arch;
pub mod catalog;
pub mod doorbell;
mod error;
pub use trapline_floor as floor;
pub mod footprint;
pub mod host;
pub mod kshare;
pub mod peer;
mod progress;
pub mod pump;
pub mod runner;
pub mod time;

pub use trapline_peers::kvmtool;

pub use error::LabError;
pub use runner::{dry_run, listing, run_lab, DryRun, LabOptions};
