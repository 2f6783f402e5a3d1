//! COM1: a 16550 UART from vm-superio.
//!
//! vm-superio keeps the line status at "transmitter empty" because output
//! is written synchronously, so a guest polling LSR bit 5 never spins (a
//! wrong LSR cost one VMM 15 s of boot). Its interrupt (ISA IRQ 4) goes out
//! through an eventfd bound to the in-kernel irqchip ([`Uart::with_irq`]):
//! Linux's 8250 driver waits for THR-empty and RX interrupts. Input bytes
//! (stdin) arrive through [`Uart::enqueue_input`].

use std::fs::File;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use trapline_bus::{fill_all_ones, AccessSizes, BusDevice, IoOutcome, StopReason};
use vm_superio::{Serial, Trigger};
use vmm_sys_util::eventfd::EventFd;

/// Number of UART registers.
pub const UART_LEN: u64 = 8;

/// Where guest serial output goes.
pub enum SerialOutput {
    /// The process's stdout.
    Stdout,
    /// A file (`--serial file:PATH`).
    File(File),
    /// An in-memory buffer (tests, the lab's runner).
    Capture(Arc<Mutex<Vec<u8>>>),
    /// Discarded.
    Sink,
}

impl std::fmt::Debug for SerialOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SerialOutput::Stdout => "stdout",
            SerialOutput::File(_) => "file",
            SerialOutput::Capture(_) => "capture",
            SerialOutput::Sink => "sink",
        })
    }
}

/// The writer behind a [`SerialOutput`]. It remembers the first failed
/// write (a closed pipe, a full disk) as its OS error number, without
/// allocating or logging on the vCPU's exit path; the UART then asks the
/// machine to stop ([`StopReason::OutputFailed`]) and the run's end reports
/// it once. Later bytes are dropped: the failure is already on its way.
pub struct SerialWriter {
    out: SerialOutput,
    failed: Option<i32>,
}

/// The error number recorded for a failure the OS gave none for (EIO).
const EIO: i32 = 5;

impl SerialWriter {
    /// A writer sending to `out` (also the PL011's sink).
    pub fn new(out: SerialOutput) -> Self {
        Self { out, failed: None }
    }

    /// The stop to ask for once a write has failed.
    pub fn stop(&self) -> Option<StopReason> {
        self.failed.map(|errno| StopReason::OutputFailed { errno })
    }

    fn note<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r {
            if e.kind() != io::ErrorKind::Interrupted && self.failed.is_none() {
                self.failed = Some(e.raw_os_error().unwrap_or(EIO));
            }
        }
        r
    }
}

impl Write for SerialWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed.is_some() {
            return Ok(buf.len());
        }
        let r = match &mut self.out {
            SerialOutput::Stdout => io::stdout().lock().write(buf),
            SerialOutput::File(f) => f.write(buf),
            SerialOutput::Capture(v) => {
                v.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(buf);
                Ok(buf.len())
            }
            SerialOutput::Sink => Ok(buf.len()),
        };
        self.note(r)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.failed.is_some() {
            return Ok(());
        }
        let r = match &mut self.out {
            SerialOutput::Stdout => io::stdout().lock().flush(),
            SerialOutput::File(f) => f.flush(),
            _ => Ok(()),
        };
        self.note(r)
    }
}

/// The UART's interrupt line: an irqfd's eventfd (one edge per write), or
/// not connected (no irqchip: guests poll).
pub struct UartIrq(Option<EventFd>);

impl Trigger for UartIrq {
    type E = io::Error;
    fn trigger(&self) -> io::Result<()> {
        match &self.0 {
            Some(fd) => fd.write(1),
            None => Ok(()),
        }
    }
}

/// A 16550 UART on the PIO bus.
pub struct Uart {
    inner: Mutex<Serial<UartIrq, vm_superio::serial::NoEvents, SerialWriter>>,
}

impl Uart {
    /// A UART writing to `out`, its interrupt line not connected.
    pub fn new(out: SerialOutput) -> Self {
        Self {
            inner: Mutex::new(Serial::new(UartIrq(None), SerialWriter::new(out))),
        }
    }

    /// A UART writing to `out` that raises its interrupt by writing to
    /// `irq` (an eventfd registered as an irqfd on the UART's GSI).
    pub fn with_irq(out: SerialOutput, irq: EventFd) -> Self {
        Self {
            inner: Mutex::new(Serial::new(UartIrq(Some(irq)), SerialWriter::new(out))),
        }
    }

