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

use libfuzzer_sys::fuzz_target;
use trapline_devices::virtio::net::{Echo, Net, DEFAULT_MAC, MAX_FRAME};
use trapline_fuzz::virtio::{Rings, VirtioRig};
use trapline_fuzz::Input;

const RAM: u64 = 0x2_0000;
/// Per queue: descriptor table, avail ring, used ring.
const RINGS: [Rings; 2] = [[0x1000, 0x2000, 0x3000], [0x4000, 0x5000, 0x6000]];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let net = Net::new(Box::new(Echo::new()), DEFAULT_MAC);
    let counters = net.counters();
    let rig = VirtioRig::new(Box::new(net), RAM);
    let mut avail_idx = [0u16; 2];
    while !input.is_empty() {
        match input.u8() % 8 {
            0 => rig.write_reg(&mut input),
            1 => rig.write_reg_any_width(&mut input),
            2 => rig.read_reg_twice(&mut input),
            3 => {
                let q = usize::from(input.u8() & 1);
                rig.write_desc(&mut input, RINGS[q][0]);
            }
            4 => rig.write_guest_bytes(&mut input),
            5 => {
                let head = input.u16();
                let q = usize::from(input.u8() & 1);
                rig.make_available(RINGS[q][1], &mut avail_idx[q], head);
                rig.notify(input.u32() % 3);
            }
            6 => {
                let features = input.u64();
                let size = input.u16();
                rig.negotiate(features);
                for (q, rings) in RINGS.into_iter().enumerate() {
                    rig.queue_on(q as u32, size, rings);
                }
                rig.driver_ok();
            }
            _ => rig.dev.serve(0),
        }
        rig.check_status();
        assert!(counters.rx_frames.load(Relaxed) <= counters.tx_frames.load(Relaxed));
        assert!(counters.rx_bytes.load(Relaxed) <= counters.tx_bytes.load(Relaxed));
        let rx_frames = counters.rx_frames.load(Relaxed);
        assert!(counters.rx_bytes.load(Relaxed) <= rx_frames * MAX_FRAME as u64);
    }
});
