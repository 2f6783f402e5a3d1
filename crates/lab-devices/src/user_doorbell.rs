//! The lab's user-space doorbell (seed 002's "qemu-mmio" path): a guest
//! store exits to trapline, and this device signals an eventfd that a
//! consumer thread reads — what a VMM without ioeventfd does for every
//! virtqueue kick.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use trapline_bus::{AccessSizes, BusDevice, IoOutcome};
use vmm_sys_util::eventfd::EventFd;

/// Two pages: page 0 rings the user-space doorbell; page 1 is where KVM's
/// ioeventfd doorbell sits, so a write that reaches user space there is a
/// leak, counted and not signalled.
pub struct Doorbell {
    fd: EventFd,
    leaked: AtomicU64,
    /// The size of each of its two pages.
    page: u64,
}

impl Doorbell {
    /// A doorbell signalling `fd`, on two x86 probe pages (4 KiB).
    pub fn new(fd: EventFd) -> Self {
        Self::with_page(fd, trapline_abi::PROBE_PAGE_SIZE)
    }

    /// A doorbell signalling `fd` on two pages of `page` bytes (the arm64
    /// `virt` machine's probe pages are 64 KiB).
    pub fn with_page(fd: EventFd, page: u64) -> Self {
        Self {
            fd,
            leaked: AtomicU64::new(0),
            page,
        }
    }

    /// Writes that reached user space on the ioeventfd page.
    pub fn leaked(&self) -> u64 {
        self.leaked.load(Relaxed)
    }
}

impl BusDevice for Doorbell {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        data.fill(0);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, _data: &[u8]) -> IoOutcome {
        if offset < self.page {
            // An eventfd write only fails when the counter would overflow
            // (2^64 - 2 unread rings); the consumer would then be hopelessly
            // behind anyway.
            let _ = self.fd.write(1);
        } else {
            self.leaked.fetch_add(1, Relaxed);
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // The lab's own page: any doorbell write arrives whole.
        AccessSizes::ANY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vmm_sys_util::eventfd::EFD_NONBLOCK;

    #[test]
    fn rings_signal_the_eventfd_and_leaks_are_counted() {
        let fd = EventFd::new(EFD_NONBLOCK).unwrap();
        let d = Doorbell::new(fd.try_clone().unwrap());
        for _ in 0..3 {
            let _ = d.write(0, 0, 8, &[1, 2, 3, 4]);
        }
        let _ = d.write(0, 0, 0x1004, &[1]);
        assert_eq!(fd.read().unwrap(), 3);
        assert_eq!(d.leaked(), 1);
        let wide = Doorbell::with_page(fd.try_clone().unwrap(), 0x1_0000);
        let _ = wide.write(0, 0, 0x1004, &[1]);
        let _ = wide.write(0, 0, 0x1_0004, &[1]);
        assert_eq!(fd.read().unwrap(), 1);
        assert_eq!(wide.leaked(), 1);
        let mut r = [9u8; 4];
        d.read(0, 0, 0, &mut r);
        assert_eq!(r, [0; 4]);
    }
}
