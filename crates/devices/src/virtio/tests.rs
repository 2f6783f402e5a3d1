//! The transport and virtio-blk driven the way a driver would, on plain
//! guest memory (no KVM), including hostile rings.

use std::io::Write as _;
use std::sync::Arc;

use trapline_bus::BusDevice;
use vm_memory::{Address, Bytes, GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};
use vmm_sys_util::tempfile::TempFile;

use super::block::{Block, DiskFile};
use super::interrupt::INT_CONFIG;
use super::status::bits::*;
use super::*;

const DESC: u64 = 0x1000;
const AVAIL: u64 = 0x2000;
const USED: u64 = 0x3000;
const HDR: u64 = 0x4000;
const STATUS: u64 = 0x5000;
const DATA: u64 = 0x10000;
const RAM: usize = 0x40000;
const NEXT: u16 = 1;
const WRITE: u16 = 2;

struct Driver {
    dev: VirtioMmio,
    mem: GuestMemoryMmap,
    irq: EventFd,
    disk: TempFile,
    avail_idx: u16,
}

fn disk_with_pattern(sectors: u64) -> TempFile {
    let t = TempFile::new().unwrap();
    let bytes: Vec<u8> = (0..sectors * 512).map(|i| (i % 251) as u8).collect();
    t.as_file().write_all(&bytes).unwrap();
    t
}

impl Driver {
    fn new(read_only: bool, event_idx: bool) -> Self {
        let disk = disk_with_pattern(64);
        let mem = GuestMemoryMmap::from_ranges(&[(GuestAddress(0), RAM)]).unwrap();
        let irq = EventFd::new(EFD_NONBLOCK).unwrap();
        let interrupt = Arc::new(VirtioInterrupt::irqfd(irq.try_clone().unwrap()));
        let blk = Block::new(DiskFile::open(disk.as_path(), read_only).unwrap());
        let dev = VirtioMmio::new(Box::new(blk), mem.clone(), interrupt, event_idx).unwrap();
        Self {
            dev,
            mem,
            irq,
            disk,
            avail_idx: 0,
        }
    }

    fn w(&self, off: u64, v: u32) {
        let _ = self.dev.write(0, 0, off, &v.to_le_bytes());
    }

    fn r(&self, off: u64) -> u32 {
        let mut b = [0u8; 4];
        self.dev.read(0, 0, off, &mut b);
        u32::from_le_bytes(b)
    }

    /// Negotiate `features` and set up queue 0 with `size` entries.
    fn setup(&mut self, features: u64, size: u32) {
        self.w(0x70, 1);
        self.w(0x70, 3);
        self.w(0x24, 0);
        self.w(0x20, features as u32);
        self.w(0x24, 1);
        self.w(0x20, (features >> 32) as u32);
        self.w(0x70, 11);
        self.w(0x30, 0);
        self.w(0x38, size);
        self.w(0x80, DESC as u32);
        self.w(0x90, AVAIL as u32);
        self.w(0xa0, USED as u32);
        self.w(0x44, 1);
        self.w(0x70, 15);
    }

    fn desc(&self, i: u16, addr: u64, len: u32, flags: u16, next: u16) {
        let a = GuestAddress(DESC + 16 * u64::from(i));
        self.mem.write_obj(addr, a).unwrap();
        self.mem.write_obj(len, a.unchecked_add(8)).unwrap();
        self.mem.write_obj(flags, a.unchecked_add(12)).unwrap();
        self.mem.write_obj(next, a.unchecked_add(14)).unwrap();
    }

    fn submit(&mut self, head: u16) {
        let slot = u64::from(self.avail_idx % 16);
        self.mem
            .write_obj(head, GuestAddress(AVAIL + 4 + 2 * slot))
            .unwrap();
        self.avail_idx = self.avail_idx.wrapping_add(1);
        self.mem
            .write_obj(self.avail_idx, GuestAddress(AVAIL + 2))
            .unwrap();
        self.w(0x50, 0);
    }

    fn used_idx(&self) -> u16 {
        self.mem.read_obj(GuestAddress(USED + 2)).unwrap()
    }

    fn used(&self, i: u16) -> (u32, u32) {
        let a = USED + 4 + 8 * u64::from(i % 16);
        (
            self.mem.read_obj(GuestAddress(a)).unwrap(),
            self.mem.read_obj(GuestAddress(a + 4)).unwrap(),
        )
    }

    /// A header + data + status request at descriptors 0..3; returns
    /// (status byte, used length).
    fn request(&mut self, kind: u32, sector: u64, len: u32) -> (u8, u32) {
        let mut h = [0u8; 16];
        h[..4].copy_from_slice(&kind.to_le_bytes());
        h[8..].copy_from_slice(&sector.to_le_bytes());
        self.mem.write_slice(&h, GuestAddress(HDR)).unwrap();
        self.mem.write_obj(0xffu8, GuestAddress(STATUS)).unwrap();
        let data_flags = if kind == 1 { NEXT } else { NEXT | WRITE };
        self.desc(0, HDR, 16, NEXT, 1);
        self.desc(1, DATA, len, data_flags, 2);
        self.desc(2, STATUS, 1, WRITE, 0);
        let before = self.used_idx();
        self.submit(0);
        assert_eq!(
            self.used_idx(),
            before.wrapping_add(1),
            "request not completed"
        );
        let (id, used_len) = self.used(before);
        assert_eq!(id, 0);
        (self.mem.read_obj(GuestAddress(STATUS)).unwrap(), used_len)
    }

