//! arm64's chr-testdev: `virtio::ChrTestdev`, a virtio console on a legacy
//! (version 1) virtio-mmio transport with QEMU's testdev packet parser
//! behind it, on a 64 KiB guest.
//!
//! Input: a stream of ops `[op u8]`: 0 a 4-byte register write
//! `[register u8][value u32]` (offset = 4 × register); 1 any access
//! `[offset u16][width sel][value u32]`, a write when the op byte's bit 3
//! is set; 2 guest bytes `[gpa u16][n u8][bytes]`; 3 QueueNotify
//! `[value u32]`; 4 a driver's whole transmit (`[n u8][bytes]`): reset,
//! both queues placed as kvm-unit-tests places them (page size 4096, 128
//! entries, page-aligned), one chain holding `x` then the bytes, notify.
//!
//! Checks: nothing panics; the identification registers read "virt",
//! version 1, device 3 and trapline's vendor; QueueNumMax is 128 for
//! queues 0 and 1 and 0 for others; an access that is not 4 bytes,
//! aligned and below 0x100 reads zeros and does nothing visible; only a
//! 4-byte QueueNotify of queue 1 may end the run. The whole transmit ends
//! the run exactly when the bytes hold a testdev `q` command (white space,
//! an optional decimal argument, the command byte; the leading `x` is a
//! command of its own, which puts the parser at a packet's start whatever
//! came before), with that argument, and the chain is used.

#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use trapline_bus::{BusDevice, IoOutcome, StopReason};
use trapline_devices::virtio::mmio::{MAGIC, VENDOR_ID};
use trapline_devices::virtio::{ChrTestdev, VirtioInterrupt};
use trapline_fuzz::{width, Input};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

const RAM: u64 = 0x1_0000;
const PAGE: u32 = 4096;
/// The transmitq's rings: descriptors at PFN 1, avail after them, used at
/// the next page.
const TX_PFN: u32 = 1;
const DESC: u64 = 0x1000;
const AVAIL: u64 = 0x1800;
const USED: u64 = 0x2000;
/// The receiveq's rings (never filled).
const RX_PFN: u32 = 4;
const BUF: u64 = 0x8000;

const GUEST_PAGE_SIZE: u64 = 0x28;
const QUEUE_SEL: u64 = 0x30;
const QUEUE_NUM_MAX: u64 = 0x34;
const QUEUE_NUM: u64 = 0x38;
const QUEUE_ALIGN: u64 = 0x3c;
const QUEUE_PFN: u64 = 0x40;
const QUEUE_NOTIFY: u64 = 0x50;
const STATUS: u64 = 0x70;

/// The testdev packet grammar, written out independently: from a packet's
/// start, the argument the first `q` command carries, if any.
fn testdev_q(bytes: &[u8]) -> Option<u32> {
    let (mut arg, mut in_arg) = (0u32, false);
    for &b in bytes {
        if b.is_ascii_whitespace() && !in_arg {
            continue;
        }
        if b.is_ascii_digit() {
            arg = arg.wrapping_mul(10).wrapping_add(u32::from(b - b'0'));
            in_arg = true;
            continue;
        }
        if b == b'q' {
            return Some(arg);
        }
        (arg, in_arg) = (0, false);
    }
    None
}

struct Harness {
    dev: ChrTestdev,
    mem: GuestMemoryMmap,
}

impl Harness {
    fn w(&self, off: u64, v: u32) -> IoOutcome {
        self.dev.write(0, 0, off, &v.to_le_bytes())
    }

    /// A register write that must not end the run.
    fn set(&self, off: u64, v: u32) {
        assert_eq!(
            self.w(off, v),
            IoOutcome::Continue,
            "write {v:#x} at {off:#x}"
        );
    }

    fn r(&self, off: u64) -> u32 {
        let mut b = [0u8; 4];
        self.dev.read(0, 0, off, &mut b);
        u32::from_le_bytes(b)
    }

    fn check_identity(&self) {
        assert_eq!(self.r(0x00), MAGIC);
        assert_eq!(self.r(0x04), 1, "the legacy layout");
        assert_eq!(self.r(0x08), 3, "a console");
        assert_eq!(self.r(0x0c), VENDOR_ID);
    }

