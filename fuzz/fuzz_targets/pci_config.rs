//! PCI bus 0 through both configuration front ends (CF8/CFC and ECAM) and
//! the two BAR windows, with the host bridge, pci-testdev and (optionally)
//! a synthetic function whose BARs come from the input (64-bit, I/O,
//! overlapping, unplaceable...).
//!
//! Input: header `[flags][ecam buses-1][synth devfn][6 x (kind, log2 size)]`
//! then ops `[tag]...` (see `op` below).
//!
//! Checks after every op:
//! - CF8/CFC and ECAM reads of the same register match the function's
//!   configuration snapshot (all-ones past 0xff, for absent functions, for
//!   disabled CF8 cycles and buses other than 0, and past port 0xCFF: the
//!   bus cuts accesses as QEMU does, so a wide CFC read runs out of the
//!   data port);
//! - every BAR is routed exactly where its registers and COMMAND say, when
//!   inside its window (`bar_routed` vs `ConfigSpace::bar_mapping`);
//! - BAR sizing (write all-ones, read back) reports the declared size and
//!   type bits;
//! - each piece of a window access (the bus cuts accesses into naturally
//!   aligned pieces of at most 4 bytes) reaches the lowest-devfn routed BAR
//!   covering it with the right offset, or reads all-ones;
//! - the generation counter moves exactly when configuration bytes change;
//! - an attached ECAM shadow always equals `render_shadow`.

#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use trapline_bus::{Bus, BusBuilder, IoOutcome};
use trapline_devices::pci::*;
use trapline_fuzz::{model_pieces, width, Input, MACHINE_ECAM_BASE};

/// A function whose BARs the input declares; BAR reads return a pattern
/// naming the function, BAR and offset.
struct Synth {
    devfn: u8,
    bars: Vec<(usize, BarDef)>,
    writes: AtomicU64,
}

impl PciDevice for Synth {
    fn name(&self) -> &'static str {
        "synth"
    }
    fn config_template(&self) -> ConfigSpace {
        let mut c = ConfigSpace::new(0x1234, 0x5678, 0xff_00_00, 1);
        for (i, def) in &self.bars {
            let _ = c.set_bar(*i, *def);
        }
        c
    }
    fn bar_read(&self, _vcpu: usize, bar: usize, offset: u64, data: &mut [u8]) {
        for (i, b) in data.iter_mut().enumerate() {
            *b = synth_byte(self.devfn, bar, offset.wrapping_add(i as u64));
        }
    }
    fn bar_write(&self, _vcpu: usize, _bar: usize, _offset: u64, _data: &[u8]) -> IoOutcome {
        self.writes.fetch_add(1, Ordering::Relaxed);
        IoOutcome::Continue
    }
}

fn synth_byte(devfn: u8, bar: usize, offset: u64) -> u8 {
    devfn ^ (bar as u8).wrapping_mul(16) ^ offset as u8 ^ (offset >> 8) as u8
}

struct Rig {
    pci: PciDevices,
    pio: Bus,
    mmio: Bus,
    synth: Option<Arc<Synth>>,
    shadow: Option<Arc<MemoryShadow>>,
}

const CF8: u64 = CONFIG_ADDRESS_PORT as u64;
const CFC: u64 = CONFIG_DATA_PORT as u64;

impl Rig {
    fn ecam(&self) -> u64 {
        self.pci.layout.ecam_base
    }

    fn latch(&self, devfn: u8, reg: u8) {
        let v = 0x8000_0000u32 | u32::from(devfn) << 8 | u32::from(reg & 0xfc);
        self.pio.write(0, CF8, &v.to_le_bytes());
    }

    fn cfg_read_io(&self, devfn: u8, reg: u8, buf: &mut [u8]) {
        self.latch(devfn, reg);
        self.pio.read(0, CFC + u64::from(reg & 3), buf);
    }

    fn cfg_read_ecam(&self, devfn: u8, reg: u64, buf: &mut [u8]) {
        self.mmio
            .read(0, self.ecam() + (u64::from(devfn) << 12) + reg, buf);
    }

    fn cfg_write(&self, via_io: bool, devfn: u8, reg: u64, data: &[u8]) {
        if via_io {
            self.latch(devfn, reg as u8);
            self.pio.write(0, CFC + (reg & 3), data);
        } else {
            self.mmio
                .write(0, self.ecam() + (u64::from(devfn) << 12) + reg, data);
        }
    }

