//! chr-testdev: a virtio console (device ID 3) on a legacy virtio-mmio
//! transport (register layout version 1, QEMU's default on `virt`), its
//! port wired to the [`Testdev`] backend. QEMU spells it `-device
//! virtio-serial-device -device virtconsole,chardev=ctd -chardev
//! testdev,id=ctd`; kvm-unit-tests' arm64 `exit(code)` writes `"<code>q"`
//! to it and expects the VM to end with status `(code << 1) | 1`.
//!
//! As little of virtio-serial as its guests need: no feature bits (so no
//! MULTIPORT: port 0 is the console, queue 0 its receiveq, queue 1 its
//! transmitq) and nothing ever written to the guest. kvm-unit-tests writes
//! neither Status nor features, so queues work as soon as their QueuePFN
//! is set, as in QEMU's legacy path. A transmitq notification is served in
//! the MMIO exit itself and may end the run there: the guest does not wait
//! for the used ring before it goes on to power off (its `virtqueue_get_buf`
//! does not look at the used index).
//!
//! The rings are rust-vmm's `virtio-queue`: whatever a hostile guest puts
//! in them, the worst outcome is a chain used with length 0; at most
//! [`MAX_BYTES_PER_CHAIN`] bytes of a chain are read.

use std::sync::{Arc, Mutex, MutexGuard};

use trapline_bus::{AccessSizes, BusDevice, IoOutcome, StopReason};
use virtio_queue::{Queue, QueueOwnedT, QueueT};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use super::empty::LEGACY_VERSION;
use super::interrupt::{VirtioInterrupt, INT_VRING};
use super::mmio::{MAGIC, VENDOR_ID};
use super::testdev::Testdev;

/// Virtio device ID of a console.
pub const VIRTIO_ID_CONSOLE: u32 = 3;
/// Entries each queue may have (QEMU's virtio-serial port queues: 128,
/// the size kvm-unit-tests asks for).
pub const QUEUE_MAX: u16 = 128;
/// Bytes of one transmit chain handed to the backend; the rest is dropped
/// (testdev packets are a few bytes; this bounds the work one exit does).
pub const MAX_BYTES_PER_CHAIN: usize = 64 * 1024;
/// Port 0's transmitq (its receiveq, queue 0, is never filled).
const TRANSMITQ: usize = 1;

/// The legacy register layout (virtio 1.x §4.2.4).
mod reg {
    pub const MAGIC: u64 = 0x00;
    pub const VERSION: u64 = 0x04;
    pub const DEVICE_ID: u64 = 0x08;
    pub const VENDOR_ID: u64 = 0x0c;
    pub const HOST_FEATURES: u64 = 0x10;
    pub const GUEST_PAGE_SIZE: u64 = 0x28;
    pub const QUEUE_SEL: u64 = 0x30;
    pub const QUEUE_NUM_MAX: u64 = 0x34;
    pub const QUEUE_NUM: u64 = 0x38;
    pub const QUEUE_ALIGN: u64 = 0x3c;
    pub const QUEUE_PFN: u64 = 0x40;
    pub const QUEUE_NOTIFY: u64 = 0x50;
    pub const INTERRUPT_STATUS: u64 = 0x60;
    pub const INTERRUPT_ACK: u64 = 0x64;
    pub const STATUS: u64 = 0x70;
}

/// One legacy queue: what the driver wrote, and the ring once QueuePFN
/// placed it.
struct LegacyQueue {
    num: u32,
    align: u32,
    pfn: u32,
    queue: Queue,
}

impl LegacyQueue {
    fn new() -> Self {
        Self {
            num: u32::from(QUEUE_MAX),
            align: 4096,
            pfn: 0,
            queue: Queue::new(QUEUE_MAX).expect("QUEUE_MAX is a power of two"),
        }
    }