    /// kvm-unit-tests' transmit of `x` + `bytes` from a fresh device.
    fn transmit(&self, bytes: &[u8]) {
        self.set(STATUS, 0);
        self.set(GUEST_PAGE_SIZE, PAGE);
        for (q, pfn) in [(0, RX_PFN), (1, TX_PFN)] {
            self.set(QUEUE_SEL, q);
            assert_eq!(self.r(QUEUE_PFN), 0, "a reset queue is not placed");
            self.set(QUEUE_NUM, 128);
            self.set(QUEUE_ALIGN, PAGE);
            self.set(QUEUE_PFN, pfn);
            assert_eq!(self.r(QUEUE_PFN), pfn);
        }
        let zeros = vec![0u8; (USED - DESC) as usize + 0x1000];
        self.mem.write_slice(&zeros, GuestAddress(DESC)).unwrap();
        let mut payload = vec![b'x'];
        payload.extend_from_slice(bytes);
        self.mem.write_slice(&payload, GuestAddress(BUF)).unwrap();
        // Descriptor 0: BUF, the payload's length, no flags.
        self.mem.write_obj(BUF, GuestAddress(DESC)).unwrap();
        self.mem
            .write_obj(payload.len() as u32, GuestAddress(DESC + 8))
            .unwrap();
        // avail: flags 0, idx 1, ring[0] = 0.
        self.mem.write_obj(1u16, GuestAddress(AVAIL + 2)).unwrap();
        let outcome = self.w(QUEUE_NOTIFY, 1);
        let want = match testdev_q(bytes) {
            Some(code) => IoOutcome::Stop(StopReason::DebugExit(code)),
            None => IoOutcome::Continue,
        };
        assert_eq!(outcome, want, "transmitting {bytes:02x?}");
        let used_idx: u16 = self.mem.read_obj(GuestAddress(USED + 2)).unwrap();
        assert_eq!(used_idx, 1, "the chain was not used");
    }
}

fuzz_target!(|data: &[u8]| {
    let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), RAM as usize)]).unwrap();
    let irq = EventFd::new(EFD_NONBLOCK).unwrap();
    let h = Harness {
        dev: ChrTestdev::new(mem.clone(), Arc::new(VirtioInterrupt::irqfd(irq))),
        mem,
    };
    let mut input = Input::new(data);
    while !input.is_empty() {
        let op = input.u8();
        match op % 5 {
            0 => {
                let off = u64::from(input.u8()) * 4;
                let v = input.u32();
                let outcome = h.w(off, v);
                if off != QUEUE_NOTIFY || v != 1 {
                    assert_eq!(outcome, IoOutcome::Continue, "write {v:#x} at {off:#x}");
                }
            }
            1 => {
                let off = u64::from(input.u16());
                let len = width(input.u8(), &mut input);
                let value = input.u32().to_le_bytes();
                let mut buf: Vec<u8> = (0..len).map(|i| value[i % 4]).collect();
                let taken = len == 4 && off % 4 == 0 && off < 0x100;
                if op & 8 != 0 {
                    let outcome = h.dev.write(0, 0, off, &buf);
                    if !taken || off != QUEUE_NOTIFY || u32::from_le_bytes(value) != 1 {
                        assert_eq!(outcome, IoOutcome::Continue, "write {buf:02x?} at {off:#x}");
                    }
                } else {
                    h.dev.read(0, 0, off, &mut buf);
                    if !taken {
                        assert!(buf.iter().all(|&b| b == 0), "read {buf:02x?} at {off:#x}");
                    }
                }
            }
            2 => {
                let gpa = u64::from(input.u16());
                let n = usize::from(input.u8());
                let bytes = input.bytes(n);
                let _ = h.mem.write_slice(bytes, GuestAddress(gpa));
            }
            3 => {
                let v = input.u32();
                let outcome = h.w(QUEUE_NOTIFY, v);
                if v != 1 {
                    assert_eq!(outcome, IoOutcome::Continue, "notify {v}");
                }
            }
            _ => {
                let n = usize::from(input.u8());
                let bytes = input.bytes(n).to_vec();
                h.transmit(&bytes);
            }
        }
        h.check_identity();
    }
    // QueueNumMax per queue.
    for (q, want) in [(0, 128), (1, 128), (2, 0), (u32::MAX, 0)] {
        h.set(QUEUE_SEL, q);
        assert_eq!(h.r(QUEUE_NUM_MAX), want, "queue {q}");
    }
});
