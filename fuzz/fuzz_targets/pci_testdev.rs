//! pci-testdev with its ioeventfds played by `RecordingRegistry` the way
//! KVM would: a guest write that matches a live registration is consumed
//! (and counted by the eventfd) instead of exiting to the device.
//!
//! Input: `[flags]` then ops `[tag]...`: guest writes to BAR0/BAR1/the PV
//! doorbell/anywhere in a window, header reads, BAR moves and COMMAND
//! toggles through ECAM, registry failures, device reset.
//!
//! The model knows the selected test and its count (QEMU's rule: every
//! write consumed by the test's eventfd, plus every exiting byte write of
//! the test's data at the test's offset on its own BAR, any byte for the
//! wildcard tests, plus matching PV doorbell writes). Checks after every
//! op: `current_test` and `count()` match; the header read through the
//! BARs (index, width, offset, data, count, name, zeros after) matches; at
//! most one ioeventfd is live and it is the one the selected test needs at
//! its BAR's current address (exactly that one while the registry never
//! failed); nothing is registered for an unrouted BAR.

#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use trapline_abi::PV_DOORBELL_PORT;
use trapline_bus::{AccessSizes, Bus, BusBuilder, IoOutcome};
use trapline_devices::pci::*;
use trapline_fuzz::{width, Input, MACHINE_ECAM_BASE};

// pci-testdev's BARs (crates/devices/src/pci/testdev.rs; not re-exported).
const MMIO_BAR: usize = 0;
const IO_BAR: usize = 1;
const MMIO_BAR_SIZE: u64 = 4096;
const IO_BAR_SIZE: u64 = 256;

struct Rig {
    pci: PciDevices,
    dev: Arc<PciTestDev>,
    reg: RecordingRegistry,
    pio: Bus,
    mmio: Bus,
}

#[derive(Default)]
struct Model {
    current: Option<&'static TestSpec>,
    count: u64,
    ever_failed: bool,
    failing: bool,
}

fn space_of(bar: usize) -> Space {
    if bar == 0 {
        Space::Mmio
    } else {
        Space::Pio
    }
}

impl Rig {
    fn bar(&self, bar: usize) -> Option<u64> {
        self.pci.bus.bar_routed(TESTDEV_DEVFN, bar)
    }
    fn bus(&self, space: Space) -> &Bus {
        match space {
            Space::Mmio => &self.mmio,
            Space::Pio => &self.pio,
        }
    }
    fn ecam_write(&self, reg: u64, data: &[u8]) {
        let a = self.pci.layout.ecam_base + (u64::from(TESTDEV_DEVFN) << 12) + reg;
        self.mmio.write(0, a, data);
    }
}

fn counts(t: &TestSpec, v: u8) -> bool {
    match t.kind {
        TestKind::WildcardEventfd => true,
        TestKind::NoEventfd | TestKind::DatamatchEventfd => u32::from(v) == t.data,
        TestKind::PvEventfd => false,
    }
}

/// The piece of a port write of `data` at `addr` that reaches the PV
/// doorbell's port, if one starts there: the bus cuts an access no device
/// takes whole as QEMU does (crates/bus/src/access.rs), each piece sized by
/// the device it starts in (the doorbell: any 1 to 8 bytes; the I/O BAR and
/// unmapped ports: 1 to 4, aligned), so a 6-byte OUT at the port is a
/// 4-byte piece there and 2 bytes after it.
fn pv_doorbell_piece<'d>(rig: &Rig, addr: u64, data: &'d [u8]) -> Option<&'d [u8]> {
    let port = u64::from(PV_DOORBELL_PORT);
    let mut done = 0;
    while done < data.len() {
        let at = addr.wrapping_add(done as u64);
        let (sizes, offset) = if (port..port + 4).contains(&at) {
            (AccessSizes::ANY, at - port)
        } else {
            match rig.bar(IO_BAR) {
                Some(base) if (base..base + IO_BAR_SIZE).contains(&at) => {
                    (AccessSizes::QEMU_DEFAULT, at - base)
                }
                _ => (AccessSizes::QEMU_DEFAULT, at),
            }
        };
        let len = sizes.piece(offset, data.len() - done);
        if at == port {
            return Some(&data[done..done + len]);
        }
        done += len;
    }
    None
}