    /// QueuePFN: place the rings (legacy layout: descriptors at PFN ×
    /// page size, the available ring after them, the used ring at the next
    /// `align` boundary), or take the queue down with 0. A layout that does
    /// not fit leaves the queue not ready.
    fn set_pfn(&mut self, pfn: u32, page_size: u32, mem: &GuestMemoryMmap) {
        self.queue.reset();
        self.pfn = pfn;
        if pfn == 0 {
            return;
        }
        let Some((desc, avail, used)) = legacy_layout(pfn, page_size, self.num, self.align) else {
            return;
        };
        let q = &mut self.queue;
        if q.try_set_size(self.num as u16).is_err() {
            return;
        }
        let split = |a: u64| (Some(a as u32), Some((a >> 32) as u32));
        let (lo, hi) = split(desc);
        q.set_desc_table_address(lo, hi);
        let (lo, hi) = split(avail);
        q.set_avail_ring_address(lo, hi);
        let (lo, hi) = split(used);
        q.set_used_ring_address(lo, hi);
        q.set_ready(true);
        if !q.is_valid(mem) {
            q.set_ready(false);
        }
    }
}

/// The legacy split ring's three addresses for a queue of `num` entries
/// at page `pfn`, or `None` when a value is not a power of two or an
/// address does not fit 64 bits.
fn legacy_layout(pfn: u32, page_size: u32, num: u32, align: u32) -> Option<(u64, u64, u64)> {
    if !page_size.is_power_of_two() || !align.is_power_of_two() || !num.is_power_of_two() {
        return None;
    }
    let desc = u64::from(pfn).checked_mul(u64::from(page_size))?;
    let avail = desc.checked_add(16 * u64::from(num))?;
    // flags, idx, ring[num], used_event.
    let avail_end = avail.checked_add(6 + 2 * u64::from(num))?;
    let mask = u64::from(align) - 1;
    let used = avail_end.checked_add(mask)? & !mask;
    Some((desc, avail, used))
}

struct State {
    page_size: u32,
    queue_sel: u32,
    status: u32,
    queues: [LegacyQueue; 2],
    backend: Testdev,
}

/// The virtio console with its testdev backend, on one legacy transport.
pub struct ChrTestdev {
    state: Mutex<State>,
    mem: GuestMemoryMmap,
    interrupt: Arc<VirtioInterrupt>,
}

