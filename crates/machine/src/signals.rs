//! Ending a run on SIGINT, SIGTERM or SIGHUP without losing what it
//! measured.
//!
//! [`watch`] replaces the default action of the three signals (die at
//! once, keeping nothing) with a handler that only records the first
//! signal's number in an atomic: async-signal-safe, and safe on any thread,
//! vCPU threads under seccomp included (its only call is clock_gettime,
//! the vDSO's, which every filter allows besides). Whoever runs
//! then notices: a machine's controller within [`POLL`] (it stops the vCPUs
//! the way a timeout does, and the run ends with [`Outcome::Signal`]), the
//! lab between VM runs. A second signal ends the process at once with
//! 128 + its number, through `write` (one fixed line on stderr) and `_exit`,
//! both async-signal-safe and allowed on every filtered thread — unless it
//! is the same signal again within [`REPEAT_WINDOW`]: timeout(1) sends its
//! signal to the process and then to its process group, so a run under
//! `timeout 60 trapline …` gets SIGTERM twice in a row for one request.
//!
//! The flag is process-wide and never cleared: once asked to stop, a
//! process builds no more VMs.
//!
//! [`Outcome::Signal`]: crate::Outcome::Signal

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

/// The signals that end a run cleanly.
pub const STOPPING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// How often a machine's controller looks at the flag while it waits: the
/// longest a run goes on after the first signal (its wind-down aside).
pub const POLL: Duration = Duration::from_millis(100);

/// How soon the same signal again is taken for the same request, not a
/// second one (a person's second Ctrl-C comes later; the first has
/// usually ended the run by then anyway).
pub const REPEAT_WINDOW: Duration = Duration::from_millis(500);

/// The first stopping signal received (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// When it came, in CLOCK_MONOTONIC nanoseconds (0: not yet).
static RECEIVED_AT: AtomicU64 = AtomicU64::new(0);

/// CLOCK_MONOTONIC in nanoseconds, at least 1 (clock_gettime is
/// async-signal-safe, and allowed on every filtered thread).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec for clock_gettime to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
        .max(1)
}
/// Whether [`watch`] installed the handler.
static WATCHING: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    // The time first: a repeat handled at the same moment on another
    // thread then finds it set (or sets it, just as well).
    let now = monotonic_ns();
    let first_at = match RECEIVED_AT.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => now,
        Err(t) => t,
    };
    let first = match RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => return,
        Err(s) => s,
    };
    if first == sig && now.saturating_sub(first_at) < REPEAT_WINDOW.as_nanos() as u64 {
        return;
    }
    const MSG: &[u8] = b"trapline: a second stop signal: ending at once\n";
    // SAFETY: write(2) and _exit(2) are async-signal-safe; MSG is a static
    // buffer of MSG.len() bytes. Nothing is unwound or freed.
    unsafe {
        libc::write(2, MSG.as_ptr().cast(), MSG.len());
        libc::_exit(exit_status(sig));
    }
}

/// Install the handler for [`STOPPING`] (once per process; later calls do
/// nothing). Call it before the first thread is spawned that should not
/// die with the process on a signal — in practice early in `main`'s
/// subcommand, before any VM.
pub fn watch() -> std::io::Result<()> {
    if WATCHING.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    for sig in STOPPING {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask"
        // value; the handler is an extern "C" fn(c_int) as sa_handler
        // wants (no SA_SIGINFO). SA_RESTART: other threads' reads and
        // waits resume instead of failing with EINTR (KVM_RUN returns
        // EINTR regardless, which the run loop treats as a kick).
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether [`watch`] installed the handler (a controller polls only then).
pub fn watching() -> bool {
    WATCHING.load(Ordering::Relaxed)
}

/// The first stopping signal received, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The conventional exit status of a process ended by `sig`: 128 + N
/// (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
pub fn exit_status(sig: i32) -> i32 {
    128 + sig
}

/// The signal's name: `SIGINT`, `SIGTERM`, `SIGHUP`, else `signal N`.
pub fn name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_names_follow_the_shell_convention() {
        assert_eq!(exit_status(libc::SIGINT), 130);
        assert_eq!(exit_status(libc::SIGTERM), 143);
        assert_eq!(exit_status(libc::SIGHUP), 129);
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
        assert_eq!(name(64), "signal 64");
    }
}
