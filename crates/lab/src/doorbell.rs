//! The doorbell consumer (seed 002): a host thread that waits on every
//! doorbell's eventfd and counts the rings, as a device backend would.
//! It blocks in epoll (vmm-sys-util's `PollContext`); stopping it writes a
//! stop eventfd, so it never spins and never hangs.

use std::collections::BTreeMap;
use std::thread::JoinHandle;

use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};
use vmm_sys_util::poll::PollContext;

/// A running consumer.
pub struct Consumer {
    stop: EventFd,
    thread: JoinHandle<BTreeMap<&'static str, u64>>,
}

fn drain(fd: &EventFd) -> u64 {
    // Non-blocking: EAGAIN (nothing pending) reads as 0.
    fd.read().unwrap_or(0)
}

impl Consumer {
    /// Start counting rings on `fds` (non-blocking eventfds).
    /// With `seccomp`, the thread runs under the helper filter.
    pub fn spawn(fds: Vec<(&'static str, EventFd)>, seccomp: bool) -> std::io::Result<Consumer> {
        let stop = EventFd::new(EFD_NONBLOCK)?;
        let stop_rx = stop.try_clone()?;
        let filter = if seccomp {
            trapline_seccomp::filter(trapline_seccomp::ThreadKind::Helper).ok()
        } else {
            None
        };
        // The epoll set is built here, before the thread installs its
        // filter: the helper filter allows waiting, not creating one.
        // Token i is doorbell i; the stop eventfd's token is fds.len().
        let poll: PollContext<usize> = PollContext::new()?;
        for (i, (_, fd)) in fds.iter().enumerate() {
            poll.add(fd, i)?;
        }
        poll.add(&stop_rx, fds.len())?;
        let thread = std::thread::Builder::new()
            .name("doorbell-consumer".into())
            .spawn(move || {
                if let Some(f) = filter {
                    // Best effort: counting works the same without it.
                    let _ =
                        trapline_seccomp::install_program(trapline_seccomp::ThreadKind::Helper, &f);
                }
                let mut totals: BTreeMap<&'static str, u64> =
                    fds.iter().map(|(n, _)| (*n, 0)).collect();
                // `wait` retries EINTR itself; any other error ends the
                // loop, and the final drain below still counts every ring.
                'wait: while let Ok(events) = poll.wait() {
                    for event in events.iter_readable() {
                        match fds.get(event.token()) {
                            Some((name, fd)) => *totals.entry(name).or_default() += drain(fd),
                            None => break 'wait,
                        }
                    }
                }
                // The VM is gone: whatever is still pending belongs to the run.
                for (name, fd) in &fds {
                    *totals.entry(name).or_default() += drain(fd);
                }
                // Owned by the thread until here: closing it earlier would
                // take it out of the epoll set.
                drop(stop_rx);
                totals
            })?;
        Ok(Consumer { stop, thread })
    }

    /// Stop, join, and return the rings counted per doorbell.
    pub fn finish(self) -> BTreeMap<&'static str, u64> {
        let _ = self.stop.write(1);
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_signal_and_stops_while_blocked() {
        let a = EventFd::new(EFD_NONBLOCK).unwrap();
        let b = EventFd::new(EFD_NONBLOCK).unwrap();
        let c = Consumer::spawn(
            vec![("a", a.try_clone().unwrap()), ("b", b.try_clone().unwrap())],
            true,
        )
        .unwrap();
        for _ in 0..1000 {
            a.write(1).unwrap();
        }
        b.write(5).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        a.write(2).unwrap();
        let t = c.finish();
        assert_eq!(t["a"], 1002);
        assert_eq!(t["b"], 5);
    }

    #[test]
    fn stopping_an_idle_consumer_returns_at_once() {
        let a = EventFd::new(EFD_NONBLOCK).unwrap();
        let start = std::time::Instant::now();
        let t = Consumer::spawn(vec![("a", a)], false).unwrap().finish();
        assert_eq!(t["a"], 0);
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }
}
