//! virtio-net driven the way a driver would, on plain guest memory (no
//! KVM): exact bytes through the echo back end, frames waiting for
//! receive buffers, hostile chains and rings, a back end taking the data
//! path over at DRIVER_OK; the TAP back end in a network namespace the
//! test makes (skipped, loudly, where the host does not allow one).

use std::sync::{Arc, Mutex};

use trapline_bus::BusDevice;
use vm_memory::{Address, Bytes, GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use super::*;
use crate::virtio::interrupt::INT_CONFIG;
use crate::virtio::status::bits::DEVICE_NEEDS_RESET;
use crate::virtio::{VirtioInterrupt, VirtioMmio};

const RAM: usize = 0x80000;
/// Per queue: descriptor table, avail ring, used ring.
const RINGS: [[u64; 3]; 2] = [[0x1000, 0x2000, 0x3000], [0x4000, 0x5000, 0x6000]];
/// Receive buffers (one page each) and transmit buffers.
const RX_BUF: u64 = 0x10000;
const TX_BUF: u64 = 0x40000;
const SIZE: u16 = 16;
const NEXT: u16 = 1;
const WRITE: u16 = 2;
const VERSION_1: u64 = 1 << 32;
const EVENT_IDX: u64 = 1 << 29;
const ALL: u64 = VERSION_1 | EVENT_IDX | 1 << F_MAC | 1 << F_STATUS;

struct Driver {
    dev: Arc<VirtioMmio>,
    mem: GuestMemoryMmap,
    irq: EventFd,
    counters: Arc<NetCounters>,
    avail: [u16; 2],
    used_seen: [u16; 2],
}

impl Driver {
    fn new(backend: Box<dyn NetBackend>, event_idx: bool) -> Self {
        let mem = GuestMemoryMmap::from_ranges(&[(GuestAddress(0), RAM)]).unwrap();
        let irq = EventFd::new(EFD_NONBLOCK).unwrap();
        let interrupt = Arc::new(VirtioInterrupt::irqfd(irq.try_clone().unwrap()));
        let net = Net::new(backend, DEFAULT_MAC);
        let counters = net.counters();
        let dev =
            Arc::new(VirtioMmio::new(Box::new(net), mem.clone(), interrupt, event_idx).unwrap());
        Self {
            dev,
            mem,
            irq,
            counters,
            avail: [0; 2],
            used_seen: [0; 2],
        }
    }

    fn echo(event_idx: bool) -> Self {
        let mut d = Self::new(Box::new(Echo::new()), event_idx);
        d.setup(if event_idx { ALL } else { ALL & !EVENT_IDX });
        d
    }

    fn w(&self, off: u64, v: u32) {
        let _ = self.dev.write(0, 0, off, &v.to_le_bytes());
    }

    fn r(&self, off: u64) -> u32 {
        let mut b = [0u8; 4];
        self.dev.read(0, 0, off, &mut b);
        u32::from_le_bytes(b)
    }

    fn negotiate(&self, features: u64) {
        self.w(0x70, 1);
        self.w(0x70, 3);
        self.w(0x24, 0);
        self.w(0x20, features as u32);
        self.w(0x24, 1);
        self.w(0x20, (features >> 32) as u32);
        self.w(0x70, 11);
        for (q, [desc, avail, used]) in RINGS.iter().enumerate() {
            self.w(0x30, q as u32);
            self.w(0x38, u32::from(SIZE));
            self.w(0x80, *desc as u32);
            self.w(0x90, *avail as u32);
            self.w(0xa0, *used as u32);
            self.w(0x44, 1);
        }
    }

    fn setup(&mut self, features: u64) {
        self.negotiate(features);
        self.w(0x70, 15);
        assert_eq!(self.r(0x70), 15);
    }

    fn desc(&self, q: usize, i: u16, addr: u64, len: u32, flags: u16, next: u16) {
        let a = GuestAddress(RINGS[q][0] + 16 * u64::from(i));
        self.mem.write_obj(addr, a).unwrap();
        self.mem.write_obj(len, a.unchecked_add(8)).unwrap();
        self.mem.write_obj(flags, a.unchecked_add(12)).unwrap();
        self.mem.write_obj(next, a.unchecked_add(14)).unwrap();
    }

    /// Make `head` available on queue `q`; notify when asked.
    fn offer(&mut self, q: usize, head: u16, notify: bool) {
        let slot = u64::from(self.avail[q] % SIZE);
        let avail = RINGS[q][1];
        self.mem
            .write_obj(head, GuestAddress(avail + 4 + 2 * slot))
            .unwrap();
        self.avail[q] = self.avail[q].wrapping_add(1);
        self.mem
            .write_obj(self.avail[q], GuestAddress(avail + 2))
            .unwrap();
        if notify {
            self.w(0x50, q as u32);
        }
    }

    /// Receive buffer `i` (page `i` of the receive area, `len` bytes).
    fn post_rx(&mut self, i: u16, len: u32, notify: bool) {
        self.desc(RX_QUEUE, i, RX_BUF + 0x1000 * u64::from(i), len, WRITE, 0);
        self.offer(RX_QUEUE, i, notify);
    }

    /// Transmit `frame` from descriptor `i` with a zero header.
    fn send(&mut self, i: u16, frame: &[u8]) {
        let at = TX_BUF + 0x1000 * u64::from(i % 8);
        self.mem
            .write_slice(&[0; HEADER_LEN], GuestAddress(at))
            .unwrap();
        self.mem
            .write_slice(frame, GuestAddress(at + HEADER_LEN as u64))
            .unwrap();
        self.desc(TX_QUEUE, i, at, (HEADER_LEN + frame.len()) as u32, 0, 0);
        self.offer(TX_QUEUE, i, true);
    }

    fn used_idx(&self, q: usize) -> u16 {
        self.mem.read_obj(GuestAddress(RINGS[q][2] + 2)).unwrap()
    }

    /// The used entries of queue `q` not looked at yet: (id, len).
    fn take_used(&mut self, q: usize) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        while self.used_seen[q] != self.used_idx(q) {
            let a = RINGS[q][2] + 4 + 8 * u64::from(self.used_seen[q] % SIZE);
            out.push((
                self.mem.read_obj(GuestAddress(a)).unwrap(),
                self.mem.read_obj(GuestAddress(a + 4)).unwrap(),
            ));
            self.used_seen[q] = self.used_seen[q].wrapping_add(1);
        }
        out
    }

    /// The bytes of receive buffer `id`, `len` long.
    fn rx_bytes(&self, id: u32, len: u32) -> Vec<u8> {
        let mut b = vec![0u8; len as usize];
        self.mem
            .read_slice(&mut b, GuestAddress(RX_BUF + 0x1000 * u64::from(id)))
            .unwrap();
        b
    }

    fn drops(&self, r: DropReason) -> u64 {
        self.counters.drops(r)
    }

    fn assert_live(&self) {
        assert_eq!(self.r(0x70), 15, "the device keeps running");
    }
}

