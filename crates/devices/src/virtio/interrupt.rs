//! How a virtio-mmio device interrupts the guest: the InterruptStatus
//! register and a signal on its GSI, either KVM_IRQ_LINE from the VMM
//! (`--virtio-irq line`) or an irqfd bound to the GSI (`--virtio-irq irqfd`).
//! Both are edge-style pulses, as Firecracker's irqfds are: the guest's
//! interrupt handler reads InterruptStatus and acknowledges it.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use vmm_sys_util::eventfd::EventFd;

use crate::pc_testdev::IrqLine;

/// InterruptStatus bit: the device used buffers.
pub const INT_VRING: u32 = 1;
/// InterruptStatus bit: the configuration (or status) changed.
pub const INT_CONFIG: u32 = 2;

enum Signal {
    Line { line: Arc<dyn IrqLine>, gsi: u32 },
    Irqfd(EventFd),
}

/// A device's interrupt: status bits and how they reach the guest.
pub struct VirtioInterrupt {
    status: AtomicU32,
    raised: AtomicU64,
    /// A kernel back end signals the irqfd itself and cannot set the
    /// status: InterruptStatus then always says "used buffers".
    vring_always: AtomicBool,
    signal: Signal,
}

impl VirtioInterrupt {
    /// Through KVM_IRQ_LINE on `gsi` (high then low).
    pub fn line(line: Arc<dyn IrqLine>, gsi: u32) -> Self {
        Self::with(Signal::Line { line, gsi })
    }

    /// Through an eventfd KVM has bound to the device's GSI as an irqfd.
    pub fn irqfd(fd: EventFd) -> Self {
        Self::with(Signal::Irqfd(fd))
    }

    fn with(signal: Signal) -> Self {
        Self {
            status: AtomicU32::new(0),
            raised: AtomicU64::new(0),
            vring_always: AtomicBool::new(false),
            signal,
        }
    }

    /// Set `bits` in InterruptStatus and signal the guest.
    pub fn trigger(&self, bits: u32) {
        self.status.fetch_or(bits, Ordering::AcqRel);
        self.raised.fetch_add(1, Ordering::Relaxed);
        match &self.signal {
            Signal::Line { line, gsi } => {
                line.set_irq(*gsi, true);
                line.set_irq(*gsi, false);
            }
            // Fails only if the counter would overflow (2^64 - 2 unread
            // signals): KVM consumes it at once, so that cannot happen.
            Signal::Irqfd(fd) => {
                let _ = fd.write(1);
            }
        }
    }

    /// InterruptStatus.
    pub fn status(&self) -> u32 {
        let vring = if self.vring_always.load(Ordering::Relaxed) {
            INT_VRING
        } else {
            0
        };
        self.status.load(Ordering::Acquire) | vring
    }

    /// A kernel back end took the data path (`true`) or gave it back: the
    /// guest's handler, which looks at InterruptStatus before the rings,
    /// must see "used buffers" on every interrupt the kernel sends.
    pub fn set_vring_always(&self, on: bool) {
        self.vring_always.store(on, Ordering::Relaxed);
    }

    /// The irqfd's eventfd (`--virtio-irq irqfd`), the call eventfd a
    /// kernel back end signals; `None` on the line path.
    pub fn call_eventfd(&self) -> Option<&EventFd> {
        match &self.signal {
            Signal::Irqfd(fd) => Some(fd),
            Signal::Line { .. } => None,
        }
    }

    /// InterruptACK: clear `bits`.
    pub fn ack(&self, bits: u32) {
        self.status.fetch_and(!bits, Ordering::AcqRel);
    }

    /// Reset: no pending bits.
    pub fn reset(&self) {
        self.status.store(0, Ordering::Release);
    }

    /// Interrupts signalled so far.
    pub fn raised(&self) -> u64 {
        self.raised.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use vmm_sys_util::eventfd::EFD_NONBLOCK;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<(u32, bool)>>);
    impl IrqLine for Recorder {
        fn set_irq(&self, line: u32, level: bool) {
            self.0.lock().unwrap().push((line, level));
        }
    }

    #[test]
    fn a_line_pulses_its_gsi() {
        let rec = Arc::new(Recorder::default());
        let i = VirtioInterrupt::line(rec.clone(), 5);
        i.trigger(INT_VRING);
        assert_eq!(*rec.0.lock().unwrap(), vec![(5, true), (5, false)]);
        assert_eq!(i.status(), INT_VRING);
        i.trigger(INT_CONFIG);
        i.ack(INT_VRING);
        assert_eq!(i.status(), INT_CONFIG);
        assert_eq!(i.raised(), 2);
    }

    #[test]
    fn an_irqfd_is_written() {
        let fd = EventFd::new(EFD_NONBLOCK).unwrap();
        let i = VirtioInterrupt::irqfd(fd.try_clone().unwrap());
        i.trigger(INT_VRING);
        i.trigger(INT_VRING);
        assert_eq!(fd.read().unwrap(), 2);
        i.reset();
        assert_eq!(i.status(), 0);
    }
}
