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

use libfuzzer_sys::fuzz_target;
use trapline_devices::virtio::block::{Block, DiskFile};
use trapline_fuzz::virtio::{Rings, VirtioRig};
use trapline_fuzz::Input;
use vmm_sys_util::tempfile::TempFile;

const RAM: u64 = 0x1_0000;
/// Queue 0's descriptor table, avail ring and used ring.
const RINGS: Rings = [0x1000, 0x2000, 0x3000];
const DISK_LEN: usize = 8 * 512;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let read_only = input.u8() & 1 == 1;
    let disk = TempFile::new().unwrap();
    let pattern: Vec<u8> = (0..DISK_LEN).map(|i| (i * 7) as u8).collect();
    disk.as_file().write_all(&pattern).unwrap();
    let blk = Block::new(DiskFile::open(disk.as_path(), read_only).unwrap());
    let rig = VirtioRig::new(Box::new(blk), RAM);
    let mut avail_idx = 0u16;
    while !input.is_empty() {
        match input.u8() % 7 {
            0 => rig.write_reg(&mut input),
            1 => rig.write_reg_any_width(&mut input),
            2 => rig.read_reg_twice(&mut input),
            3 => rig.write_desc(&mut input, RINGS[0]),
            4 => rig.write_guest_bytes(&mut input),
            5 => {
                let head = input.u16();
                rig.make_available(RINGS[1], &mut avail_idx, head);
                rig.notify(input.u32() % 2);
            }
            _ => {
                let features = input.u64();
                let size = input.u16();
                rig.negotiate(features);
                rig.queue_on(0, size, RINGS);
                rig.driver_ok();
            }
        }
        rig.check_status();
    }
    let after = std::fs::read(disk.as_path()).unwrap();
    assert_eq!(after.len(), DISK_LEN, "the disk file changed size");
    if read_only {
        assert_eq!(after, pattern, "a read-only disk was written");
    }
});