/// A frame with distinct bytes: dst, src, ethertype, then a pattern.
fn frame(len: usize, seed: u8) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    f[..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&DEFAULT_MAC);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f
}

fn expect_rx(f: &[u8]) -> Vec<u8> {
    let mut v = NetHeader::rx().to_bytes().to_vec();
    v.extend_from_slice(f);
    v
}

#[test]
fn echo_reflects_every_frame_byte_for_byte_on_both_event_idx_settings() {
    for event_idx in [false, true] {
        let mut d = Driver::echo(event_idx);
        for i in 0..4 {
            d.post_rx(i, RX_BUFFER_LEN as u32, true);
        }
        assert!(d.take_used(RX_QUEUE).is_empty(), "no frame yet");
        let frames = [frame(60, 1), frame(MAX_FRAME, 2), frame(MIN_FRAME, 3)];
        for (i, f) in frames.iter().enumerate() {
            d.send(i as u16, f);
        }
        let tx = d.take_used(TX_QUEUE);
        assert_eq!(tx, vec![(0, 0), (1, 0), (2, 0)]);
        let rx = d.take_used(RX_QUEUE);
        assert_eq!(rx.len(), 3);
        for ((id, len), f) in rx.iter().zip(&frames) {
            assert_eq!(*len as usize, HEADER_LEN + f.len());
            assert_eq!(d.rx_bytes(*id, *len), expect_rx(f), "event_idx {event_idx}");
        }
        assert_eq!(rx.iter().map(|e| e.0).collect::<Vec<_>>(), [0, 1, 2]);
        let c = &d.counters;
        assert_eq!(c.tx_frames.load(Ordering::Relaxed), 3);
        assert_eq!(c.rx_frames.load(Ordering::Relaxed), 3);
        let bytes = (60 + MAX_FRAME + MIN_FRAME) as u64;
        assert_eq!(c.tx_bytes.load(Ordering::Relaxed), bytes);
        assert_eq!(c.rx_bytes.load(Ordering::Relaxed), bytes);
        assert_eq!(c.total_drops(), 0);
        assert_ne!(d.irq.read().unwrap(), 0, "interrupted");
        assert_eq!(d.r(0x60) & 1, 1);
        d.assert_live();
        // One echo, one interrupt: the transmit and the receive completion
        // share it (under EVENT_IDX this driver's used_event of 0 asks for
        // none).
        d.w(0x64, 1);
        let before = d.dev.interrupt().raised();
        d.send(3, &frame(60, 4));
        assert_eq!(d.take_used(RX_QUEUE).len(), 1);
        let want = if event_idx { before } else { before + 1 };
        assert_eq!(d.dev.interrupt().raised(), want, "event_idx {event_idx}");
    }
}

