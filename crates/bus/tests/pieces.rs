//! The bus cuts guest accesses as QEMU does (no KVM needed): wide accesses
//! to narrow devices, misaligned ones, narrow ones below a device's
//! minimum, accesses that run past a range's end or start where nothing is
//! mapped, and a stop in the middle of an access.

use std::sync::{Arc, Mutex};

use trapline_bus::{Access, AccessSizes, Bus, BusBuilder, BusDevice, IoOutcome, StopReason};

/// One device call: (write?, base, offset, bytes).
type Call = (bool, u64, u64, Vec<u8>);

/// Records every call. Reads return `tag + offset + i` for byte `i`;
/// a written byte 0xee stops the VM.
struct Recorder {
    sizes: AccessSizes,
    tag: u8,
    calls: Mutex<Vec<Call>>,
}

impl Recorder {
    fn new(sizes: AccessSizes, tag: u8) -> Arc<Self> {
        Arc::new(Self {
            sizes,
            tag,
            calls: Mutex::new(Vec::new()),
        })
    }

    fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

impl BusDevice for Recorder {
    fn read(&self, _vcpu: usize, base: u64, offset: u64, data: &mut [u8]) {
        for (i, b) in data.iter_mut().enumerate() {
            *b = self.tag.wrapping_add(offset as u8).wrapping_add(i as u8);
        }
        self.calls
            .lock()
            .unwrap()
            .push((false, base, offset, data.to_vec()));
    }

    fn write(&self, _vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        self.calls
            .lock()
            .unwrap()
            .push((true, base, offset, data.to_vec()));
        if data.contains(&0xee) {
            IoOutcome::Stop(StopReason::PowerOff)
        } else {
            IoOutcome::Continue
        }
    }

