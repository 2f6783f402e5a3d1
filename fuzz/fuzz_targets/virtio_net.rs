//! virtio-mmio + virtio-net with the echo back end: the register file,
//! both queue walks (rust-vmm's `virtio-queue`), header checks and the
//! echo's backlog, on a 128 KiB guest.
//!
//! Input: a stream of ops `[op u8]`: 0 register write `[offset u16]
//! [value u32]` (4 bytes wide, or any width with op 1 `[offset u16]
//! [width sel][bytes]`); 2 register read `[offset u16][width sel]`;
//! 3 descriptor `[queue u8][index u8][addr u32][len u32][flags u16]
//! [next u16]`; 4 guest bytes `[gpa u16][n u8][bytes]`; 5 make head
//! `[u16]` available on queue `[u8]` and notify queue `[u32]`; 6 a
//! driver's whole setup of both queues (negotiate `[features u64]`,
//! queue size `[u16]`, rings at fixed addresses); 7 the device serves the
//! receive queue on its own (as the worker does when a TAP has frames).
//!
//! Checks: the echo never gives back more frames or bytes than the guest
//! sent, no received frame is longer than 1514 bytes, the
//! status register never shows DRIVER_OK without FEATURES_OK, and nothing
//! panics.

#![no_main]

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use trapline_bus::BusDevice;
use trapline_devices::virtio::net::{Echo, Net, DEFAULT_MAC, MAX_FRAME};
use trapline_devices::virtio::{VirtioInterrupt, VirtioMmio};
use trapline_fuzz::{width, Input};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

const RAM: u64 = 0x2_0000;
/// Per queue: descriptor table, avail ring, used ring.
const RINGS: [[u64; 3]; 2] = [[0x1000, 0x2000, 0x3000], [0x4000, 0x5000, 0x6000]];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), RAM as usize)]).unwrap();
    let irq = EventFd::new(EFD_NONBLOCK).unwrap();
    let net = Net::new(Box::new(Echo::new()), DEFAULT_MAC);
    let counters = net.counters();
    let dev = VirtioMmio::new(
        Box::new(net),
        mem.clone(),
        Arc::new(VirtioInterrupt::irqfd(irq)),
        true,
    )
    .unwrap();
    let w = |off: u64, v: u32| {
        let _ = dev.write(0, 0, off, &v.to_le_bytes());
    };
    let mut avail_idx = [0u16; 2];
    while !input.is_empty() {
        match input.u8() % 8 {
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
                let q = usize::from(input.u8() & 1);
                let i = u64::from(input.u8());
                let a = GuestAddress(RINGS[q][0] + 16 * i);
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
                let q = usize::from(input.u8() & 1);
                let avail = RINGS[q][1];
                let _ = mem.write_obj(
                    head,
                    GuestAddress(avail + 4 + 2 * u64::from(avail_idx[q] % 256)),
                );
                avail_idx[q] = avail_idx[q].wrapping_add(1);
                let _ = mem.write_obj(avail_idx[q], GuestAddress(avail + 2));
                w(0x50, input.u32() % 3);
            }
            6 => {
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
                ] {
                    w(off, v);
                }
                for (q, [desc, avail, used]) in RINGS.iter().enumerate() {
                    for (off, v) in [
                        (0x30, q as u32),
                        (0x38, u32::from(size)),
                        (0x80, *desc as u32),
                        (0x90, *avail as u32),
                        (0xa0, *used as u32),
                        (0x44, 1),
                    ] {
                        w(off, v);
                    }
                }
                w(0x70, 15);
            }
            _ => dev.serve(0),
        }
        let mut st = [0u8; 4];
        dev.read(0, 0, 0x70, &mut st);
        if st[0] & 4 != 0 {
            assert_ne!(st[0] & 8, 0, "DRIVER_OK without FEATURES_OK");
        }
        assert!(counters.rx_frames.load(Relaxed) <= counters.tx_frames.load(Relaxed));
        assert!(counters.rx_bytes.load(Relaxed) <= counters.tx_bytes.load(Relaxed));
        let rx_frames = counters.rx_frames.load(Relaxed);
        assert!(counters.rx_bytes.load(Relaxed) <= rx_frames * MAX_FRAME as u64);
    }
});