    /// Expected bytes of a config read of `len` at (`devfn`, `reg`).
    fn expect(&self, devfn: u8, reg: u64, len: usize) -> Vec<u8> {
        let snap = self.pci.bus.config_snapshot(devfn);
        (0..len as u64)
            .map(|i| {
                let r = reg + i;
                match &snap {
                    Some(c) if r < 256 => c.bytes()[r as usize],
                    _ => 0xff,
                }
            })
            .collect()
    }

    /// Expected bytes of an ECAM read of `len` at window offset `off`, byte
    /// by byte (the bus's pieces never cross a 4-byte group, so each byte
    /// comes from its own bus, function and register).
    fn expect_ecam(&self, off: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| {
                let o = off + i;
                if o >= self.pci.layout.ecam_len() || o >> 20 != 0 {
                    0xff
                } else {
                    self.expect((o >> 12) as u8, o & 0xfff, 1)[0]
                }
            })
            .collect()
    }

    fn bar_kind(&self, devfn: u8, bar: usize) -> Option<BarDef> {
        self.pci.bus.config_snapshot(devfn)?.bar(bar)
    }

    fn window(&self, space: Space) -> Window {
        match space {
            Space::Mmio => self.pci.layout.mmio_window,
            Space::Pio => self.pci.layout.io_window,
        }
    }

    fn check_routes(&self) {
        for devfn in self.pci.bus.devfns() {
            let cfg = self.pci.bus.config_snapshot(devfn).unwrap();
            for bar in 0..BAR_COUNT {
                let want = cfg.bar(bar).and_then(|def| {
                    let space = if def.kind.is_memory() {
                        Space::Mmio
                    } else {
                        Space::Pio
                    };
                    cfg.bar_mapping(bar)
                        .filter(|&b| self.window(space).contains(b, def.size))
                });
                assert_eq!(
                    self.pci.bus.bar_routed(devfn, bar),
                    want,
                    "{devfn:#x} BAR{bar} routing vs its registers ({cfg:?})"
                );
            }
        }
    }

    /// Which (devfn, bar, offset) a window access at `addr` must reach.
    fn route(&self, space: Space, addr: u64) -> Option<(u8, usize, u64)> {
        for devfn in self.pci.bus.devfns() {
            for bar in 0..BAR_COUNT {
                let Some(def) = self.bar_kind(devfn, bar) else {
                    continue;
                };
                if def.kind.is_memory() != (space == Space::Mmio) {
                    continue;
                }
                if let Some(base) = self.pci.bus.bar_routed(devfn, bar) {
                    if addr.wrapping_sub(base) < def.size {
                        return Some((devfn, bar, addr - base));
                    }
                }
            }
        }
        None
    }

    fn check_window_read(&self, space: Space, addr: u64, len: usize) {
        let bus = match space {
            Space::Mmio => &self.mmio,
            Space::Pio => &self.pio,
        };
        let mut a = vec![0x11; len];
        let mut b = vec![0xee; len];
        bus.read(0, addr, &mut a);
        bus.read(0, addr, &mut b);
        assert_eq!(
            a, b,
            "BAR read at {addr:#x} is not pure or does not fill the buffer"
        );
        let pieces = model_pieces(|x| bus.find(x).map(|m| (m.base, m.sizes)), addr, len);
        for p in pieces {
            if p.base.is_none() || !self.window(space).contains(p.addr, 1) {
                continue;
            }
            let bytes = &a[p.at..p.at + p.len];
            match self.route(space, p.addr) {
                None => assert!(
                    bytes.iter().all(|&x| x == 0xff),
                    "unrouted window read {bytes:02x?}"
                ),
                Some((devfn, bar, off)) => {
                    if let Some(s) = &self.synth {
                        if s.devfn == devfn {
                            for (i, x) in bytes.iter().enumerate() {
                                assert_eq!(*x, synth_byte(devfn, bar, off.wrapping_add(i as u64)));
                            }
                        }
                    }
                }
            }
        }
    }
}

