//! The ucall pump: receives the guest's ucalls while the VM runs, and
//! drives host-side actions they ask for — today, irqfd injections: the
//! host stamps its TSC into guest memory, writes the irqfd, and waits for
//! the guest's handler to count the interrupt before the next one; and
//! each scenario's tails: the histogram block a Hist ucall names is read
//! back and checked here, then acknowledged so the guest may reuse it.

use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use trapline_abi::{GuestHist, Histogram, UcallKind, GUEST_HIST_SIZE, UCALL_ARGS};
use trapline_machine::UcallEvent;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::EventFd;

/// How long one injection may wait for the guest's handler.
const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// A scenario's recorded pass as the guest handed it over (a Hist ucall):
/// its histogram read back and checked, or why it could not be.
#[derive(Debug)]
pub struct TailsBlock {
    /// The scenario's id (`args[0]`).
    pub scenario: u32,
    /// Iterations the pass meant to record (`args[4]`).
    pub planned: u64,
    /// The stamp pair's own cost the guest measured (`args[3]`).
    pub stamp: u64,
    /// The values, one per iteration, or a per-scenario error.
    pub hist: Result<Histogram, String>,
}

/// Reads a Hist ucall's block out of guest memory and checks it: inside
/// RAM, initialised, its counts adding up, and holding what the pass
/// meant to record. Anything else is an error for that scenario, never a
/// panic, whatever the guest wrote.
pub(crate) fn read_tails(mem: &GuestMemoryMmap, args: &[u64; UCALL_ARGS]) -> TailsBlock {
    let (gpa, planned) = (args[1], args[4]);
    let hist = (|| {
        let mut raw = vec![0u8; GUEST_HIST_SIZE];
        mem.read_slice(&mut raw, GuestAddress(gpa)).map_err(|_| {
            format!(
                "the histogram block at {gpa:#x} ({GUEST_HIST_SIZE} bytes) is not inside guest RAM"
            )
        })?;
        let block = GuestHist::from_bytes(&raw).ok_or("the histogram block has the wrong size")?;
        let h = Histogram::from_guest(&block).map_err(|e| e.to_string())?;
        if h.count() == planned {
            Ok(h)
        } else {
            Err(format!(
                "the histogram block holds {} values, the pass meant to record {planned}",
                h.count()
            ))
        }
    })();
    TailsBlock {
        scenario: args[0] as u32,
        planned,
        stamp: args[3],
        hist,
    }
}

/// Tells the guest its block is read (it reuses the block only then).
fn ack_tails(mem: &GuestMemoryMmap, args: &[u64; UCALL_ARGS], block: &mut TailsBlock) {
    let ack = args[2];
    if !ack.is_multiple_of(8) || mem.write_obj(1u64, GuestAddress(ack)).is_err() {
        let why =
            format!("the block's acknowledgement word {ack:#x} is not an aligned u64 in guest RAM");
        block.hist = Err(match &block.hist {
            Ok(_) => why,
            Err(e) => format!("{e}; {why}"),
        });
    }
}

/// What the pump saw and did.
#[derive(Debug, Default)]
pub struct PumpResult {
    /// Every scenario's recorded pass (Hist ucalls), in arrival order.
    pub tails: Vec<TailsBlock>,
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
                if ev.kind == UcallKind::Hist {
                    let mut block = read_tails(&memory, &ev.args);
                    ack_tails(&memory, &ev.args, &mut block);
                    out.tails.push(block);
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

    /// A guest's histogram block as its memory holds it.
    fn block_bytes(values: &[u64]) -> Vec<u8> {
        let mut raw = vec![0u8; GUEST_HIST_SIZE];
        let put = |raw: &mut Vec<u8>, i: usize, v: u64| {
            raw[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes())
        };
        put(&mut raw, 0, trapline_abi::HIST_MAGIC);
        put(&mut raw, 1, values.len() as u64);
        put(
            &mut raw,
            2,
            values.iter().copied().min().unwrap_or(u64::MAX),
        );
        put(&mut raw, 3, values.iter().copied().max().unwrap_or(0));
        put(&mut raw, 4, values.iter().sum());
        for &v in values {
            let o = 40 + 4 * trapline_abi::hist_bucket(v);
            let c = u32::from_le_bytes(raw[o..o + 4].try_into().unwrap()) + 1;
            raw[o..o + 4].copy_from_slice(&c.to_le_bytes());
        }
        raw
    }

    fn hist_args(gpa: u64, ack: u64, planned: u64) -> [u64; UCALL_ARGS] {
        [4, gpa, ack, 60, planned, 0]
    }

    #[test]
    fn a_guests_histogram_reads_back_and_is_acknowledged() {
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), 0x10000)]).unwrap();
        mem.write_slice(
            &block_bytes(&[20_000, 21_000, 90_000]),
            GuestAddress(0x1000),
        )
        .unwrap();
        let args = hist_args(0x1000, 0x8000, 3);
        let mut b = read_tails(&mem, &args);
        ack_tails(&mem, &args, &mut b);
        let h = b.hist.unwrap();
        assert_eq!(
            (h.count(), h.min(), h.max()),
            (3, Some(20_000), Some(90_000))
        );
        assert_eq!((b.scenario, b.planned, b.stamp), (4, 3, 60));
        assert_eq!(mem.read_obj::<u64>(GuestAddress(0x8000)).unwrap(), 1);
    }

    #[test]
    fn a_bad_block_is_that_scenarios_error_never_a_panic() {
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), 0x10000)]).unwrap();
        let good = block_bytes(&[100, 200]);
        mem.write_slice(&good, GuestAddress(0x1000)).unwrap();
        let mut no_magic = good.clone();
        no_magic[0] ^= 1;
        mem.write_slice(&no_magic, GuestAddress(0x5000)).unwrap();
        let mut inconsistent = good.clone();
        inconsistent[8] = 7; // count 7, buckets hold 2
        mem.write_slice(&inconsistent, GuestAddress(0x9000))
            .unwrap();
        let mut bounds = good;
        bounds[16..24].copy_from_slice(&500u64.to_le_bytes()); // min > max
        mem.write_slice(&bounds, GuestAddress(0xc000)).unwrap();
        for (gpa, planned, why) in [
            (0xffff_f000, 2, "not inside guest RAM"),
            (u64::MAX - 8, 2, "not inside guest RAM"),
            (0xf000, 2, "not inside guest RAM"), // straddles the end of RAM
            (0x5000, 2, "magic"),
            (0x9000, 7, "do not add up"),
            (0xc000, 2, "min and max"),
            (0x1000, 5, "meant to record 5"),
        ] {
            let b = read_tails(&mem, &hist_args(gpa, 0x8000, planned));
            let e = b.hist.unwrap_err();
            assert!(e.contains(why), "{gpa:#x}: {e}");
        }
        // An acknowledgement word outside RAM or misaligned: an error too.
        for ack in [0x1_0000_0000, 0x8004] {
            let args = hist_args(0x1000, ack, 2);
            let mut b = read_tails(&mem, &args);
            ack_tails(&mem, &args, &mut b);
            assert!(b.hist.unwrap_err().contains("acknowledgement"), "{ack:#x}");
        }
    }

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