/// A guest write of `data` at `addr` in `space`.
fn guest_write(rig: &Rig, m: &mut Model, space: Space, addr: u64, data: &[u8]) {
    if (1..=8).contains(&data.len()) {
        let mut v = [0u8; 8];
        v[..data.len()].copy_from_slice(data);
        if rig
            .reg
            .fire(space, addr, data.len() as u32, u64::from_le_bytes(v))
        {
            // KVM consumed it; the eventfd's count is the test's count.
            m.count += 1;
            return;
        }
    }
    // It exits: model what the device will see.
    for bar in [MMIO_BAR, IO_BAR] {
        if space_of(bar) != space {
            continue;
        }
        let size = if bar == MMIO_BAR {
            MMIO_BAR_SIZE
        } else {
            IO_BAR_SIZE
        };
        let Some(base) = rig.bar(bar) else { continue };
        let off = addr.wrapping_sub(base);
        if off >= size {
            continue;
        }
        for (i, &b) in data.iter().enumerate() {
            let o = off + i as u64;
            if o >= size {
                break;
            }
            if o == 0 {
                m.current = TestSpec::select(space, b);
                m.count = 0;
            } else if let Some(t) = m.current {
                if t.space == space && o == u64::from(t.offset) && counts(t, b) {
                    m.count += 1;
                }
            }
        }
    }
    if space == Space::Pio {
        if let (Some(piece), Some(t)) = (pv_doorbell_piece(rig, addr, data), m.current) {
            if t.kind == TestKind::PvEventfd
                && piece.len() == 4
                && u32::from_le_bytes(piece.try_into().unwrap()) == t.data
            {
                m.count += 1;
            }
        }
    }
    let got = rig.bus(space).write(0, addr, data);
    assert!(!matches!(
        got,
        trapline_bus::Access::Handled(IoOutcome::Stop(_))
    ));
}

fn header(m: &Model) -> Vec<u8> {
    let Some(t) = m.current else {
        return vec![0; 64];
    };
    let mut h = vec![t.index, t.width, 0, 0];
    h.extend_from_slice(&t.offset.to_le_bytes());
    h.extend_from_slice(&t.data.to_le_bytes());
    h.extend_from_slice(&(m.count as u32).to_le_bytes());
    h.extend_from_slice(t.name.as_bytes());
    h.resize(64, 0);
    h
}

fn check(rig: &Rig, m: &Model) {
    assert_eq!(rig.dev.current_test(), m.current, "selected test");
    assert_eq!(
        rig.dev.count(),
        if m.current.is_some() { m.count } else { 0 },
        "count"
    );
    let live = rig.reg.live();
    assert!(live.len() <= 1, "more than one live ioeventfd: {live:?}");
    let want = m.current.and_then(|t| {
        let bar = if t.space == Space::Mmio {
            MMIO_BAR
        } else {
            IO_BAR
        };
        t.registration(rig.bar(bar))
    });
    let got = live.first().map(|r| (r.space, r.addr, r.len, r.datamatch));
    if got.is_some() {
        assert_eq!(
            got, want,
            "live ioeventfd is not what the selected test needs"
        );
    }
    if !m.ever_failed {
        assert_eq!(got, want, "missing ioeventfd");
    }
    assert_eq!(rig.dev.has_ioeventfd(), got.is_some());
}