#[test]
fn frames_wait_for_receive_buffers_and_keep_their_order() {
    let mut d = Driver::echo(true);
    let frames: Vec<Vec<u8>> = (0..5).map(|i| frame(100 + i, i as u8)).collect();
    for (i, f) in frames.iter().enumerate() {
        d.send(i as u16, f);
    }
    assert_eq!(d.take_used(TX_QUEUE).len(), 5);
    assert!(d.take_used(RX_QUEUE).is_empty());
    // Two buffers: two frames; the rest wait.
    d.post_rx(0, 2048, false);
    d.post_rx(1, 2048, true);
    let rx = d.take_used(RX_QUEUE);
    assert_eq!(rx.len(), 2);
    assert_eq!(d.rx_bytes(rx[1].0, rx[1].1), expect_rx(&frames[1]));
    for i in 2..8 {
        d.post_rx(i, 2048, true);
    }
    let rx = d.take_used(RX_QUEUE);
    assert_eq!(rx.len(), 3, "three frames were left");
    for ((id, len), f) in rx.iter().zip(&frames[2..]) {
        assert_eq!(d.rx_bytes(*id, *len), expect_rx(f));
    }
    // The buffers left over take the next frames at once.
    d.send(5, &frame(70, 9));
    let rx = d.take_used(RX_QUEUE);
    assert_eq!(rx, vec![(5, (HEADER_LEN + 70) as u32)]);
    assert_eq!(d.counters.total_drops(), 0);
}

#[test]
fn a_frame_larger_than_its_receive_buffer_is_dropped_and_counted() {
    let mut d = Driver::echo(false);
    d.post_rx(0, 100, true);
    d.post_rx(1, RX_BUFFER_LEN as u32, true);
    d.send(0, &frame(MAX_FRAME, 4));
    // The big frame meets the small chain: dropped, the chain back empty.
    assert_eq!(d.take_used(RX_QUEUE), vec![(0, 0)]);
    assert_eq!(d.drops(DropReason::RxSmallBuffer), 1);
    // A frame that fits a small chain is delivered.
    d.post_rx(2, 100, true);
    d.send(1, &frame(80, 5));
    let rx = d.take_used(RX_QUEUE);
    assert_eq!(rx, vec![(1, 92)]);
    assert_eq!(d.rx_bytes(1, 92), expect_rx(&frame(80, 5)));
    // A chain of several writable descriptors holds a frame too.
    d.desc(RX_QUEUE, 3, RX_BUF + 0x3000, 12, WRITE | NEXT, 4);
    d.desc(RX_QUEUE, 4, RX_BUF + 0x4000, 2000, WRITE, 0);
    d.offer(RX_QUEUE, 3, true);
    // Buffer 2 (100 bytes) is next in line: the 1000-byte frame is
    // dropped there, then the next frame lands in the two-part chain.
    d.send(2, &frame(1000, 6));
    d.send(3, &frame(1000, 7));
    assert_eq!(d.take_used(RX_QUEUE), vec![(2, 0), (3, 1012)]);
    let mut got = vec![0u8; 1000];
    d.mem
        .read_slice(&mut got, GuestAddress(RX_BUF + 0x4000))
        .unwrap();
    assert_eq!(got, frame(1000, 7));
    assert_eq!(d.drops(DropReason::RxSmallBuffer), 2);
    d.assert_live();
}