fn build(input: &mut Input<'_>) -> Option<Rig> {
    let flags = input.u8();
    let buses = 1 + u16::from(input.u8());
    let synth_devfn = input.u8();
    let mut bars = Vec::new();
    for i in 0..BAR_COUNT {
        let kind = input.u8();
        let log2 = input.u8() % 64;
        let kind = match kind % 4 {
            0 => continue,
            1 => BarKind::Io,
            2 => BarKind::Mem32 {
                prefetchable: kind & 4 != 0,
            },
            _ => BarKind::Mem64 {
                prefetchable: kind & 4 != 0,
            },
        };
        bars.push((
            i,
            BarDef {
                kind,
                size: 1u64 << log2,
            },
        ));
    }
    let layout = PciLayout {
        ecam_base: MACHINE_ECAM_BASE,
        ecam_buses: buses,
        mmio_order: if flags & 1 != 0 {
            AllocOrder::BottomUp
        } else {
            AllocOrder::TopDown
        },
        ..PciLayout::default()
    };
    let mut b = PciBuilder::new(layout);
    if flags & 8 == 0 {
        b.pci_testdev(Arc::new(RecordingRegistry::new()));
    }
    let synth = (flags & 4 != 0).then(|| {
        let s = Arc::new(Synth {
            devfn: synth_devfn,
            bars,
            writes: AtomicU64::new(0),
        });
        b.device(synth_devfn, s.clone());
        s
    });
    let pci = b.build().ok()?;
    let mut pio = BusBuilder::new();
    let mut mmio = BusBuilder::new();
    pci.insert_into(&mut pio, &mut mmio)
        .expect("PCI front ends must fit on empty buses");
    let shadow = (flags & 2 != 0).then(|| {
        let s = Arc::new(MemoryShadow::new(pci.shadow.len()));
        pci.shadow.attach(s.clone()).unwrap();
        assert!(
            pci.shadow.attach(s.clone()).is_err(),
            "second shadow sink accepted"
        );
        s
    });
    Some(Rig {
        pio: pio.build(),
        mmio: mmio.build(),
        pci,
        synth,
        shadow,
    })
}

fn value_bytes(v: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| v.to_le_bytes()[i % 8]).collect()
}

