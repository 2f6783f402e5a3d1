//! The ucall pump: receives the guest's ucalls while the VM runs, and
//! drives host-side actions they ask for — today, irqfd injections: the
//! host stamps its TSC into guest memory, writes the irqfd, and waits for
//! the guest's handler to count the interrupt before the next one.

use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use trapline_abi::UcallKind;
use trapline_machine::UcallEvent;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::EventFd;

/// How long one injection may wait for the guest's handler.
const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// What the pump saw and did.
#[derive(Debug, Default)]
pub struct PumpResult {
    /// Every ucall, in arrival order.
    pub events: Vec<UcallEvent>,
    /// Injections the guest acknowledged.
    pub injected: u64,
    /// Why injections stopped early, if they did.
    pub inject_error: Option<String>,
}

fn inject(
    fd: &EventFd,
    mem: &GuestMemoryMmap,
    n: u64,
    stamps: u64,
    counter: u64,
    out: &mut PumpResult,
) {
    for i in 0..n {
        let slot = GuestAddress(stamps.wrapping_add(8 * i));
        if mem.write_obj(trapline_bus::cycles(), slot).is_err() {
            out.inject_error = Some(format!("stamp slot {:#x} is outside guest RAM", slot.0));
            return;
        }
        if let Err(e) = fd.write(1) {
            out.inject_error = Some(format!("irqfd write: {e}"));
            return;
        }
        let deadline = Instant::now() + ACK_TIMEOUT;
        loop {
            match mem.read_obj::<u64>(GuestAddress(counter)) {
                Ok(c) if c > i => break,
                Ok(_) if Instant::now() < deadline => std::hint::spin_loop(),
                Ok(c) => {
                    out.inject_error = Some(format!(
                        "the guest acknowledged {c} of {} injections",
                        i + 1
                    ));
                    return;
                }
                Err(_) => {
                    out.inject_error = Some(format!("counter {counter:#x} is outside guest RAM"));
                    return;
                }
            }
        }
        out.injected += 1;
    }
}

/// Start the pump. It ends when the machine drops its ucall sender (when
/// the run is over).
/// With `seccomp`, the thread runs under the helper filter.
pub fn spawn(
    rx: Receiver<UcallEvent>,
    irqfd: Option<EventFd>,
    memory: GuestMemoryMmap,
    seccomp: bool,
) -> std::io::Result<JoinHandle<PumpResult>> {
    let filter = if seccomp {
        trapline_seccomp::filter(trapline_seccomp::ThreadKind::Helper).ok()
    } else {
        None
    };
    std::thread::Builder::new()
        .name("ucall-pump".into())
        .spawn(move || {
            if let Some(f) = filter {
                // Best effort: the pump works the same without it.
                let _ = trapline_seccomp::install_program(trapline_seccomp::ThreadKind::Helper, &f);
            }
            let mut out = PumpResult::default();
            while let Ok(ev) = rx.recv() {
                if ev.kind == UcallKind::IrqfdStart {
                    match &irqfd {
                        Some(fd) => {
                            inject(fd, &memory, ev.args[0], ev.args[1], ev.args[2], &mut out)
                        }
                        None => out.inject_error = Some("this machine has no irqfd".into()),
                    }
                }
                out.events.push(ev);
            }
            out
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use vmm_sys_util::eventfd::EFD_NONBLOCK;

    #[test]
    fn injections_wait_for_the_guest_and_stop_on_silence() {
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), 0x10000)]).unwrap();
        let fd = EventFd::new(EFD_NONBLOCK).unwrap();
        let guest_fd = fd.try_clone().unwrap();
        let (tx, rx) = channel();
        let pump = spawn(rx, Some(fd), mem.clone(), true).unwrap();
        // A fake guest: acknowledges each injection by bumping the counter.
        let m2 = mem.clone();
        let guest = std::thread::spawn(move || {
            let mut seen = 0;
            while seen < 3 {
                if let Ok(v) = guest_fd.read() {
                    seen += v;
                    m2.write_obj(seen, GuestAddress(0x2000)).unwrap();
                }
            }
        });
        let ev = |kind, args: [u64; 6]| UcallEvent {
            vcpu: 0,
            kind,
            args,
            text: String::new(),
            exits: Default::default(),
            handling: None,
            kernel: None,
        };
        tx.send(ev(UcallKind::IrqfdStart, [3, 0x1000, 0x2000, 0, 0, 0]))
            .unwrap();
        guest.join().unwrap();
        drop(tx);
        let r = pump.join().unwrap();
        assert_eq!(r.injected, 3, "{:?}", r.inject_error);
        assert!(
            mem.read_obj::<u64>(GuestAddress(0x1000)).unwrap() > 0,
            "host stamps written"
        );
        assert_eq!(r.events.len(), 1);
    }
}