#[test]
fn hostile_transmit_chains_are_counted_and_dropped_and_the_device_goes_on() {
    let mut d = Driver::echo(true);
    for i in 0..8 {
        d.post_rx(i, RX_BUFFER_LEN as u32, true);
    }
    // Shorter than header + Ethernet header.
    d.send(0, &[1; 13]);
    d.desc(TX_QUEUE, 1, TX_BUF, 5, 0, 0);
    d.offer(TX_QUEUE, 1, true);
    // Longer than the largest frame, in one or several descriptors.
    d.send(2, &frame(MAX_FRAME + 1, 0));
    d.desc(TX_QUEUE, 3, TX_BUF, 1000, NEXT, 4);
    d.desc(TX_QUEUE, 4, TX_BUF, 1000, 0, 0);
    d.offer(TX_QUEUE, 3, true);
    // Lengths that sum past 2^32 (outside RAM too) and buffers past the
    // end of RAM.
    d.desc(TX_QUEUE, 5, TX_BUF, u32::MAX, NEXT, 6);
    d.desc(TX_QUEUE, 6, TX_BUF, u32::MAX, 0, 0);
    d.offer(TX_QUEUE, 5, true);
    d.desc(TX_QUEUE, 7, RAM as u64 - 50, 100, 0, 0);
    d.offer(TX_QUEUE, 7, true);
    d.desc(TX_QUEUE, 8, u64::MAX - 8, 100, 0, 0);
    d.offer(TX_QUEUE, 8, true);
    // A header asking for a checksum offload.
    let at = TX_BUF + 0x2000;
    let mut bytes = vec![1u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    bytes.extend(frame(60, 0));
    d.mem.write_slice(&bytes, GuestAddress(at)).unwrap();
    d.desc(TX_QUEUE, 9, at, bytes.len() as u32, 0, 0);
    d.offer(TX_QUEUE, 9, true);
    // A loop: 10 -> 11 -> 10 ... (the walk stops after a queue's worth)
    // and a chain whose next is past the table.
    d.desc(TX_QUEUE, 10, TX_BUF, 40, NEXT, 11);
    d.desc(TX_QUEUE, 11, TX_BUF, 40, NEXT, 10);
    d.offer(TX_QUEUE, 10, true);
    d.desc(TX_QUEUE, 14, TX_BUF, 100, NEXT, 300);
    d.offer(TX_QUEUE, 14, true);
    // Only writable buffers: nothing to send.
    d.desc(TX_QUEUE, 12, TX_BUF, 100, WRITE, 0);
    d.offer(TX_QUEUE, 12, true);

    assert_eq!(d.take_used(TX_QUEUE).len(), 11, "every chain came back");
    assert_eq!(d.drops(DropReason::TxShort), 3, "{:?}", d.counters);
    assert_eq!(d.drops(DropReason::TxOversize), 2);
    assert_eq!(d.drops(DropReason::TxBadChain), 5);
    assert_eq!(d.drops(DropReason::TxOffload), 1);
    assert!(d.take_used(RX_QUEUE).is_empty(), "nothing reached the echo");
    assert_eq!(d.counters.tx_frames.load(Ordering::Relaxed), 0);
    d.assert_live();
    // A good frame still goes through.
    d.send(13, &frame(64, 8));
    let rx = d.take_used(RX_QUEUE);
    assert_eq!(rx.len(), 1);
    assert_eq!(d.rx_bytes(rx[0].0, rx[0].1), expect_rx(&frame(64, 8)));
}

#[test]
fn a_receive_chain_outside_ram_is_returned_without_losing_the_frame() {
    let mut d = Driver::echo(false);
    d.desc(RX_QUEUE, 0, RAM as u64 - 10, 2000, WRITE, 0);
    d.offer(RX_QUEUE, 0, true);
    d.post_rx(1, 2048, true);
    d.send(0, &frame(200, 1));
    assert_eq!(d.take_used(RX_QUEUE), vec![(0, 0), (1, 212)]);
    assert_eq!(d.drops(DropReason::RxBadChain), 1);
    assert_eq!(d.rx_bytes(1, 212), expect_rx(&frame(200, 1)));
    d.assert_live();
}

#[test]
fn a_full_echo_backlog_drops_and_counts() {
    let mut d = Driver::echo(true);
    let n = echo::BACKLOG + 3;
    for i in 0..n {
        d.send((i % 16) as u16, &frame(60, i as u8));
        assert_eq!(d.take_used(TX_QUEUE).len(), 1);
    }
    assert_eq!(d.drops(DropReason::TxBackend), 3);
    assert_eq!(
        d.counters.tx_frames.load(Ordering::Relaxed),
        echo::BACKLOG as u64
    );
    // A reset empties the backlog.
    d.w(0x70, 0);
    d.avail = [0; 2];
    d.used_seen = [0; 2];
    d.setup(ALL);
    d.post_rx(0, 2048, true);
    assert!(d.take_used(RX_QUEUE).is_empty());
}

fn assert_needs_reset(d: &Driver) {
    assert_eq!(d.r(0x70) as u8 & DEVICE_NEEDS_RESET, DEVICE_NEEDS_RESET);
    assert_eq!(d.r(0x60) & INT_CONFIG, INT_CONFIG);
    d.w(0x70, 0);
    assert_eq!(d.r(0x70), 0);
}

#[test]
fn broken_rings_ask_for_a_reset_and_the_vmm_goes_on() {
    // A head past the queue size.
    let mut d = Driver::echo(true);
    d.offer(TX_QUEUE, 200, true);
    assert_needs_reset(&d);
    // An avail index more than a queue ahead, on the receive queue.
    let d = Driver::echo(false);
    d.mem
        .write_obj(100u16, GuestAddress(RINGS[RX_QUEUE][1] + 2))
        .unwrap();
    d.w(0x50, 0);
    assert_needs_reset(&d);
    // A queue size that is not a power of two.
    let d = Driver::new(Box::new(Echo::new()), true);
    d.negotiate(ALL);
    d.w(0x30, 1);
    d.w(0x44, 0);
    d.w(0x38, 24);
    d.w(0x44, 1);
    d.w(0x70, 15);
    d.w(0x50, 1);
    assert_needs_reset(&d);
}

#[test]
fn a_driver_that_never_readies_the_receive_queue_can_still_transmit() {
    let mut d = Driver::new(Box::new(Echo::new()), true);
    d.negotiate(ALL);
    d.w(0x30, RX_QUEUE as u32);
    d.w(0x44, 0);
    d.w(0x70, 15);
    d.send(0, &frame(60, 0));
    d.send(1, &frame(60, 1));
    assert_eq!(d.take_used(TX_QUEUE).len(), 2);
    d.dev.serve(RX_QUEUE as u32);
    d.assert_live();
    assert_eq!(d.counters.tx_frames.load(Ordering::Relaxed), 2);
}

#[test]
fn notifies_before_driver_ok_and_for_unknown_queues_are_ignored() {
    let mut d = Driver::new(Box::new(Echo::new()), true);
    d.negotiate(ALL);
    d.send(0, &frame(60, 0));
    assert!(d.take_used(TX_QUEUE).is_empty());
    d.w(0x70, 15);
    for q in [2, 7, u32::MAX] {
        d.w(0x50, q);
    }
    d.assert_live();
}

/// A back end that takes the data path over and records what it got.
#[derive(Default)]
struct Takeover {
    seen: Arc<Mutex<Vec<String>>>,
}

impl NetBackend for Takeover {
    fn name(&self) -> String {
        "takeover".into()
    }
    fn transmit(&mut self, _frame: &[u8]) -> Result<(), TxError> {
        panic!("the kernel has the data path")
    }
    fn receive(&mut self, _buf: &mut [u8]) -> Option<usize> {
        None
    }
    fn takes_over(&self) -> bool {
        true
    }
    fn activate(&mut self, a: &Activation<'_>) -> Result<DataPath, ActivateError> {
        let mut seen = self.seen.lock().unwrap();
        seen.push(format!("features {:#x}", a.features));
        for q in a.queues {
            seen.push(format!(
                "queue size {} desc {:#x} avail {:#x} used {:#x} ready {} base {}",
                q.size, q.desc, q.avail, q.used, q.ready, q.next_avail
            ));
        }
        for m in a.memory {
            seen.push(format!(
                "mem {:#x}+{:#x} host {}",
                m.guest_phys,
                m.size,
                m.host_addr != 0
            ));
        }
        seen.push(format!("kicks {} call {}", a.kicks.len(), a.call.is_some()));
        Ok(DataPath::Kernel)
    }
    fn reset(&mut self) {
        self.seen.lock().unwrap().push("reset".into());
    }
}

#[test]
fn a_kernel_back_end_gets_everything_at_driver_ok_and_the_transport_stands_back() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut d = Driver::new(Box::new(Takeover { seen: seen.clone() }), true);
    let kicks = (0..2)
        .map(|_| EventFd::new(EFD_NONBLOCK).unwrap())
        .collect();
    d.dev.set_kicks(kicks);
    d.setup(ALL);
    assert_eq!(d.dev.data_path(), DataPath::Kernel);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            format!("features {ALL:#x}"),
            "queue size 16 desc 0x1000 avail 0x2000 used 0x3000 ready true base 0".into(),
            "queue size 16 desc 0x4000 avail 0x5000 used 0x6000 ready true base 0".into(),
            "mem 0x0+0x80000 host true".into(),
            "kicks 2 call true".into(),
        ]
    );
    // InterruptStatus says "used buffers" for the kernel's irqfd signals.
    assert_eq!(d.r(0x60), 1);
    // A notify that reaches trapline anyway is not served here.
    d.send(0, &frame(60, 0));
    assert!(d.take_used(TX_QUEUE).is_empty());
    d.w(0x70, 0);
    assert_eq!(d.dev.data_path(), DataPath::User);
    assert_eq!(d.r(0x60), 0);
    assert_eq!(seen.lock().unwrap().last().unwrap(), "reset");
}