fn op(rig: &Rig, input: &mut Input<'_>) {
    let devfns: Vec<u8> = rig.pci.bus.devfns().collect();
    // Present functions most of the time; any devfn sometimes.
    let pick = |b: u8| {
        if b & 0x80 == 0 {
            devfns[usize::from(b) % devfns.len()]
        } else {
            b.wrapping_mul(3)
        }
    };
    match input.u8() % 8 {
        tag @ (0 | 1) => {
            // A config write through either front end.
            let devfn = pick(input.u8());
            let reg = if tag == 0 {
                u64::from(input.u8())
            } else {
                u64::from(input.u16() % 0x1000)
            };
            let len = width(input.u8(), input);
            let data = value_bytes(input.u64(), len.min(64));
            // Every function's bytes: an ECAM write near the end of a
            // function's 4 KiB runs on into the next function's.
            let snapshot = || {
                devfns
                    .iter()
                    .map(|&d| rig.pci.bus.config_snapshot(d).map(|c| *c.bytes()))
                    .collect::<Vec<_>>()
            };
            let before = snapshot();
            let gen = rig.pci.bus.generation();
            rig.cfg_write(tag == 0, devfn, reg, &data);
            let after = snapshot();
            assert_eq!(
                rig.pci.bus.generation() != gen,
                before != after,
                "generation must move exactly when some function's config bytes change"
            );
        }
        2 => {
            // Read one register through both front ends.
            let devfn = pick(input.u8());
            let reg = input.u8();
            let len = width(input.u8() & 3, input); // 1, 2, 4, 8
            let mut io = vec![0u8; len];
            let mut ecam = vec![0x77u8; len];
            rig.cfg_read_io(devfn, reg, &mut io);
            rig.cfg_read_ecam(devfn, u64::from(reg), &mut ecam);
            let want = rig.expect(devfn, u64::from(reg), len);
            assert_eq!(ecam, want, "ECAM read vs snapshot at {devfn:#x}:{reg:#x}");
            // The data port's lanes run out at 0xCFF; what follows is
            // nobody's.
            let lane = usize::from(reg & 3);
            let want_io: Vec<u8> = want
                .iter()
                .enumerate()
                .map(|(i, &b)| if lane + i < 4 { b } else { 0xff })
                .collect();
            assert_eq!(
                io, want_io,
                "CF8/CFC read vs snapshot at {devfn:#x}:{reg:#x}"
            );
        }
        3 => {
            // ECAM anywhere in the window (extended space, other buses).
            let off = input.u32() as u64 % (rig.pci.layout.ecam_len() + 16);
            let len = width(input.u8(), input);
            let mut buf = vec![0x42; len];
            rig.mmio.read(0, rig.ecam() + off, &mut buf);
            assert_eq!(buf, rig.expect_ecam(off, len), "ECAM read at +{off:#x}");
        }
        4 => {
            // Raw CF8/CFC port traffic: odd widths, disabled cycles, bus != 0.
            let port = CF8 + u64::from(input.u8() % 10);
            let len = width(input.u8(), input);
            let v = input.u32();
            if input.u8() & 1 == 0 {
                rig.pio.write(
                    0,
                    port,
                    &value_bytes(u64::from(v) | u64::from(v) << 32, len),
                );
            } else {
                let mut buf = vec![0x24; len];
                rig.pio.read(0, port, &mut buf);
                let cf8 = u32::from_le_bytes({
                    let mut l = [0u8; 4];
                    rig.pio.read(0, CF8, &mut l);
                    l
                });
                if (4..8).contains(&(port - CF8)) && (cf8 >> 31 == 0 || (cf8 >> 16) & 0xff != 0) {
                    assert!(
                        buf.iter().all(|&b| b == 0xff),
                        "disabled/bus!=0 cycle read {buf:02x?}"
                    );
                }
            }
        }
        5 => {
            // Program a BAR or COMMAND of a present function.
            let devfn = devfns[usize::from(input.u8()) % devfns.len()];
            let sel = input.u8();
            let v = input.u32();
            let (reg, data) = match sel % 8 {
                6 => (COMMAND as u64, value_bytes(u64::from(v), 2)),
                7 => (
                    COMMAND as u64,
                    value_bytes(u64::from((COMMAND_IO | COMMAND_MEMORY) as u32), 2),
                ),
                b => (
                    (BAR0 + 4 * usize::from(b)) as u64,
                    value_bytes(u64::from(v), 4),
                ),
            };
            rig.cfg_write(sel & 0x80 != 0, devfn, reg, &data);
        }
        6 => {
            // Size a BAR the way an OS does, then restore it.
            let devfn = devfns[usize::from(input.u8()) % devfns.len()];
            let bar = usize::from(input.u8()) % BAR_COUNT;
            if let Some(def) = rig.bar_kind(devfn, bar) {
                let reg = (BAR0 + 4 * bar) as u64;
                let wide = matches!(def.kind, BarKind::Mem64 { .. });
                let mut old = [0u8; 8];
                let n = if wide { 8 } else { 4 };
                rig.cfg_read_ecam(devfn, reg, &mut old[..n]);
                rig.cfg_write(false, devfn, reg, &[0xff; 8][..n]);
                let mut got = [0u8; 8];
                rig.cfg_read_ecam(devfn, reg, &mut got[..n]);
                let got = u64::from_le_bytes(got);
                let (low_mask, type_bits) = match def.kind {
                    BarKind::Io => (0x3u64, 0x1u64),
                    BarKind::Mem32 { prefetchable } => (0xf, u64::from(prefetchable) << 3),
                    BarKind::Mem64 { prefetchable } => (0xf, 0x4 | u64::from(prefetchable) << 3),
                };
                let mask = if wide { u64::MAX } else { u64::from(u32::MAX) };
                let want = (!(def.size - 1) & mask & !low_mask) | type_bits;
                assert_eq!(got, want, "sizing {devfn:#x} BAR{bar} {def:?}");
                rig.cfg_write(false, devfn, reg, &old[..n]);
                let mut back = [0u8; 8];
                rig.cfg_read_ecam(devfn, reg, &mut back[..n]);
                assert_eq!(back, old, "BAR restore");
            }
        }
        _ => {
            // A BAR-window access at a routed BAR (or anywhere in a window).
            let space = if input.u8() & 1 == 0 {
                Space::Mmio
            } else {
                Space::Pio
            };
            let devfn = devfns[usize::from(input.u8()) % devfns.len()];
            let bar = usize::from(input.u8()) % BAR_COUNT;
            let off = u64::from(input.u16());
            let len = width(input.u8(), input);
            let write = input.u8() & 1 != 0;
            let w = rig.window(space);
            let addr = match rig.pci.bus.bar_routed(devfn, bar) {
                Some(base) => base.wrapping_add(off),
                None => w.base + (off << 8) % w.size,
            };
            if write {
                let bus = if space == Space::Mmio {
                    &rig.mmio
                } else {
                    &rig.pio
                };
                let got = bus.write(0, addr, &value_bytes(u64::from(input.u32()), len));
                assert!(!matches!(
                    got,
                    trapline_bus::Access::Handled(IoOutcome::Stop(_))
                ));
            } else {
                rig.check_window_read(space, addr, len);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some(rig) = build(&mut input) else { return };
    rig.check_routes();
    let mut n = 0;
    while !input.is_empty() && n < 256 {
        n += 1;
        op(&rig, &mut input);
        rig.check_routes();
    }
    if let Some(s) = &rig.shadow {
        let mut want = vec![0u8; rig.pci.shadow.len()];
        rig.pci.shadow.render(&mut want);
        assert!(
            s.contents() == want,
            "ECAM shadow differs from render_shadow"
        );
    }
});
