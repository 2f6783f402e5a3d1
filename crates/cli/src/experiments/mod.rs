//! The experiments that are not probe runs, each a command of its own:
//! `trapline linux-boot` ([`linux_boot`]), `trapline virtio-paths`
//! ([`virtio_paths`]) and `trapline net-paths` ([`net_paths`]), with their
//! `--list` ([`list`]): the first two x86 only for now, elsewhere each
//! refuses with a usage error ([`unavailable`]); `trapline net-paths` and
//! `trapline kernel-share` ([`kernel_share`]) on both architectures.

pub mod kernel_share;
pub mod linux_boot;
mod list;
pub mod net_paths;
pub mod virtio_paths;

/// Exit statuses of the experiments (shared meanings with `trapline
/// bench`).
mod status {
    /// The experiment ran (and every run in it ended well).
    pub const OK: i32 = 0;
    /// At least one run failed.
    pub const FAILED: i32 = 1;
    /// Bad command line, a missing peer, or not on this architecture.
    pub const USAGE: i32 = 2;
    /// /dev/kvm is missing or not accessible.
    pub const NO_KVM: i32 = 6;
    /// The experiment itself could not run.
    pub const ERROR: i32 = 8;
}

/// Refuses `command`'s experiment, `name`, where it cannot run yet:
/// `Some(status)` after saying so.
fn unavailable(command: &str, name: &str) -> Option<i32> {
    let why = trapline_peers::arch::experiments::UNAVAILABLE?;
    eprintln!("{command}: error: the {name} experiment {why}");
    Some(status::USAGE)
}

/// Handles SIGINT, SIGTERM and SIGHUP from here on: the experiment stops
/// between its runs and reports the ones finished
/// (docs/bench.md#stopping-a-run).
fn watch_stop_signals(command: &str) {
    if let Err(e) = trapline_machine::signals::watch() {
        eprintln!("{command}: warning: cannot handle stop signals (one would end the run keeping nothing): {e}");
    }
}