    fn access_sizes(&self) -> AccessSizes {
        self.sizes
    }
}

fn bus_of(devices: &[(u64, u64, &Arc<Recorder>)]) -> Bus {
    let mut b = BusBuilder::new();
    for &(base, len, dev) in devices {
        b.insert("dev", base, len, dev.clone()).unwrap();
    }
    b.build()
}

fn w(base: u64, offset: u64, bytes: &[u8]) -> Call {
    (true, base, offset, bytes.to_vec())
}

fn r(base: u64, offset: u64, bytes: &[u8]) -> Call {
    (false, base, offset, bytes.to_vec())
}

#[test]
fn an_outl_to_a_byte_device_is_four_byte_writes_in_order() {
    // pc-testdev's IRQ ports: kvm-unit-tests' realmode raises IRQ 11 with
    // an outl of 1 to port 0x200b.
    let irq = Recorder::new(AccessSizes::BYTES, 0);
    let bus = bus_of(&[(0x2000, 24, &irq)]);
    let value: u32 = 0x4433_2201;
    assert_eq!(
        bus.write(0, 0x200b, &value.to_le_bytes()),
        Access::Handled(IoOutcome::Continue)
    );
    assert_eq!(
        irq.take(),
        [
            w(0x2000, 0xb, &[0x01]),
            w(0x2000, 0xc, &[0x22]),
            w(0x2000, 0xd, &[0x33]),
            w(0x2000, 0xe, &[0x44]),
        ]
    );
}

#[test]
fn an_inl_from_a_byte_device_assembles_four_byte_reads() {
    let uart = Recorder::new(AccessSizes::BYTES, 0x10);
    let bus = bus_of(&[(0x3f8, 8, &uart)]);
    let mut d = [0u8; 4];
    assert_eq!(
        bus.read(0, 0x3f9, &mut d),
        Access::Handled(IoOutcome::Continue)
    );
    // Byte i came from offset 1 + i; the value is little-endian.
    assert_eq!(u32::from_le_bytes(d), 0x1413_1211);
    assert_eq!(
        uart.take(),
        [
            r(0x3f8, 1, &[0x11]),
            r(0x3f8, 2, &[0x12]),
            r(0x3f8, 3, &[0x13]),
            r(0x3f8, 4, &[0x14]),
        ]
    );
}

#[test]
fn every_size_to_every_rule() {
    let rules = [
        (AccessSizes::BYTES, 1),
        (AccessSizes::aligned(1, 2), 2),
        (AccessSizes::QEMU_DEFAULT, 4),
        (AccessSizes::aligned(1, 8), 8),
        (AccessSizes::ANY, 8),
    ];
    for (rule, max) in rules {
        let dev = Recorder::new(rule, 0);
        let bus = bus_of(&[(0x1000, 0x100, &dev)]);
        for len in [1usize, 2, 4, 8] {
            let data: Vec<u8> = (1..=len as u8).collect();
            let _ = bus.write(0, 0x1040, &data);
            let piece = len.min(max);
            let want: Vec<Call> = data
                .chunks(piece)
                .enumerate()
                .map(|(i, c)| w(0x1000, 0x40 + (i * piece) as u64, c))
                .collect();
            assert_eq!(dev.take(), want, "{rule:?} write of {len}");

            let mut back = vec![0u8; len];
            let _ = bus.read(0, 0x1040, &mut back);
            // Each piece reads tag + offset + i: the bytes count up.
            let expect: Vec<u8> = (0x40..0x40 + len as u8).collect();
            assert_eq!(back, expect, "{rule:?} read of {len}");
            assert_eq!(dev.take().len(), len / piece, "{rule:?} read of {len}");
        }
    }
}

#[test]
fn mmio_quadwords_to_a_dword_device_are_two_dwords_low_first() {
    let dev = Recorder::new(AccessSizes::QEMU_DEFAULT, 0);
    let bus = bus_of(&[(0xfee0_0000, 0x1000, &dev)]);
    let v: u64 = 0x8877_6655_4433_2211;
    let _ = bus.write(0, 0xfee0_0300, &v.to_le_bytes());
    assert_eq!(
        dev.take(),
        [
            w(0xfee0_0000, 0x300, &[0x11, 0x22, 0x33, 0x44]),
            w(0xfee0_0000, 0x304, &[0x55, 0x66, 0x77, 0x88]),
        ]
    );
}

#[test]
fn misaligned_accesses_are_cut_at_natural_alignment() {
    let dev = Recorder::new(AccessSizes::QEMU_DEFAULT, 0);
    let bus = bus_of(&[(0x100, 0x10, &dev)]);
    let _ = bus.write(0, 0x101, &[1, 2, 3, 4]);
    assert_eq!(
        dev.take(),
        [w(0x100, 1, &[1]), w(0x100, 2, &[2, 3]), w(0x100, 4, &[4])]
    );
    // A device taking unaligned accesses gets them whole.
    let any = Recorder::new(AccessSizes::ANY, 0);
    let bus = bus_of(&[(0x100, 0x10, &any)]);
    let _ = bus.write(0, 0x101, &[1, 2, 3, 4]);
    assert_eq!(any.take(), [w(0x100, 1, &[1, 2, 3, 4])]);
}

#[test]
fn pieces_narrower_than_the_minimum_read_zero_and_drop_writes() {
    // pc-testdev's flush port takes only dwords.
    let dev = Recorder::new(AccessSizes::aligned(4, 4), 0x50);
    let bus = bus_of(&[(0xe4, 4, &dev)]);
    assert_eq!(
        bus.write(0, 0xe4, &[1, 2]),
        Access::Handled(IoOutcome::Continue)
    );
    let mut d = [0xaa; 2];
    assert_eq!(
        bus.read(0, 0xe4, &mut d),
        Access::Handled(IoOutcome::Continue)
    );
    assert_eq!(d, [0, 0]);
    assert!(dev.take().is_empty());
    // A misaligned dword is cut below the minimum: nothing reaches it, and
    // the bytes past the range are unmapped.
    let mut d = [0xaa; 4];
    let _ = bus.read(0, 0xe6, &mut d);
    assert_eq!(d, [0, 0, 0xff, 0xff]);
    assert!(dev.take().is_empty());
    // A dword does.
    let _ = bus.write(0, 0xe4, &[1, 2, 3, 4]);
    assert_eq!(dev.take(), [w(0xe4, 0, &[1, 2, 3, 4])]);
}

#[test]
fn a_piece_runs_past_the_end_and_the_next_one_is_looked_up_again() {
    // QEMU does not clamp a piece at its region's end (ports 0xcf8 and
    // 0xcf9 overlap on PCs): the device where a piece starts gets all of
    // it. Only the next piece is looked up again.
    let short = Recorder::new(AccessSizes::QEMU_DEFAULT, 0);
    let next = Recorder::new(AccessSizes::BYTES, 0x80);
    let bus = bus_of(&[(0x510, 2, &short), (0x512, 2, &next)]);
    let _ = bus.write(0, 0x510, &[1, 2, 3, 4]);
    assert_eq!(short.take(), [w(0x510, 0, &[1, 2, 3, 4])]);
    assert!(next.take().is_empty());
    // Cut by alignment: a byte at 0x511, then the next device's bytes,
    // then nothing (0x514 is unmapped).
    let _ = bus.write(0, 0x511, &[1, 2, 3, 4]);
    assert_eq!(short.take(), [w(0x510, 1, &[1])]);
    assert_eq!(next.take(), [w(0x512, 0, &[2]), w(0x512, 1, &[3])]);
    // The same for a byte device running into a gap: the rest is unmapped
    // (all-ones, dropped).
    let bytes = Recorder::new(AccessSizes::BYTES, 0x30);
    let bus = bus_of(&[(0x3f8, 8, &bytes)]);
    let mut d = [0u8; 4];
    assert_eq!(
        bus.read(0, 0x3fe, &mut d),
        Access::Handled(IoOutcome::Continue)
    );
    assert_eq!(d, [0x36, 0x37, 0xff, 0xff]);
    assert_eq!(bytes.take(), [r(0x3f8, 6, &[0x36]), r(0x3f8, 7, &[0x37])]);
}

#[test]
fn an_access_starting_where_nothing_is_mapped_reaches_the_device_after() {
    let dev = Recorder::new(AccessSizes::QEMU_DEFAULT, 0x40);
    let bus = bus_of(&[(0x10, 8, &dev)]);
    let mut d = [0u8; 4];
    // 0xf is unmapped: one all-ones byte, then 2 + 1 bytes of the device.
    assert_eq!(
        bus.read(0, 0xf, &mut d),
        Access::Handled(IoOutcome::Continue)
    );
    assert_eq!(d, [0xff, 0x40, 0x41, 0x42]);
    assert_eq!(dev.take(), [r(0x10, 0, &[0x40, 0x41]), r(0x10, 2, &[0x42])]);
    // Nothing mapped anywhere in the access.
    assert_eq!(bus.read(0, 0x20, &mut d), Access::Unmapped);
    assert_eq!(d, [0xff; 4]);
    assert_eq!(bus.write(0, 0x21, &[1, 2, 3]), Access::Unmapped);
    // An unmapped piece is aligned like any other: a word at 0xe covers
    // 0xe and 0xf only.
    assert_eq!(bus.write(0, 0xe, &[1, 2]), Access::Unmapped);
    assert!(dev.take().is_empty());
}

#[test]
fn a_stop_ends_a_write_but_a_read_completes() {
    let dev = Recorder::new(AccessSizes::BYTES, 0);
    let bus = bus_of(&[(0xf4, 4, &dev)]);
    assert_eq!(
        bus.write(0, 0xf4, &[1, 0xee, 3, 4]),
        Access::Handled(IoOutcome::Stop(StopReason::PowerOff))
    );
    assert_eq!(dev.take(), [w(0xf4, 0, &[1]), w(0xf4, 1, &[0xee])]);
}

/// An absent device: every read stops the VM.
struct Absent;

impl BusDevice for Absent {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        data.fill(0xff);
    }
    fn write(&self, _vcpu: usize, _base: u64, _offset: u64, _data: &[u8]) -> IoOutcome {
        IoOutcome::Continue
    }
    fn read_stops(&self) -> Option<StopReason> {
        Some(StopReason::PowerOff)
    }
    fn access_sizes(&self) -> AccessSizes {
        AccessSizes::BYTES
    }
}

