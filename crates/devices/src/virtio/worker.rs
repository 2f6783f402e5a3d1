//! The ioeventfd path's consumer: one thread waits (epoll) on the KVM
//! ioeventfds bound to devices' QueueNotify registers and processes the
//! notified queue off the vCPU thread, which went straight back into the
//! guest when KVM signalled the eventfd. The same thread waits on back
//! ends' receive fds (a TAP), edge-triggered, and serves the receive
//! queue when frames arrive (on either notify path).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use vmm_sys_util::epoll::{ControlOperation, Epoll, EpollEvent, EventSet};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use super::VirtioMmio;

/// One ioeventfd: which device and queue its signal means.
pub struct NotifyTarget {
    /// The eventfd KVM signals on a matching QueueNotify write.
    pub eventfd: EventFd,
    /// The device.
    pub device: Arc<VirtioMmio>,
    /// The queue index (the ioeventfd's datamatch).
    pub queue: u32,
}

/// A back end's fd that turns readable when frames arrive for `queue`.
pub struct ReadySource {
    /// The fd (a duplicate of the back end's; epoll follows the file).
    pub fd: OwnedFd,
    /// The device.
    pub device: Arc<VirtioMmio>,
    /// The queue to serve when it is readable.
    pub queue: u32,
}

/// What the worker runs before its loop (trapline installs the thread's
/// seccomp filter here); an error stops the spawn.
pub type OnStart = Box<dyn FnOnce() -> Result<(), String> + Send>;

/// The running worker; dropping it stops and joins the thread.
pub struct NotifyWorker {
    stop: EventFd,
    thread: Option<JoinHandle<()>>,
}

impl NotifyWorker {
    /// Start a thread named `name` serving `targets` and `sources`.
    pub fn spawn(
        name: &str,
        targets: Vec<NotifyTarget>,
        sources: Vec<ReadySource>,
        on_start: OnStart,
    ) -> io::Result<Self> {
        let stop = EventFd::new(EFD_NONBLOCK)?;
        // Everything is registered here, before the thread's filter exists.
        // Tokens: targets, then sources, then the stop eventfd.
        let epoll = Epoll::new()?;
        let stop_token = (targets.len() + sources.len()) as u64;
        epoll.ctl(
            ControlOperation::Add,
            stop.as_raw_fd(),
            EpollEvent::new(EventSet::IN, stop_token),
        )?;
        for (i, t) in targets.iter().enumerate() {
            epoll.ctl(
                ControlOperation::Add,
                t.eventfd.as_raw_fd(),
                EpollEvent::new(EventSet::IN, i as u64),
            )?;
        }
        for (i, s) in sources.iter().enumerate() {
            // Edge-triggered: a pass reads until the source is empty or
            // the guest has no buffer left; in the second case the guest's
            // next receive notify serves the rest, so a readable fd with
            // no buffers does not spin this thread.
            epoll.ctl(
                ControlOperation::Add,
                s.fd.as_raw_fd(),
                EpollEvent::new(
                    EventSet::IN | EventSet::EDGE_TRIGGERED,
                    (targets.len() + i) as u64,
                ),
            )?;
        }
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let started = on_start();
                let ok = started.is_ok();
                let _ = tx.send(started);
                if ok {
                    serve(&epoll, &targets, &sources, stop_token);
                }
            })?;
        match rx.recv() {
            Ok(Ok(())) => Ok(Self {
                stop,
                thread: Some(thread),
            }),
            Ok(Err(msg)) => {
                let _ = thread.join();
                Err(io::Error::other(msg))
            }
            Err(_) => {
                let _ = thread.join();
                Err(io::Error::other(
                    "the virtio notify worker died while starting",
                ))
            }
        }
    }
}

fn serve(epoll: &Epoll, targets: &[NotifyTarget], sources: &[ReadySource], stop_token: u64) {
    let mut events = vec![EpollEvent::default(); targets.len() + sources.len() + 1];
    loop {
        let n = match epoll.wait(-1, &mut events) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        for ev in &events[..n] {
            let token = ev.data();
            if token == stop_token {
                return;
            }
            let Some(t) = targets.get(token as usize) else {
                if let Some(s) = (token as usize)
                    .checked_sub(targets.len())
                    .and_then(|i| sources.get(i))
                {
                    s.device.serve(s.queue);
                }
                continue;
            };
            // Several notifies may have coalesced into one count: one pass
            // over the queue serves them all.
            if t.eventfd.read().is_ok() {
                t.device.notify(t.queue);
            }
        }
    }
}

impl Drop for NotifyWorker {
    fn drop(&mut self) {
        let _ = self.stop.write(1);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
