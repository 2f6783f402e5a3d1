//! The per-queue registers of the MMIO transport (QueueNum, QueueReady,
//! the three ring addresses) on top of `virtio_queue::Queue`.

use virtio_queue::{Queue, QueueT};
use vm_memory::GuestMemoryMmap;

/// Register offsets (virtio 1.x §4.2.2).
pub mod offsets {
    /// QueueNumMax (R).
    pub const NUM_MAX: u64 = 0x34;
    /// QueueNum (W).
    pub const NUM: u64 = 0x38;
    /// QueueReady (RW).
    pub const READY: u64 = 0x44;
    /// QueueDescLow (W).
    pub const DESC_LOW: u64 = 0x80;
    /// QueueDescHigh (W).
    pub const DESC_HIGH: u64 = 0x84;
    /// QueueDriverLow (W): the available ring.
    pub const DRIVER_LOW: u64 = 0x90;
    /// QueueDriverHigh (W).
    pub const DRIVER_HIGH: u64 = 0x94;
    /// QueueDeviceLow (W): the used ring.
    pub const DEVICE_LOW: u64 = 0xa0;
    /// QueueDeviceHigh (W).
    pub const DEVICE_HIGH: u64 = 0xa4;
}
use offsets::*;

/// One virtqueue and what the driver asked of it.
pub struct QueueSlot {
    /// The split virtqueue.
    pub queue: Queue,
    /// The driver wrote a QueueNum the queue cannot take (0, above the
    /// maximum, not a power of two): the queue must not be used.
    pub bad_size: bool,
}

impl QueueSlot {
    /// A reset queue of at most `max_size` entries (a power of two).
    pub fn new(max_size: u16) -> Option<Self> {
        Some(Self {
            queue: Queue::new(max_size).ok()?,
            bad_size: false,
        })
    }

    /// Back to the reset state.
    pub fn reset(&mut self) {
        self.queue.reset();
        self.bad_size = false;
    }

    /// A register read.
    pub fn read(&self, offset: u64) -> u32 {
        match offset {
            NUM_MAX => self.queue.max_size().into(),
            NUM => self.queue.size().into(),
            READY => self.queue.ready().into(),
            _ => 0,
        }
    }

    /// A register write. Only `READY` may be written once the queue is
    /// ready (to turn it off); other writes to a ready queue are ignored.
    pub fn write(&mut self, offset: u64, value: u32) {
        if offset == READY {
            self.queue.set_ready(value == 1);
            return;
        }
        if self.queue.ready() {
            return;
        }
        let q = &mut self.queue;
        match offset {
            NUM => {
                self.bad_size = q.try_set_size(value.try_into().unwrap_or(0)).is_err();
            }
            DESC_LOW => q.set_desc_table_address(Some(value), None),
            DESC_HIGH => q.set_desc_table_address(None, Some(value)),
            DRIVER_LOW => q.set_avail_ring_address(Some(value), None),
            DRIVER_HIGH => q.set_avail_ring_address(None, Some(value)),
            DEVICE_LOW => q.set_used_ring_address(Some(value), None),
            DEVICE_HIGH => q.set_used_ring_address(None, Some(value)),
            _ => {}
        }
    }

    /// Ready, with a valid size and rings inside guest RAM and aligned.
    pub fn usable(&self, mem: &GuestMemoryMmap) -> bool {
        !self.bad_size && self.queue.is_valid(mem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_memory::GuestAddress;

    fn mem() -> GuestMemoryMmap {
        GuestMemoryMmap::from_ranges(&[(GuestAddress(0), 0x10000)]).unwrap()
    }

    fn setup(s: &mut QueueSlot, size: u32, desc: u64) {
        s.write(NUM, size);
        s.write(DESC_LOW, desc as u32);
        s.write(DESC_HIGH, (desc >> 32) as u32);
        s.write(DRIVER_LOW, 0x2000);
        s.write(DEVICE_LOW, 0x3000);
        s.write(READY, 1);
    }

    #[test]
    fn a_well_formed_queue_is_usable() {
        let mut s = QueueSlot::new(256).unwrap();
        assert_eq!(s.read(NUM_MAX), 256);
        setup(&mut s, 16, 0x1000);
        assert_eq!(s.read(READY), 1);
        assert!(s.usable(&mem()));
        // Ring addresses are frozen while ready.
        s.write(DESC_LOW, 0x5000);
        assert_eq!(s.queue.desc_table(), 0x1000);
    }

    #[test]
    fn bad_sizes_make_the_queue_unusable() {
        for size in [0, 3, 100, 512, 0x1_0000, u32::MAX] {
            let mut s = QueueSlot::new(256).unwrap();
            setup(&mut s, size, 0x1000);
            assert!(!s.usable(&mem()), "size {size}");
        }
    }

    #[test]
    fn rings_outside_ram_make_the_queue_unusable() {
        for desc in [0xfff0, 0x1_0000_0000, !0xf] {
            let mut s = QueueSlot::new(256).unwrap();
            setup(&mut s, 16, desc);
            assert!(!s.usable(&mem()), "desc {desc:#x}");
        }
        // A misaligned descriptor table is refused (the address stays at
        // its reset value, inside RAM: harmless).
        let mut s = QueueSlot::new(256).unwrap();
        setup(&mut s, 16, 0x1001);
        assert_ne!(s.queue.desc_table(), 0x1001);
    }

    #[test]
    fn non_power_of_two_maximum_is_refused() {
        assert!(QueueSlot::new(100).is_none());
        assert!(QueueSlot::new(0).is_none());
    }
}