/// A back end whose activation fails.
struct Refuses;

impl NetBackend for Refuses {
    fn name(&self) -> String {
        "refuses".into()
    }
    fn transmit(&mut self, _frame: &[u8]) -> Result<(), TxError> {
        Ok(())
    }
    fn receive(&mut self, _buf: &mut [u8]) -> Option<usize> {
        None
    }
    fn activate(&mut self, _a: &Activation<'_>) -> Result<DataPath, ActivateError> {
        Err(ActivateError("no vhost today".into()))
    }
}

#[test]
fn a_failed_activation_asks_for_a_reset_and_says_why() {
    let d = Driver::new(Box::new(Refuses), false);
    d.negotiate(ALL & !EVENT_IDX);
    d.w(0x70, 15);
    assert_eq!(d.dev.activate_error().as_deref(), Some("no vhost today"));
    assert_needs_reset(&d);
}

#[test]
fn config_space_holds_the_mac_and_link_up() {
    let net = Net::new(Box::new(Echo::new()), DEFAULT_MAC);
    let mut cfg = [0xffu8; 12];
    net.read_config(0, &mut cfg);
    assert_eq!(cfg, [0x52, 0x54, 0, 0x12, 0x34, 0x56, 1, 0, 0, 0, 0, 0]);
    let mut b = [0u8; 2];
    net.read_config(6, &mut b);
    assert_eq!(b, [1, 0]);
    net.read_config(u64::MAX, &mut b);
    assert_eq!(b, [0, 0]);
    assert_eq!(net.device_type(), 1);
    assert_eq!(net.features(), 1 << 5 | 1 << 16);
    assert_eq!(net.queue_max_sizes(), &[256, 256]);
    let d = Driver::new(Box::new(Echo::new()), true);
    assert_eq!(d.r(8), 1, "DeviceID");
    d.w(0x14, 0);
    assert_eq!(d.r(0x10), 1 << 29 | 1 << 16 | 1 << 5);
    d.w(0x30, 2);
    assert_eq!(d.r(0x34), 0, "two queues");
}

