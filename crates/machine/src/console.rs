//! Console input: bytes from the VMM's stdin to COM1's receiver.
//!
//! A helper thread reads stdin and queues what it reads in the UART's
//! 64-byte FIFO (raising the RX interrupt), waiting while the guest has not
//! drained it. With `escape` (a terminal in raw mode), QEMU's `Ctrl-A x`
//! quits and `Ctrl-A Ctrl-A` sends one Ctrl-A. End of input just ends the
//! thread: the guest keeps running.

use std::io::Read;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use trapline_bus::StopReason;
use trapline_kvm::VcpuEnd;
use trapline_seccomp::{BpfProgram, ThreadKind};

/// Ctrl-A, the escape byte (as QEMU's `-serial mon:stdio`).
pub const ESCAPE: u8 = 0x01;

/// The controller-channel index the console sends its "quit" on (past every
/// vCPU index).
pub(crate) const CONSOLE_INDEX: usize = usize::MAX;

/// What the console thread does with a byte after an escape.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Queue these bytes for the guest.
    Send(Vec<u8>),
    /// Ctrl-A x: end the run.
    Quit,
}

/// Splits input into guest bytes and escapes; `pending` is true when the
/// previous chunk ended with Ctrl-A.
pub(crate) fn filter(input: &[u8], escape: bool, pending: &mut bool) -> Action {
    if !escape {
        return Action::Send(input.to_vec());
    }
    let mut out = Vec::with_capacity(input.len());
    for &b in input {
        if *pending {
            *pending = false;
            match b {
                b'x' | b'X' => return Action::Quit,
                ESCAPE => out.push(ESCAPE),
                // Not an escape we know: both bytes go to the guest.
                _ => out.extend_from_slice(&[ESCAPE, b]),
            }
        } else if b == ESCAPE {
            *pending = true;
        } else {
            out.push(b);
        }
    }
    Action::Send(out)
}

/// A UART's receiver, which the console thread feeds: COM1 on x86, the
/// PL011 on arm64.
pub trait ConsoleRx: Send + Sync {
    /// Queue `bytes` for the guest; returns how many fit.
    fn enqueue_input(&self, bytes: &[u8]) -> usize;
}

impl ConsoleRx for trapline_devices::serial::Uart {
    fn enqueue_input(&self, bytes: &[u8]) -> usize {
        trapline_devices::serial::Uart::enqueue_input(self, bytes)
    }
}

impl ConsoleRx for trapline_devices::pl011::Pl011 {
    fn enqueue_input(&self, bytes: &[u8]) -> usize {
        trapline_devices::pl011::Pl011::enqueue_input(self, bytes)
    }
}

/// Spawns the console thread. It installs `filter` (the helper filter:
/// read, write, sleep) before its first read.
pub(crate) fn spawn(
    uart: Arc<dyn ConsoleRx>,
    escape: bool,
    quit: Sender<(usize, VcpuEnd)>,
    seccomp: Option<BpfProgram>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("console-in".into())
        .spawn(move || {
            if let Some(f) = seccomp {
                if trapline_seccomp::install_program(ThreadKind::Helper, &f).is_err() {
                    return;
                }
            }
            let mut stdin = std::io::stdin().lock();
            let mut buf = [0u8; 64];
            let mut pending = false;
            loop {
                let n = match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                match filter(&buf[..n], escape, &mut pending) {
                    Action::Quit => {
                        let _ = quit.send((CONSOLE_INDEX, VcpuEnd::Device(StopReason::PowerOff)));
                        return;
                    }
                    Action::Send(bytes) => {
                        let mut rest = &bytes[..];
                        while !rest.is_empty() {
                            let k = uart.enqueue_input(rest);
                            rest = &rest[k..];
                            if k == 0 {
                                // The guest has not drained the FIFO yet.
                                std::thread::sleep(Duration::from_millis(2));
                            }
                        }
                    }
                }
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_a_x_quits_and_ctrl_a_ctrl_a_sends_one() {
        let mut p = false;
        assert_eq!(
            filter(b"ls\r", true, &mut p),
            Action::Send(b"ls\r".to_vec())
        );
        assert_eq!(filter(b"a\x01", true, &mut p), Action::Send(b"a".to_vec()));
        assert!(p);
        assert_eq!(filter(b"x", true, &mut p), Action::Quit);
        let mut p = false;
        assert_eq!(
            filter(b"\x01\x01b\x01c", true, &mut p),
            Action::Send(b"\x01b\x01c".to_vec())
        );
        // Without escape handling (stdin not a terminal) every byte passes.
        assert_eq!(
            filter(b"\x01x", false, &mut p),
            Action::Send(b"\x01x".to_vec())
        );
    }
}