    fn file_bytes(&self) -> Vec<u8> {
        std::fs::read(self.disk.as_path()).unwrap()
    }
}

const ALL: u64 = 1 << 32 | 1 << 29 | 1 << 9 | 1 << 2;

#[test]
fn identification_and_config() {
    let d = Driver::new(false, true);
    assert_eq!(d.r(0), 0x7472_6976);
    assert_eq!(d.r(4), 2);
    assert_eq!(d.r(8), 2);
    d.w(0x14, 0);
    assert_eq!(d.r(0x10), 1 << 29 | 1 << 9 | 1 << 2);
    d.w(0x14, 1);
    assert_eq!(d.r(0x10), 1);
    assert_eq!(d.r(0x34), 256);
    d.w(0x30, 1);
    assert_eq!(d.r(0x34), 0, "only one queue");
    // capacity, any width
    let mut cap = [0u8; 8];
    d.dev.read(0, 0, 0x100, &mut cap);
    assert_eq!(u64::from_le_bytes(cap), 64);
    let mut b = [0u8; 1];
    d.dev.read(0, 0, 0x100, &mut b);
    assert_eq!(b[0], 64);
    assert_eq!(d.r(0x10c), super::block::SEG_MAX);
    assert_eq!(d.r(0xffc), 0);
    // Unaligned or narrow register accesses read as 0.
    let mut two = [1u8; 2];
    d.dev.read(0, 0, 0, &mut two);
    assert_eq!(two, [0, 0]);
    let ro = Driver::new(true, false);
    ro.w(0x14, 0);
    assert_eq!(ro.r(0x10), 1 << 9 | 1 << 5 | 1 << 2);
}

#[test]
fn reads_writes_flush_and_get_id() {
    for event_idx in [false, true] {
        let mut d = Driver::new(false, event_idx);
        let features = if event_idx { ALL } else { ALL & !(1 << 29) };
        d.setup(features, 16);
        assert_eq!(d.r(0x70), 15);
        let (st, len) = d.request(0, 2, 1024);
        assert_eq!((st, len), (0, 1025));
        let mut got = vec![0u8; 1024];
        d.mem.read_slice(&mut got, GuestAddress(DATA)).unwrap();
        assert_eq!(got, d.file_bytes()[1024..2048]);
        assert_ne!(d.irq.read().unwrap(), 0, "completion interrupt");
        assert_eq!(d.r(0x60) & 1, 1);
        d.w(0x64, 1);
        assert_eq!(d.r(0x60), 0);

        d.mem.write_slice(&[0x5a; 512], GuestAddress(DATA)).unwrap();
        assert_eq!(d.request(1, 63, 512), (0, 1));
        assert_eq!(d.file_bytes()[63 * 512..], [0x5a; 512]);
        assert_eq!(d.request(4, 0, 0), (0, 1));
        let (st, len) = d.request(8, 0, 20);
        assert_eq!((st, len), (0, 21));
        assert_eq!(d.request(0x1234, 0, 16).0, 2, "unsupported");
        assert_eq!(d.dev.completions(), 5);
    }
}

#[test]
fn out_of_bounds_and_partial_requests_fail_without_touching_the_file() {
    let mut d = Driver::new(false, true);
    d.setup(ALL, 16);
    let before = d.file_bytes();
    for (sector, len) in [
        (64, 512),
        (63, 1024),
        (u64::MAX, 512),
        (u64::MAX / 256, 512),
        (0, 100),
    ] {
        assert_eq!(d.request(1, sector, len).0, 1, "write {sector}+{len}");
        assert_eq!(d.request(0, sector, len).0, 1, "read {sector}+{len}");
    }
    assert_eq!(d.file_bytes(), before);
    assert_eq!(
        d.r(0x70),
        15,
        "errors the protocol can report need no reset"
    );
}

#[test]
fn a_read_only_disk_refuses_writes() {
    let mut d = Driver::new(true, false);
    d.setup(1 << 32 | 1 << 9 | 1 << 5, 16);
    let before = d.file_bytes();
    d.mem.write_slice(&[0xee; 512], GuestAddress(DATA)).unwrap();
    assert_eq!(d.request(1, 0, 512).0, 1);
    assert_eq!(d.file_bytes(), before);
    assert_eq!(d.request(0, 0, 512), (0, 513));
    assert_eq!(d.request(4, 0, 0).0, 0);
}