fn build(flags: u8) -> Rig {
    let reg = RecordingRegistry::new();
    let mut b = PciBuilder::new(PciLayout {
        ecam_base: MACHINE_ECAM_BASE,
        mmio_order: if flags & 1 != 0 {
            AllocOrder::BottomUp
        } else {
            AllocOrder::TopDown
        },
        ..PciLayout::default()
    });
    let dev = b.pci_testdev(Arc::new(reg.clone()));
    let pci = b.build().unwrap();
    let mut pio = BusBuilder::new();
    let mut mmio = BusBuilder::new();
    pci.insert_into(&mut pio, &mut mmio).unwrap();
    pio.insert(
        "pv-doorbell",
        PV_DOORBELL_PORT.into(),
        4,
        pci.pv_doorbell().unwrap(),
    )
    .unwrap();
    Rig {
        pci,
        dev,
        reg,
        pio: pio.build(),
        mmio: mmio.build(),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let rig = build(input.u8());
    let mut m = Model::default();
    check(&rig, &m);
    let mut n = 0;
    while !input.is_empty() && n < 512 {
        n += 1;
        match input.u8() % 8 {
            0..=2 => {
                // Guest write to a BAR (at the test offsets most often).
                let bar = usize::from(input.u8() & 1);
                let sel = input.u8();
                let off = match sel % 4 {
                    0 => 0,
                    1 => m.current.map_or(0, |t| u64::from(t.offset & 0xfff)),
                    _ => u64::from(input.u16()) % 0x1010,
                };
                let len = width(sel >> 4, &mut input);
                let v = input.u64();
                let data: Vec<u8> = (0..len).map(|i| v.to_le_bytes()[i % 8]).collect();
                let space = space_of(bar);
                let addr = match rig.bar(bar) {
                    Some(base) => base + off,
                    None => off,
                };
                guest_write(
                    &rig,
                    &mut m,
                    space,
                    addr & if space == Space::Pio {
                        0xffff
                    } else {
                        u64::MAX
                    },
                    &data,
                );
            }
            3 => {
                // PV doorbell (or next to it).
                let port = u64::from(PV_DOORBELL_PORT) + u64::from(input.u8() % 5);
                let len = width(input.u8(), &mut input);
                let v = match input.u8() % 3 {
                    0 => m.current.map_or(0, |t| t.data),
                    _ => input.u32(),
                };
                let data: Vec<u8> = (0..len).map(|i| v.to_le_bytes()[i % 4]).collect();
                guest_write(&rig, &mut m, Space::Pio, port, &data);
            }
            4 => {
                // Read the header through a BAR.
                let bar = usize::from(input.u8() & 1);
                let off = u64::from(input.u8() % 64);
                let len = width(input.u8(), &mut input).min(64);
                let Some(base) = rig.bar(bar) else { continue };
                let mut buf = vec![0xa5; len];
                rig.bus(space_of(bar)).read(0, base + off, &mut buf);
                let h = header(&m);
                for (i, b) in buf.iter().enumerate() {
                    let o = off as usize + i;
                    assert_eq!(
                        *b,
                        h.get(o).copied().unwrap_or(0),
                        "header byte {o}: {buf:02x?}"
                    );
                }
            }
            5 => {
                // Move a BAR (or park it outside the window / at 0).
                let bar = usize::from(input.u8() & 1);
                let v = match input.u8() % 4 {
                    0 => 0,
                    1 => u32::MAX,
                    _ => input.u32(),
                };
                rig.ecam_write((BAR0 + 4 * bar) as u64, &v.to_le_bytes());
            }
            6 => {
                let cmd = input.u16() & (COMMAND_IO | COMMAND_MEMORY);
                rig.ecam_write(COMMAND as u64, &cmd.to_le_bytes());
            }
            _ => match input.u8() % 3 {
                0 => {
                    m.failing = !m.failing;
                    m.ever_failed |= m.failing;
                    rig.reg.set_failing(m.failing);
                }
                1 => {
                    rig.dev.reset();
                    m.current = None;
                }
                _ => {
                    // Fire the live eventfd directly (a guest write KVM
                    // consumed, seen from the registry's side).
                    if let Some(r) = rig.reg.live().first() {
                        let len = if r.len == 0 { 1 } else { r.len };
                        if rig.reg.fire(r.space, r.addr, len, r.datamatch.unwrap_or(0)) {
                            m.count += 1;
                        }
                    }
                }
            },
        }
        check(&rig, &m);
    }
});
