//! What the virtio-mmio targets (`virtio_blk`, `virtio_net`) share: a
//! device behind the transport on a small guest, and the input ops every
//! one of them has (register accesses, descriptors, guest bytes, a head
//! made available, a driver's setup). Each op reads its input in the same
//! order as the targets always did, so the committed seeds keep their
//! meaning.

use std::sync::Arc;

use trapline_bus::BusDevice;
use trapline_devices::virtio::{VirtioDevice, VirtioInterrupt, VirtioMmio};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use crate::{width, Input};

/// The transport's registers the ops name (virtio-mmio, layout 2).
const QUEUE_SEL: u64 = 0x30;
const QUEUE_NUM: u64 = 0x38;
const QUEUE_READY: u64 = 0x44;
const QUEUE_NOTIFY: u64 = 0x50;
const STATUS: u64 = 0x70;
const DRV_FEAT: u64 = 0x20;
const DRV_FEAT_SEL: u64 = 0x24;
const DESC_LO: u64 = 0x80;
const AVAIL_LO: u64 = 0x90;
const USED_LO: u64 = 0xa0;

/// A queue's rings in guest memory: descriptor table, avail ring, used ring.
pub type Rings = [u64; 3];

/// A device behind virtio-mmio (EVENT_IDX offered) on a guest of `ram`
/// bytes at 0, its interrupt an eventfd nobody reads.
pub struct VirtioRig {
    /// The guest's memory (the device's view of it too).
    pub mem: GuestMemoryMmap,
    /// The transport.
    pub dev: VirtioMmio,
}

impl VirtioRig {
    /// `device` behind the transport on `ram` bytes of guest memory.
    pub fn new(device: Box<dyn VirtioDevice>, ram: u64) -> Self {
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), ram as usize)]).unwrap();
        let irq = EventFd::new(EFD_NONBLOCK).unwrap();
        let dev = VirtioMmio::new(
            device,
            mem.clone(),
            Arc::new(VirtioInterrupt::irqfd(irq)),
            true,
        )
        .unwrap();
        VirtioRig { mem, dev }
    }

    /// A 32-bit register write (its result is the device's business).
    pub fn write32(&self, off: u64, v: u32) {
        let _ = self.dev.write(0, 0, off, &v.to_le_bytes());
    }

    /// Op: a 32-bit register write `[offset u16][value u32]`.
    pub fn write_reg(&self, input: &mut Input<'_>) {
        let off = u64::from(input.u16()) & 0xfff;
        self.write32(off, input.u32());
    }

    /// Op: a register write of any width `[offset u16][width sel][bytes]`.
    pub fn write_reg_any_width(&self, input: &mut Input<'_>) {
        let off = u64::from(input.u16()) & 0x1fff;
        let sel = input.u8();
        let n = width(sel, input);
        let bytes = input.bytes(n).to_vec();
        let _ = self.dev.write(0, 0, off, &bytes);
    }

    /// Op: a register read `[offset u16][width sel]`, twice: both fill the
    /// buffer alike (a read has no side effect).
    pub fn read_reg_twice(&self, input: &mut Input<'_>) {
        let off = u64::from(input.u16()) & 0x1fff;
        let sel = input.u8();
        let n = width(sel, input);
        let mut a = vec![0x5au8; n];
        let mut b = vec![0xa5u8; n];
        self.dev.read(0, 0, off, &mut a);
        self.dev.read(0, 0, off, &mut b);
        assert_eq!(a, b, "reads fill the buffer (and have no side effect)");
    }

    /// Op: a descriptor in the table at `table`
    /// `[index u8][addr u32][len u32][flags u16][next u16]`.
    pub fn write_desc(&self, input: &mut Input<'_>, table: u64) {
        let i = u64::from(input.u8());
        let a = GuestAddress(table + 16 * i);
        let _ = self.mem.write_obj(u64::from(input.u32()), a);
        let _ = self.mem.write_obj(input.u32(), GuestAddress(a.0 + 8));
        let _ = self.mem.write_obj(input.u16(), GuestAddress(a.0 + 12));
        let _ = self.mem.write_obj(input.u16(), GuestAddress(a.0 + 14));
    }

    /// Op: guest bytes `[gpa u16][n u8][bytes]`.
    pub fn write_guest_bytes(&self, input: &mut Input<'_>) {
        let gpa = u64::from(input.u16());
        let n = usize::from(input.u8());
        let _ = self.mem.write_slice(input.bytes(n), GuestAddress(gpa));
    }

    /// `head` into the avail ring at `avail` (slot `idx` mod 256), `idx`
    /// advanced and published.
    pub fn make_available(&self, avail: u64, idx: &mut u16, head: u16) {
        let _ = self
            .mem
            .write_obj(head, GuestAddress(avail + 4 + 2 * u64::from(*idx % 256)));
        *idx = idx.wrapping_add(1);
        let _ = self.mem.write_obj(*idx, GuestAddress(avail + 2));
    }

    /// QueueNotify with `queue`.
    pub fn notify(&self, queue: u32) {
        self.write32(QUEUE_NOTIFY, queue);
    }

    /// A driver's start: ACKNOWLEDGE, DRIVER, `features` (VERSION_1
    /// always) and FEATURES_OK.
    pub fn negotiate(&self, features: u64) {
        for (off, v) in [
            (STATUS, 1),
            (STATUS, 3),
            (DRV_FEAT_SEL, 0),
            (DRV_FEAT, features as u32),
            (DRV_FEAT_SEL, 1),
            (DRV_FEAT, (features >> 32) as u32 | 1),
            (STATUS, 11),
        ] {
            self.write32(off, v);
        }
    }

    /// Queue `queue` of `size` entries at `rings` (their low halves), ready.
    pub fn queue_on(&self, queue: u32, size: u16, [desc, avail, used]: Rings) {
        for (off, v) in [
            (QUEUE_SEL, queue),
            (QUEUE_NUM, u32::from(size)),
            (DESC_LO, desc as u32),
            (AVAIL_LO, avail as u32),
            (USED_LO, used as u32),
            (QUEUE_READY, 1),
        ] {
            self.write32(off, v);
        }
    }

    /// DRIVER_OK.
    pub fn driver_ok(&self) {
        self.write32(STATUS, 15);
    }

    /// The status register never shows DRIVER_OK without FEATURES_OK.
    pub fn check_status(&self) {
        let mut st = [0u8; 4];
        self.dev.read(0, 0, STATUS, &mut st);
        if st[0] & 4 != 0 {
            assert_ne!(st[0] & 8, 0, "DRIVER_OK without FEATURES_OK");
        }
    }
}