#[test]
fn notify_before_driver_ok_is_dropped() {
    let mut d = Driver::new(false, true);
    d.w(0x70, 1);
    d.desc(0, HDR, 16, NEXT, 1);
    d.submit(0);
    assert_eq!(d.dev.completions(), 0);
    assert!(d.irq.read().is_err(), "no interrupt");
    // Unknown queue indices are ignored too, once live.
    d.w(0x70, 0);
    d.setup(ALL, 16);
    d.w(0x50, 7);
    d.w(0x50, u32::MAX);
    assert_eq!(d.r(0x70), 15);
}

fn assert_needs_reset(d: &Driver) {
    assert_eq!(d.r(0x70) as u8 & DEVICE_NEEDS_RESET, DEVICE_NEEDS_RESET);
    assert_eq!(d.r(0x60) & INT_CONFIG, INT_CONFIG);
    assert_eq!(d.dev.resets_requested(), 1);
    // A reset brings the device back.
    d.w(0x70, 0);
    assert_eq!(d.r(0x70), 0);
    assert_eq!(d.r(0x60), 0);
}

#[test]
fn descriptors_outside_ram_break_the_device_not_the_vmm() {
    let mut d = Driver::new(false, true);
    d.setup(ALL, 16);
    let before = d.file_bytes();
    d.desc(0, HDR, 16, NEXT, 1);
    d.desc(1, RAM as u64 - 256, 512, NEXT, 2); // straddles the end of RAM
    d.desc(2, STATUS, 1, WRITE, 0);
    let mut h = [0u8; 16];
    h[0] = 1;
    d.mem.write_slice(&h, GuestAddress(HDR)).unwrap();
    d.submit(0);
    assert_eq!(d.file_bytes(), before);
    assert_needs_reset(&d);
    // Once broken, further notifies are dropped.
    d.setup(ALL, 16);
    d.desc(0, u64::MAX - 8, 16, NEXT, 1);
    d.submit(0);
    assert_eq!(d.file_bytes(), before);
}

#[test]
fn chain_loops_and_overflowing_lengths_end() {
    let mut d = Driver::new(false, true);
    d.setup(ALL, 16);
    let before = d.file_bytes();
    // 0 -> 1 -> 0 -> ...: the walk ends after queue-size descriptors.
    d.desc(0, HDR, 16, NEXT, 1);
    d.desc(1, DATA, 512, NEXT | WRITE, 0);
    d.submit(0);
    assert_eq!(d.used_idx(), 1, "dropped, not stuck");
    let mut d = Driver::new(false, true);
    d.setup(ALL, 16);
    // Lengths summing past 2^32.
    d.desc(0, HDR, 16, NEXT, 1);
    d.desc(1, DATA, u32::MAX, NEXT, 2);
    d.desc(2, DATA, u32::MAX, NEXT, 3);
    d.desc(3, STATUS, 1, WRITE, 0);
    d.submit(0);
    assert_needs_reset(&d);
    // A head index past the queue size.
    let mut d = Driver::new(false, true);
    d.setup(ALL, 16);
    d.submit(200);
    assert_needs_reset(&d);
    assert_eq!(d.file_bytes(), before);
}

#[test]
fn bad_queue_sizes_and_avail_indices_ask_for_a_reset() {
    for size in [0, 3, 24, 512] {
        let mut d = Driver::new(false, true);
        d.setup(ALL, size);
        d.submit(0);
        assert_needs_reset(&d);
    }
    // An avail index more than a queue ahead.
    let mut d = Driver::new(false, true);
    d.setup(ALL, 16);
    d.mem.write_obj(100u16, GuestAddress(AVAIL + 2)).unwrap();
    d.w(0x50, 0);
    assert_needs_reset(&d);
}

#[test]
fn random_register_traffic_never_panics() {
    let mut rng = crate::hostile::Xorshift::new(0x7669_7274);
    for _ in 0..20 {
        let mut d = Driver::new(false, rng.next().is_multiple_of(2));
        for _ in 0..2000 {
            let r = rng.next();
            let offset = match r % 4 {
                0 => r >> 8 & 0xfc,
                1 => r >> 8 & 0xfff,
                _ => [0x70, 0x50, 0x38, 0x44, 0x80, 0x90, 0xa0, 0x20][(r >> 8) as usize % 8],
            };
            let v = (rng.next() as u32) & [0xf, 0xffff, u32::MAX][(r >> 20) as usize % 3];
            if r >> 40 & 1 == 0 {
                d.w(offset, v);
            } else {
                let _ = d.r(offset);
            }
            if r >> 41 & 7 == 0 {
                let i = (r >> 44) as u16 % 16;
                d.desc(
                    i,
                    rng.next() % (RAM as u64 + 0x1000),
                    rng.next() as u32 % 4096,
                    (r >> 50) as u16 & 3,
                    (r >> 52) as u16 % 20,
                );
                d.submit((r >> 56) as u16 % 18);
            }
        }
        assert_eq!(d.file_bytes().len(), 64 * 512, "the file never grows");
    }
}