    /// Queues bytes typed at the console for the guest to read (RBR), and
    /// raises the RX interrupt if the guest enabled it. Returns how many
    /// fit: the FIFO holds 64, the rest are for the caller to retry.
    pub fn enqueue_input(&self, bytes: &[u8]) -> usize {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let room = s.fifo_capacity().min(bytes.len());
        if room == 0 {
            return 0;
        }
        s.enqueue_raw_bytes(&bytes[..room]).unwrap_or(0)
    }

    /// Room left in the receive FIFO.
    pub fn input_room(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fifo_capacity()
    }
}

impl BusDevice for Uart {
    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        // UART registers are 8 bits wide and the bus hands over single
        // bytes; a wider direct call sees the register in the low byte and
        // all-ones above, as an unclaimed bus would.
        fill_all_ones(data);
        if offset < UART_LEN {
            if let Some(first) = data.first_mut() {
                *first = self
                    .inner
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .read(offset as u8);
            }
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        if offset < UART_LEN {
            if let Some(&value) = data.first() {
                let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
                // A failed write (a closed stdout, a full disk) is kept by
                // the writer, which asks for the stop.
                let _ = s.write(offset as u8, value);
                if let Some(stop) = s.writer().stop() {
                    return IoOutcome::Stop(stop);
                }
            }
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's serial_io_ops: byte registers (`.impl` 1..=1), so an inw
        // of LSR reads LSR, then MSR.
        AccessSizes::BYTES
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn uart() -> (Uart, Arc<Mutex<Vec<u8>>>) {
        let buf = Arc::new(Mutex::new(Vec::new()));
        (Uart::new(SerialOutput::Capture(buf.clone())), buf)
    }

    #[test]
    fn thr_writes_are_output_and_lsr_shows_empty() {
        let (u, buf) = uart();
        let mut lsr = [0u8];
        u.read(0, 0x3f8, 5, &mut lsr);
        assert_eq!(lsr[0] & 0x60, 0x60);
        for b in b"hi\n" {
            assert_eq!(u.write(0, 0x3f8, 0, &[*b]), IoOutcome::Continue);
        }
        assert_eq!(&*buf.lock().unwrap(), b"hi\n");
    }

    /// The stop a write to a full disk asks for.
    pub(crate) fn storage_full(outcome: IoOutcome) -> bool {
        matches!(outcome, IoOutcome::Stop(StopReason::OutputFailed { errno })
            if io::Error::from_raw_os_error(errno).kind() == io::ErrorKind::StorageFull)
    }

    #[test]
    fn a_failed_write_asks_the_machine_to_stop() {
        let full = File::options().write(true).open("/dev/full").unwrap();
        let u = Uart::new(SerialOutput::File(full));
        // The failure is kept, and every later write asks again (the bytes
        // are dropped: the failure is already on its way).
        assert!(storage_full(u.write(0, 0x3f8, 0, b"x")));
        assert!(storage_full(u.write(0, 0x3f8, 0, b"y")));
        let (ok, _) = uart();
        assert_eq!(ok.write(0, 0x3f8, 0, b"x"), IoOutcome::Continue);
    }

    #[test]
    fn divisor_latch_writes_are_not_printed() {
        let (u, buf) = uart();
        let _ = u.write(0, 0, 3, &[0x80]); // LCR.DLAB = 1
        let _ = u.write(0, 0, 0, &[0x01]); // divisor low
        let _ = u.write(0, 0, 1, &[0x00]); // divisor high
        let _ = u.write(0, 0, 3, &[0x03]); // 8N1, DLAB = 0
        let _ = u.write(0, 0, 0, b"x");
        assert_eq!(&*buf.lock().unwrap(), b"x");
        let mut lcr = [0u8];
        u.read(0, 0, 3, &mut lcr);
        assert_eq!(lcr[0], 0x03);
    }

    #[test]
    fn odd_widths_and_offsets_are_harmless() {
        let (u, _) = uart();
        let mut d = [0u8; 4];
        u.read(0, 0, 5, &mut d);
        assert_eq!(&d[1..], &[0xff; 3]);
        u.read(0, 0, 100, &mut d);
        assert_eq!(d, [0xff; 4]);
        assert_eq!(u.write(0, 0, 100, &[1, 2, 3, 4]), IoOutcome::Continue);
        assert_eq!(u.write(0, 0, 0, &[]), IoOutcome::Continue);
        let mut empty: [u8; 0] = [];
        u.read(0, 0, 0, &mut empty);
    }
}
