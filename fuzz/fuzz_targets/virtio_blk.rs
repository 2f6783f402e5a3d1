//! virtio-mmio + virtio-blk: the register file, the queue walk (rust-vmm's
//! `virtio-queue`) and request parsing, on a 64 KiB guest and an 8-sector
//! disk file.
//!
//! Input: a read-only flag byte, then a stream of ops `[op u8]`:
//! 0 register write `[offset u16][value u32]` (4 bytes wide, or any width
//! with op 1 `[offset u16][width sel][bytes]`); 2 register read
//! `[offset u16][width sel]`; 3 descriptor `[index u8][addr u32][len u32]
//! [flags u16][next u16]`; 4 guest bytes `[gpa u16][n u8][bytes]`; 5 make
//! head `[u16]` available and notify queue `[u32]`; 6 a driver's whole
//! setup (negotiate `[features u64]`, queue size `[u16]`, rings at fixed
//! addresses) so that mutations reach the queue walk.
//!
//! Checks: the disk file never changes size, a read-only disk's bytes
//! never change, reads fill their buffers, the status register never shows
//! DRIVER_OK without FEATURES_OK, and nothing panics.

#![no_main]

use std::io::Write as _;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use trapline_bus::BusDevice;
use trapline_devices::virtio::block::{Block, DiskFile};
use trapline_devices::virtio::{VirtioInterrupt, VirtioMmio};
use trapline_fuzz::{width, Input};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};
use vmm_sys_util::tempfile::TempFile;

const RAM: u64 = 0x1_0000;
const DESC: u64 = 0x1000;
const AVAIL: u64 = 0x2000;
const USED: u64 = 0x3000;
const DISK_LEN: usize = 8 * 512;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let read_only = input.u8() & 1 == 1;
    let disk = TempFile::new().unwrap();
    let pattern: Vec<u8> = (0..DISK_LEN).map(|i| (i * 7) as u8).collect();
    disk.as_file().write_all(&pattern).unwrap();
    let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), RAM as usize)]).unwrap();
    let irq = EventFd::new(EFD_NONBLOCK).unwrap();
    let blk = Block::new(DiskFile::open(disk.as_path(), read_only).unwrap());
    let dev = VirtioMmio::new(
        Box::new(blk),
        mem.clone(),
        Arc::new(VirtioInterrupt::irqfd(irq)),
        true,
    )
    .unwrap();
    let w = |off: u64, v: u32| {
        let _ = dev.write(0, 0, off, &v.to_le_bytes());
    };
    let mut avail_idx = 0u16;
    while !input.is_empty() {
        match input.u8() % 7 {
            0 => {
                let off = u64::from(input.u16()) & 0xfff;
                w(off, input.u32());
            }
            1 => {
                let off = u64::from(input.u16()) & 0x1fff;
                let sel = input.u8();
                let n = width(sel, &mut input);
                let bytes = input.bytes(n).to_vec();
                let _ = dev.write(0, 0, off, &bytes);
            }
            2 => {
                let off = u64::from(input.u16()) & 0x1fff;
                let sel = input.u8();
                let n = width(sel, &mut input);
                let mut a = vec![0x5au8; n];
                let mut b = vec![0xa5u8; n];
                dev.read(0, 0, off, &mut a);
                dev.read(0, 0, off, &mut b);
                assert_eq!(a, b, "reads fill the buffer (and have no side effect)");
            }
            3 => {
                let i = u64::from(input.u8());
                let a = GuestAddress(DESC + 16 * i);
                let _ = mem.write_obj(u64::from(input.u32()), a);
                let _ = mem.write_obj(input.u32(), GuestAddress(a.0 + 8));
                let _ = mem.write_obj(input.u16(), GuestAddress(a.0 + 12));
                let _ = mem.write_obj(input.u16(), GuestAddress(a.0 + 14));
            }
            4 => {
                let gpa = u64::from(input.u16());
                let n = usize::from(input.u8());
                let _ = mem.write_slice(input.bytes(n), GuestAddress(gpa));
            }
            5 => {
                let head = input.u16();
                let _ = mem.write_obj(
                    head,
                    GuestAddress(AVAIL + 4 + 2 * u64::from(avail_idx % 256)),
                );
                avail_idx = avail_idx.wrapping_add(1);
                let _ = mem.write_obj(avail_idx, GuestAddress(AVAIL + 2));
                w(0x50, input.u32() % 2);
            }
            _ => {
                let features = input.u64();
                let size = input.u16();
                for (off, v) in [
                    (0x70, 1),
                    (0x70, 3),
                    (0x24, 0),
                    (0x20, features as u32),
                    (0x24, 1),
                    (0x20, (features >> 32) as u32 | 1),
                    (0x70, 11),
                    (0x30, 0),
                    (0x38, u32::from(size)),
                    (0x80, DESC as u32),
                    (0x90, AVAIL as u32),
                    (0xa0, USED as u32),
                    (0x44, 1),
                    (0x70, 15),
                ] {
                    w(off, v);
                }
            }
        }
        let mut st = [0u8; 4];
        dev.read(0, 0, 0x70, &mut st);
        if st[0] & 4 != 0 {
            assert_ne!(st[0] & 8, 0, "DRIVER_OK without FEATURES_OK");
        }
    }
    let after = std::fs::read(disk.as_path()).unwrap();
    assert_eq!(after.len(), DISK_LEN, "the disk file changed size");
    if read_only {
        assert_eq!(after, pattern, "a read-only disk was written");
    }
});