impl ChrTestdev {
    /// The device on guest memory `mem`, interrupting through `interrupt`.
    pub fn new(mem: GuestMemoryMmap, interrupt: Arc<VirtioInterrupt>) -> Self {
        Self {
            state: Mutex::new(State {
                page_size: 4096,
                queue_sel: 0,
                status: 0,
                queues: [LegacyQueue::new(), LegacyQueue::new()],
                backend: Testdev::new(),
            }),
            mem,
            interrupt,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The interrupt (for its count).
    pub fn interrupt(&self) -> &Arc<VirtioInterrupt> {
        &self.interrupt
    }

    fn read_reg(&self, offset: u64) -> u32 {
        let st = self.lock();
        let queue = st.queues.get(st.queue_sel as usize);
        match offset {
            reg::MAGIC => MAGIC,
            reg::VERSION => LEGACY_VERSION,
            reg::DEVICE_ID => VIRTIO_ID_CONSOLE,
            reg::VENDOR_ID => VENDOR_ID,
            // No feature bits: one port, no MULTIPORT, no SIZE.
            reg::HOST_FEATURES => 0,
            reg::QUEUE_NUM_MAX => queue.map_or(0, |_| u32::from(QUEUE_MAX)),
            reg::QUEUE_PFN => queue.map_or(0, |q| q.pfn),
            reg::INTERRUPT_STATUS => self.interrupt.status(),
            reg::STATUS => st.status,
            _ => 0,
        }
    }

    fn write_reg(&self, offset: u64, value: u32) -> IoOutcome {
        let mut guard = self.lock();
        let st = &mut *guard;
        let sel = st.queue_sel as usize;
        match offset {
            reg::GUEST_PAGE_SIZE => st.page_size = value,
            reg::QUEUE_SEL => st.queue_sel = value,
            reg::QUEUE_NUM => {
                if let Some(q) = st.queues.get_mut(sel) {
                    q.num = value.min(u32::from(QUEUE_MAX));
                }
            }
            reg::QUEUE_ALIGN => {
                if let Some(q) = st.queues.get_mut(sel) {
                    q.align = value;
                }
            }
            reg::QUEUE_PFN => {
                let page_size = st.page_size;
                if let Some(q) = st.queues.get_mut(sel) {
                    q.set_pfn(value, page_size, &self.mem);
                }
            }
            reg::QUEUE_NOTIFY if value as usize == TRANSMITQ => return self.transmit(st),
            reg::INTERRUPT_ACK => self.interrupt.ack(value),
            reg::STATUS => {
                st.status = value;
                if value == 0 {
                    st.queues = [LegacyQueue::new(), LegacyQueue::new()];
                    st.queue_sel = 0;
                    self.interrupt.reset();
                }
            }
            // The receiveq is never filled (testdev sends nothing back);
            // other registers are read-only or unused.
            _ => {}
        }
        IoOutcome::Continue
    }

    /// Hand what the transmitq holds to the backend, chain by chain; stop
    /// the VM when it reads a `q` command.
    fn transmit(&self, st: &mut State) -> IoOutcome {
        let mem = &self.mem;
        let q = &mut st.queues[TRANSMITQ].queue;
        if !q.ready() {
            return IoOutcome::Continue;
        }
        let mut used = 0u32;
        let mut stop = None;
        while stop.is_none() {
            let chain = match q.iter(mem) {
                Ok(mut it) => match it.next() {
                    Some(c) => c,
                    None => break,
                },
                // A ring outside guest RAM or an impossible index: nothing
                // more is taken from it.
                Err(_) => break,
            };
            let head = chain.head_index();
            let mut budget = MAX_BYTES_PER_CHAIN;
            let mut buf = [0u8; 256];
            'chain: for desc in chain.readable() {
                let mut addr = desc.addr();
                let mut left = (desc.len() as usize).min(budget);
                budget -= left;
                while left > 0 {
                    let n = left.min(buf.len());
                    if mem.read_slice(&mut buf[..n], addr).is_err() {
                        break 'chain;
                    }
                    if let Some(code) = st.backend.feed(&buf[..n]) {
                        stop = Some(code);
                        break 'chain;
                    }
                    left -= n;
                    addr = GuestAddress(addr.0.wrapping_add(n as u64));
                }
            }
            // The console reads; it writes nothing into a transmit chain.
            if q.add_used(mem, head, 0).is_err() {
                break;
            }
            used += 1;
        }
        if used > 0 && q.needs_notification(mem).unwrap_or(true) {
            self.interrupt.trigger(INT_VRING);
        }
        match stop {
            Some(code) => IoOutcome::Stop(StopReason::DebugExit(code)),
            None => IoOutcome::Continue,
        }
    }
}

impl BusDevice for ChrTestdev {
    fn access_sizes(&self) -> AccessSizes {
        // QEMU's virtio-mmio region declares none: 1 to 4 bytes, aligned.
        AccessSizes::QEMU_DEFAULT
    }

    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        // Registers are 32-bit; the console's configuration space (0x100
        // on) is all zeros without SIZE or MULTIPORT.
        if data.len() == 4 && offset.is_multiple_of(4) && offset < 0x100 {
            data.copy_from_slice(&self.read_reg(offset).to_le_bytes());
        } else {
            data.fill(0);
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        match <[u8; 4]>::try_from(data) {
            Ok(bytes) if offset.is_multiple_of(4) && offset < 0x100 => {
                self.write_reg(offset, u32::from_le_bytes(bytes))
            }
            _ => IoOutcome::Continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostile::each_access;
    use vm_memory::GuestAddress;
    use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

    const RAM: usize = 0x40000;
    const PAGE: u32 = 4096;
    const QPFN: u32 = 0x10; // the transmitq's rings at 0x10000
    const BUF: u64 = 0x30000;

    struct Driver {
        dev: ChrTestdev,
        mem: GuestMemoryMmap,
        irq: EventFd,
        avail_idx: u16,
        next_desc: u16,
    }

    impl Driver {
        /// Set up as kvm-unit-tests' lib/virtio-mmio.c does: page size,
        /// both queues of 128 with page alignment, no Status, no features.
        fn new() -> Self {
            let mem = GuestMemoryMmap::from_ranges(&[(GuestAddress(0), RAM)]).unwrap();
            let irq = EventFd::new(EFD_NONBLOCK).unwrap();
            let interrupt = Arc::new(VirtioInterrupt::irqfd(irq.try_clone().unwrap()));
            let d = Self {
                dev: ChrTestdev::new(mem.clone(), interrupt),
                mem,
                irq,
                avail_idx: 0,
                next_desc: 0,
            };
            assert_eq!(d.r(reg::MAGIC), u32::from_le_bytes(*b"virt"));
            assert_eq!(d.r(reg::VERSION), 1);
            assert_eq!(d.r(reg::DEVICE_ID), 3);
            d.w(reg::GUEST_PAGE_SIZE, PAGE);
            for (q, pfn) in [(0, 0x8), (1, QPFN)] {
                d.w(reg::QUEUE_SEL, q);
                assert!(d.r(reg::QUEUE_NUM_MAX) >= 128);
                assert_eq!(d.r(reg::QUEUE_PFN), 0);
                d.w(reg::QUEUE_NUM, 128);
                d.w(reg::QUEUE_ALIGN, PAGE);
                d.w(reg::QUEUE_PFN, pfn);
            }
            d
        }

        fn w(&self, off: u64, v: u32) {
            assert_eq!(
                self.dev.write(0, 0, off, &v.to_le_bytes()),
                IoOutcome::Continue
            );
        }

        fn notify(&self, queue: u32) -> IoOutcome {
            self.dev
                .write(0, 0, reg::QUEUE_NOTIFY, &queue.to_le_bytes())
        }

        fn r(&self, off: u64) -> u32 {
            let mut b = [0u8; 4];
            self.dev.read(0, 0, off, &mut b);
            u32::from_le_bytes(b)
        }

        /// Put `bytes` in one descriptor on the transmitq and notify it.
        fn send(&mut self, bytes: &[u8]) -> IoOutcome {
            let (desc, avail, _) = legacy_layout(QPFN, PAGE, 128, PAGE).unwrap();
            let d = self.next_desc;
            let buf = BUF + u64::from(d) * 0x100;
            self.mem.write_slice(bytes, GuestAddress(buf)).unwrap();
            let at = GuestAddress(desc + 16 * u64::from(d));
            self.mem.write_obj(buf, at).unwrap();
            self.mem
                .write_obj(bytes.len() as u32, GuestAddress(at.0 + 8))
                .unwrap();
            self.mem.write_obj(0u32, GuestAddress(at.0 + 12)).unwrap();
            let slot = avail + 4 + 2 * u64::from(self.avail_idx % 128);
            self.mem.write_obj(d, GuestAddress(slot)).unwrap();
            self.avail_idx = self.avail_idx.wrapping_add(1);
            self.mem
                .write_obj(self.avail_idx, GuestAddress(avail + 2))
                .unwrap();
            self.next_desc = (d + 1) % 128;
            self.notify(1)
        }

        fn used_idx(&self) -> u16 {
            let (_, _, used) = legacy_layout(QPFN, PAGE, 128, PAGE).unwrap();
            self.mem.read_obj(GuestAddress(used + 2)).unwrap()
        }
    }

    #[test]
    fn n_q_on_the_transmitq_stops_the_vm_with_n() {
        let mut d = Driver::new();
        assert_eq!(d.send(b"0q"), IoOutcome::Stop(StopReason::DebugExit(0)));
        assert_eq!(d.used_idx(), 1);
        assert_eq!(d.irq.read().unwrap(), 1);
        let mut d = Driver::new();
        assert_eq!(d.send(b"1q"), IoOutcome::Stop(StopReason::DebugExit(1)));
    }

    #[test]
    fn other_text_is_consumed_and_a_packet_may_span_chains() {
        let mut d = Driver::new();
        assert_eq!(d.send(b"hello\n"), IoOutcome::Continue);
        assert_eq!(d.used_idx(), 1);
        assert_eq!(d.send(b"4"), IoOutcome::Continue);
        assert_eq!(d.send(b"2q"), IoOutcome::Stop(StopReason::DebugExit(42)));
        assert_eq!(d.used_idx(), 3);
        assert_eq!(d.r(reg::INTERRUPT_STATUS), INT_VRING);
        d.w(reg::INTERRUPT_ACK, INT_VRING);
        assert_eq!(d.r(reg::INTERRUPT_STATUS), 0);
    }

    #[test]
    fn the_receiveq_and_unknown_queues_are_ignored() {
        let mut d = Driver::new();
        assert_eq!(d.notify(0), IoOutcome::Continue);
        assert_eq!(d.notify(7), IoOutcome::Continue);
        d.w(reg::QUEUE_SEL, 5);
        assert_eq!(d.r(reg::QUEUE_NUM_MAX), 0);
        assert_eq!(d.send(b"3q"), IoOutcome::Stop(StopReason::DebugExit(3)));
    }

    #[test]
    fn a_reset_takes_the_queues_down() {
        let mut d = Driver::new();
        d.w(reg::STATUS, 0);
        d.w(reg::QUEUE_SEL, 1);
        assert_eq!(d.r(reg::QUEUE_PFN), 0);
        assert_eq!(d.send(b"0q"), IoOutcome::Continue);
        assert_eq!(d.used_idx(), 0, "not ready: nothing used");
    }

    #[test]
    fn the_legacy_layout_is_virtios() {
        // 128 entries, 4 KiB alignment: desc 2 KiB, avail 262 bytes, used
        // at the next page.
        assert_eq!(
            legacy_layout(1, 4096, 128, 4096),
            Some((0x1000, 0x1800, 0x2000))
        );
        assert_eq!(legacy_layout(1, 4096, 128, 3), None);
        assert_eq!(legacy_layout(1, 0, 128, 4096), None);
        // The largest PFN and page size still fit 64 bits (the queue then
        // fails its check against guest RAM).
        assert!(legacy_layout(u32::MAX, 1 << 31, 128, 4096).is_some());
    }

    #[test]
    fn rings_outside_ram_or_bad_values_leave_the_queue_down() {
        for (page, pfn, align, num) in [
            (PAGE, 0x1000, PAGE, 128), // beyond RAM
            (3, QPFN, PAGE, 128),      // page size not a power of two
            (PAGE, QPFN, 0, 128),      // no alignment
            (PAGE, QPFN, PAGE, 0),     // no entries
            (u32::MAX, u32::MAX, PAGE, 128),
        ] {
            let d = Driver::new();
            d.w(reg::STATUS, 0);
            d.w(reg::GUEST_PAGE_SIZE, page);
            d.w(reg::QUEUE_SEL, 1);
            d.w(reg::QUEUE_NUM, num);
            d.w(reg::QUEUE_ALIGN, align);
            d.w(reg::QUEUE_PFN, pfn);
            assert_eq!(d.notify(1), IoOutcome::Continue);
        }
    }

    #[test]
    fn hostile_rings_and_registers_never_panic() {
        // Garbage descriptors (huge lengths, addresses outside RAM, loops)
        // and random register traffic: every outcome is Continue or Stop.
        let mut d = Driver::new();
        let (desc, avail, _) = legacy_layout(QPFN, PAGE, 128, PAGE).unwrap();
        let mut seed = 0x1234_5678_9abc_def0u64;
        for round in 0..200u32 {
            for i in 0..128u64 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let at = GuestAddress(desc + 16 * i);
                d.mem.write_obj(seed, at).unwrap();
                d.mem
                    .write_obj(seed.rotate_left(17), GuestAddress(at.0 + 8))
                    .unwrap();
                d.mem
                    .write_obj((seed >> 8) as u16, GuestAddress(avail + 4 + 2 * i))
                    .unwrap();
            }
            d.mem
                .write_obj((seed >> 3) as u16, GuestAddress(avail + 2))
                .unwrap();
            let _ = d.notify(1);
            if round % 50 == 0 {
                d = Driver::new();
            }
        }
        each_access(0xC7D, 0x200, 20_000, |a| {
            let _ = d.dev.write(0, 0, a.offset, a.data);
            d.dev.read(0, 0, a.offset, a.data);
        });
    }
}