#[test]
fn random_register_and_ring_traffic_never_panics() {
    let mut rng = crate::hostile::Xorshift::new(0x6e65_7476);
    for round in 0..20 {
        let mut d = Driver::new(Box::new(Echo::new()), round % 2 == 0);
        for _ in 0..2000 {
            let r = rng.next();
            let offset = match r % 4 {
                0 => r >> 8 & 0xfc,
                1 => r >> 8 & 0xfff,
                _ => [0x70, 0x50, 0x38, 0x44, 0x80, 0x90, 0xa0, 0x30][(r >> 8) as usize % 8],
            };
            let v = (rng.next() as u32) & [0x3, 0xf, 0xffff, u32::MAX][(r >> 20) as usize % 4];
            if r >> 40 & 1 == 0 {
                d.w(offset, v);
            } else {
                let _ = d.r(offset);
            }
            if r >> 41 & 3 == 0 {
                let q = (r >> 43) as usize & 1;
                let i = (r >> 44) as u16 % SIZE;
                d.desc(
                    q,
                    i,
                    rng.next() % (RAM as u64 + 0x1000),
                    rng.next() as u32 % 4096,
                    (r >> 50) as u16 & 3,
                    (r >> 52) as u16 % 20,
                );
                d.offer(q, (r >> 56) as u16 % 18, true);
            }
        }
    }
}

mod tap_in_a_namespace {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::virtio::worker::{NotifyWorker, ReadySource};

    /// An EtherType for local experiments (IEEE 802): nothing else in the
    /// namespace sends it.
    const ETHERTYPE: [u8; 2] = [0x88, 0xb5];
    const NAME: &str = "tltap0";