#[test]
fn a_stopping_read_in_a_wide_access_still_fills_every_byte() {
    let dev = Recorder::new(AccessSizes::BYTES, 0x60);
    let mut b = BusBuilder::new();
    b.insert("dev", 0x60, 1, dev.clone()).unwrap();
    b.insert("absent", 0x61, 1, Arc::new(Absent)).unwrap();
    let bus = b.build();
    let mut d = [0u8; 4];
    assert_eq!(
        bus.read(0, 0x60, &mut d),
        Access::Handled(IoOutcome::Stop(StopReason::PowerOff))
    );
    assert_eq!(d, [0x60, 0xff, 0xff, 0xff]);
}

#[test]
fn the_top_of_the_address_space_and_empty_accesses() {
    let dev = Recorder::new(AccessSizes::BYTES, 0);
    let bus = bus_of(&[(u64::MAX - 1, 2, &dev)]);
    let mut d = [0u8; 8];
    assert_eq!(
        bus.read(0, u64::MAX - 1, &mut d),
        Access::Handled(IoOutcome::Continue)
    );
    // Two bytes from the device (offsets 0 and 1), then past the top.
    assert_eq!(d, [0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(dev.take().len(), 2);
    assert_eq!(
        bus.write(0, u64::MAX, &[1, 2, 3]),
        Access::Handled(IoOutcome::Continue)
    );
    assert_eq!(dev.take(), [w(u64::MAX - 1, 1, &[1])]);
    // An empty access calls no device.
    assert_eq!(
        bus.write(0, u64::MAX, &[]),
        Access::Handled(IoOutcome::Continue)
    );
    assert_eq!(
        bus.read(0, u64::MAX, &mut []),
        Access::Handled(IoOutcome::Continue)
    );
    assert_eq!(bus.read(0, 5, &mut []), Access::Unmapped);
    assert!(dev.take().is_empty());
}

#[test]
fn hostile_accesses_respect_every_rule_and_never_panic() {
    let rules = [
        AccessSizes::BYTES,
        AccessSizes::QEMU_DEFAULT,
        AccessSizes::ANY,
        AccessSizes::aligned(4, 4),
        AccessSizes::aligned(2, 8),
    ];
    let devs: Vec<Arc<Recorder>> = rules.iter().map(|&s| Recorder::new(s, 0)).collect();
    let mut b = BusBuilder::new();
    for (i, d) in devs.iter().enumerate() {
        // Ranges of odd lengths at odd bases, with gaps between them.
        b.insert("dev", 0x100 * i as u64 + 3, 5 + i as u64, d.clone())
            .unwrap();
    }
    let bus = b.build();
    // A small xorshift: deterministic, no dependency.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut buf = [0u8; 64];
    for _ in 0..20_000 {
        let addr = next() % 0x600;
        let len = (next() % 65) as usize;
        let data = &mut buf[..len];
        let _ = bus.read(0, addr, data);
        let _ = bus.write(0, addr, data);
        for (d, rule) in devs.iter().zip(rules) {
            for (_, base, offset, bytes) in d.take() {
                let n = bytes.len();
                assert!(n.is_power_of_two() && n >= rule.min() && n <= rule.max());
                assert!(rule.unaligned() || offset % n as u64 == 0);
                // Every piece starts inside its device's range.
                assert!(bus.find(base + offset).is_some());
                assert!(base + offset >= addr && base + offset < addr + len as u64);
            }
        }
    }
}