    /// Run `f` on a thread in a new network namespace (namespaces are per
    /// thread); `None`, said loudly, where the host refuses one or has no
    /// /dev/net/tun.
    fn in_netns<T: Send>(test: &str, f: impl FnOnce() -> T + Send) -> Option<T> {
        if !std::path::Path::new(tap::TUN_PATH).exists() {
            eprintln!(
                "SKIPPED {test}: {} does not exist on this host",
                tap::TUN_PATH
            );
            return None;
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: unshare changes this thread's network namespace only.
                if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                    eprintln!(
                        "SKIPPED {test}: cannot make a network namespace ({}); run as root or with CAP_SYS_ADMIN",
                        std::io::Error::last_os_error()
                    );
                    return None;
                }
                // No IPv6 autoconfiguration traffic on the new interface.
                for k in ["all", "default"] {
                    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{k}/disable_ipv6"), "1");
                }
                Some(f())
            })
            .join()
            .unwrap()
        })
    }

    /// A raw packet socket on interface `name`: the host's side of the TAP.
    fn packet_socket(name: &str) -> OwnedFd {
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: plain socket(2); owned right after.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                i32::from(proto),
            )
        };
        assert!(
            fd >= 0,
            "packet socket: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: a fresh fd nothing else owns.
        let sock = unsafe { OwnedFd::from_raw_fd(fd) };
        let cname = std::ffi::CString::new(name).unwrap();
        // SAFETY: a NUL-terminated name.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        assert_ne!(ifindex, 0, "no interface {name}");
        // SAFETY: an all-zero sockaddr_ll is valid; the fields are set below.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = proto;
        addr.sll_ifindex = ifindex as i32;
        // SAFETY: binds to a sockaddr_ll of the size given.
        let rc = unsafe {
            libc::bind(
                sock.as_raw_fd(),
                (&raw const addr).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        assert_eq!(rc, 0, "bind: {}", std::io::Error::last_os_error());
        sock
    }

    /// Wait (at most 5 s, a bound, not a measurement) for `fd` to be readable.
    fn readable(fd: &OwnedFd) -> bool {
        let mut p = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd.
        unsafe { libc::poll(&mut p, 1, 5000) == 1 }
    }

    /// The next frame of our EtherType the host side sees.
    fn host_receive(sock: &OwnedFd) -> Vec<u8> {
        let mut buf = vec![0u8; 2048];
        loop {
            assert!(readable(sock), "no frame reached the host side");
            // SAFETY: reads into `buf`, of the length given.
            let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            assert!(n > 0);
            let f = &buf[..n as usize];
            if f.len() >= 14 && f[12..14] == ETHERTYPE {
                return f.to_vec();
            }
        }
    }

    fn host_send(sock: &OwnedFd, frame: &[u8]) {
        // SAFETY: sends `frame`.
        let n = unsafe { libc::send(sock.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        assert_eq!(
            n,
            frame.len() as isize,
            "{}",
            std::io::Error::last_os_error()
        );
    }

    fn our_frame(len: usize, seed: u8) -> Vec<u8> {
        let mut f = frame(len, seed);
        f[12..14].copy_from_slice(&ETHERTYPE);
        f
    }

    #[test]
    fn tap_errors_are_named() {
        in_netns("tap_errors_are_named", || {
            let tap = Tap::open(&TapOptions {
                name: Some(NAME.into()),
                vnet_hdr: false,
            })
            .unwrap();
            assert_eq!(tap.name(), NAME);
            assert!(tap.created());
            let again = Tap::open(&TapOptions {
                name: Some(NAME.into()),
                vnet_hdr: false,
            })
            .unwrap_err();
            assert!(matches!(again, TapError::Busy(_)), "{again}");
            let lo = Tap::open(&TapOptions {
                name: Some("lo".into()),
                vnet_hdr: false,
            })
            .unwrap_err();
            assert!(matches!(lo, TapError::NotATap(_)), "{lo}");
            // A name the kernel picks, and a vnet header for a kernel back end.
            let picked = Tap::open(&TapOptions {
                name: None,
                vnet_hdr: true,
            })
            .unwrap();
            assert!(picked.name().starts_with("tap"), "{}", picked.name());
        });
    }

    #[test]
    fn frames_cross_the_tap_byte_for_byte_both_ways() {
        in_netns("frames_cross_the_tap_byte_for_byte_both_ways", || {
            let tap = Tap::open(&TapOptions {
                name: Some(NAME.into()),
                vnet_hdr: false,
            })
            .unwrap();
            let tap_fd = tap.fd().try_clone_to_owned().unwrap();
            let sock = packet_socket(NAME);
            let mut d = Driver::new(Box::new(tap), false);
            d.setup(ALL & !EVENT_IDX);
            for i in 0..4 {
                d.post_rx(i, RX_BUFFER_LEN as u32, true);
            }
            // Guest to host.
            for (i, len) in [(0u16, 60), (1, MAX_FRAME)] {
                let f = our_frame(len, i as u8);
                d.send(i, &f);
                assert_eq!(host_receive(&sock), f);
            }
            // Host to guest, through the worker waiting on the TAP.
            let worker = NotifyWorker::spawn(
                "net-test",
                Vec::new(),
                vec![ReadySource {
                    fd: tap_fd,
                    device: d.dev.clone(),
                    queue: RX_QUEUE as u32,
                }],
                Box::new(|| Ok(())),
            )
            .unwrap();
            let sent = [our_frame(100, 7), our_frame(MAX_FRAME, 8)];
            for f in &sent {
                host_send(&sock, f);
            }
            let start = Instant::now();
            let mut got = Vec::new();
            while got.len() < sent.len() && start.elapsed() < Duration::from_secs(5) {
                for (id, len) in d.take_used(RX_QUEUE) {
                    let b = d.rx_bytes(id, len);
                    if b.len() >= HEADER_LEN + 14
                        && b[HEADER_LEN + 12..HEADER_LEN + 14] == ETHERTYPE
                    {
                        got.push(b);
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            drop(worker);
            let want: Vec<Vec<u8>> = sent.iter().map(|f| expect_rx(f)).collect();
            assert_eq!(got, want);
            assert_eq!(d.counters.total_drops(), 0, "{:?}", d.counters);
        });
    }
}

/// `avail_event` of queue `q` (after the used ring).
fn avail_event(mem: &GuestMemoryMmap, q: usize) -> u16 {
    mem.read_obj(GuestAddress(RINGS[q][2] + 4 + 8 * u64::from(SIZE)))
        .unwrap()
}

/// Both rings' indices, for a failure message.
fn ring_state(d: &Driver) -> String {
    format!(
        "rx avail {} used {} avail_event {}; tx avail {} used {} avail_event {}",
        d.avail[0],
        d.used_idx(0),
        avail_event(&d.mem, 0),
        d.avail[1],
        d.used_idx(1),
        avail_event(&d.mem, 1)
    )
}

/// Re-arm the receive interrupt (used_event = the next entry), look once
/// more, then sleep on the interrupt (at most 5 s) as Linux's driver does;
/// whether there is something to take.
fn rearm_and_wait(d: &Driver) -> bool {
    d.mem
        .write_obj(
            d.used_seen[0],
            GuestAddress(RINGS[0][1] + 4 + 2 * u64::from(SIZE)),
        )
        .unwrap();
    std::sync::atomic::fence(Ordering::SeqCst);
    if d.used_idx(0) != d.used_seen[0] {
        return true;
    }
    let mut p = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(&d.irq),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd.
    let woke = unsafe { libc::poll(&mut p, 1, 5000) } == 1;
    let _ = d.irq.read();
    woke || d.used_idx(0) != d.used_seen[0]
}

/// A driver on its own thread racing a notify worker, as under
/// `--virtio-notify ioeventfd` with EVENT_IDX: kicks only when the device
/// asks (avail_event), sleeps on the interrupt after re-arming used_event;
/// every burst must come back whole, in order, with no kick or interrupt
/// missed.
#[test]
fn event_idx_bursts_race_a_worker_without_a_stall() {
    use std::sync::atomic::fence;
    let mem = GuestMemoryMmap::from_ranges(&[(GuestAddress(0), RAM)]).unwrap();
    let irq = EventFd::new(EFD_NONBLOCK).unwrap();
    let interrupt = Arc::new(VirtioInterrupt::irqfd(irq.try_clone().unwrap()));
    let net = Net::new(Box::new(Echo::new()), DEFAULT_MAC);
    let dev = Arc::new(VirtioMmio::new(Box::new(net), mem.clone(), interrupt, true).unwrap());
    let mut d = Driver {
        dev: dev.clone(),
        mem: mem.clone(),
        irq,
        counters: Arc::default(),
        avail: [0; 2],
        used_seen: [0; 2],
    };
    d.setup(ALL);
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    let worker = {
        let dev = dev.clone();
        std::thread::spawn(move || {
            while let Ok(q) = rx.recv() {
                dev.notify(q);
            }
        })
    };
    let publish = |d: &mut Driver, q: usize, head: u16, old: u16| -> u16 {
        let slot = u64::from(d.avail[q] % SIZE);
        d.mem
            .write_obj(head, GuestAddress(RINGS[q][1] + 4 + 2 * slot))
            .unwrap();
        d.avail[q] = d.avail[q].wrapping_add(1);
        fence(Ordering::SeqCst);
        d.mem
            .write_obj(d.avail[q], GuestAddress(RINGS[q][1] + 2))
            .unwrap();
        fence(Ordering::SeqCst);
        let new = d.avail[q];
        let ev = avail_event(&d.mem, q);
        if new.wrapping_sub(ev).wrapping_sub(1) < new.wrapping_sub(old) {
            tx.send(q as u32).unwrap();
        }
        new
    };
    // Three receive buffers for bursts of eight, each reposted once taken:
    // frames wait in the echo's backlog for the driver's receive kicks.
    let mut rx_old = 0u16;
    for i in 0..3 {
        d.desc(RX_QUEUE, i, RX_BUF + 0x1000 * u64::from(i), 2048, WRITE, 0);
        rx_old = publish(&mut d, RX_QUEUE, i, rx_old);
    }
    let mut tx_old = 0u16;
    for burst in 0..300u32 {
        for i in 0..8u16 {
            let f = frame(60 + usize::from(i), burst as u8);
            let at = TX_BUF + 0x1000 * u64::from(i);
            d.mem
                .write_slice(&[0; HEADER_LEN], GuestAddress(at))
                .unwrap();
            d.mem
                .write_slice(&f, GuestAddress(at + HEADER_LEN as u64))
                .unwrap();
            d.desc(TX_QUEUE, i, at, (HEADER_LEN + f.len()) as u32, 0, 0);
            tx_old = publish(&mut d, TX_QUEUE, i, tx_old);
        }
        let mut got = Vec::new();
        while got.len() < 8 {
            assert!(
                rearm_and_wait(&d),
                "burst {burst}: no interrupt after {} frames: {}",
                got.len(),
                ring_state(&d)
            );
            for (id, len) in d.take_used(RX_QUEUE) {
                let k = got.len();
                let f = frame(60 + k, burst as u8);
                assert_eq!(
                    d.rx_bytes(id, len),
                    expect_rx(&f),
                    "burst {burst} frame {k}"
                );
                got.push((id, len));
                rx_old = publish(&mut d, RX_QUEUE, id as u16, rx_old);
            }
        }
        let _ = d.take_used(TX_QUEUE);
    }
    drop(tx);
    worker.join().unwrap();
}
