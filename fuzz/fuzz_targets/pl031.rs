//! The arm64 real-time clock, `pl031::Pl031`, on a clock the input moves,
//! against the PL031 TRM's (and QEMU's) register model.
//!
//! Input: 8 bytes of the host's UTC seconds at creation, 8 of the clock's
//! start (ns), then a stream of ops, tag byte first:
//! - tag & 3 == 0, 1: an access; bit 0 = write, bits 2..4 = width
//!   selector (`trapline_fuzz::width`), bit 5 = a register index byte
//!   follows (offset = 4 * index: the registers and, from index 0x3F8,
//!   the IDs) else a u16 offset (anywhere, misaligned too), then a u32
//!   value (its bytes repeated over the access);
//! - tag & 3 == 2: the clock moves on by a u32 count of milliseconds
//!   times 2^(tag >> 2 & 31) (so it can reach the end of time);
//! - tag & 3 == 3: a check op (the invariants are also checked after every op).
//!
//! The model: DR counts seconds, 32 bits wide, from the host's UTC time at
//! creation or from what LR loaded; LR, MR and IMSC (bit 0) read back; CR
//! reads 1; a write to LR or MR arms the match, which sets RIS at once
//! when MR equals the count and otherwise `MR - DR` seconds (mod 2^32)
//! later, as soon as the device is next touched; ICR's 1 bits clear RIS;
//! MIS = RIS & IMSC; the PrimeCell IDs. Only 4-byte aligned accesses in
//! the page do anything: every other one reads zeros and writes nothing.
//! The interrupt line is at MIS and only ever driven to a new level.

#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use trapline_bus::{BusDevice, IoOutcome};
use trapline_devices::pc_testdev::IrqLine;
use trapline_devices::pl031::{Pl031, CR, DR, ICR, ID, ID_BASE, IMSC, LR, MIS, MR, RIS};
use trapline_devices::pm_timer::Clock;
use trapline_fuzz::{width, Input};

const SPI: u32 = 2;
const NS: u64 = 1_000_000_000;

struct FakeClock(AtomicU64);

impl Clock for FakeClock {
    fn now_ns(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Default)]
struct Recorder(Mutex<Vec<(u32, bool)>>);

impl IrqLine for Recorder {
    fn set_irq(&self, line: u32, level: bool) {
        self.0.lock().unwrap().push((line, level));
    }
}

struct Model {
    /// Guest seconds at clock 0 (mod 2^32).
    base: u32,
    mr: u32,
    lr: u32,
    imsc: u32,
    ris: u32,
    alarm_at: Option<u64>,
}

impl Model {
    fn count(&self, now: u64) -> u32 {
        self.base.wrapping_add((now / NS) as u32)
    }

    fn arm(&mut self, now: u64) {
        let ticks = self.mr.wrapping_sub(self.count(now));
        self.alarm_at = None;
        if ticks == 0 {
            self.ris = 1;
        } else {
            self.alarm_at = Some(now.saturating_add(u64::from(ticks) * NS));
        }
    }

    /// The device looks at the match on every access it takes.
    fn touch(&mut self, now: u64) {
        if self.alarm_at.is_some_and(|at| now >= at) {
            self.alarm_at = None;
            self.ris = 1;
        }
    }

    fn read(&self, reg: u64, now: u64) -> Option<u32> {
        Some(match reg {
            DR => self.count(now),
            MR => self.mr,
            LR => self.lr,
            CR => 1,
            IMSC => self.imsc,
            RIS => self.ris,
            MIS => self.ris & self.imsc,
            r if (ID_BASE..ID_BASE + 32).contains(&r) => {
                u32::from(ID[((r - ID_BASE) / 4) as usize])
            }
            r if r < 0x1000 => 0,
            _ => return None,
        })
    }

    fn write(&mut self, reg: u64, v: u32, now: u64) {
        match reg {
            LR => {
                self.lr = v;
                self.base = v.wrapping_sub((now / NS) as u32);
                self.arm(now);
            }
            MR => {
                self.mr = v;
                self.arm(now);
            }
            IMSC => self.imsc = v & 1,
            ICR => self.ris &= !v,
            _ => {}
        }
    }
}

fn check(rtc: &Pl031, m: &Model, rec: &Recorder) {
    let levels = rec.0.lock().unwrap();
    assert!(levels.iter().all(|&(l, _)| l == SPI));
    assert!(
        levels.windows(2).all(|w| w[0].1 != w[1].1),
        "the line was driven to the level it had"
    );
    assert_eq!(levels.last().is_some_and(|l| l.1), rtc.irq_level());
    assert_eq!(rtc.irq_level(), m.ris & m.imsc != 0, "line vs model MIS");
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let unix_secs = input.u64();
    let clock = Arc::new(FakeClock(AtomicU64::new(input.u64())));
    let rec = Arc::new(Recorder::default());
    let rtc = Pl031::with_clock(clock.clone(), unix_secs, Some((rec.clone(), SPI)));
    let now0 = clock.now_ns();
    let mut m = Model {
        base: (unix_secs as u32).wrapping_sub((now0 / NS) as u32),
        mr: 0,
        lr: 0,
        imsc: 0,
        ris: 0,
        alarm_at: None,
    };
    while !input.is_empty() {
        let tag = input.u8();
        let now = clock.now_ns();
        match tag & 3 {
            0 | 1 => {
                let write = tag & 1 != 0;
                let len = width(tag >> 2, &mut input);
                let offset = if tag & 0x20 != 0 {
                    u64::from(input.u16() % 0x400) * 4
                } else {
                    u64::from(input.u16())
                };
                let value = input.u32().to_le_bytes();
                let mut buf: Vec<u8> = (0..len).map(|i| value[i % 4]).collect();
                let taken = len == 4 && offset % 4 == 0 && offset < 0x1000;
                if taken {
                    m.touch(now);
                }
                if write {
                    assert_eq!(rtc.write(0, 0x0901_0000, offset, &buf), IoOutcome::Continue);
                    if taken {
                        m.write(offset, u32::from_le_bytes(value), now);
                    }
                } else {
                    rtc.read(0, 0x0901_0000, offset, &mut buf);
                    if taken {
                        let got = u32::from_le_bytes(buf[..4].try_into().unwrap());
                        if let Some(want) = m.read(offset, now) {
                            assert_eq!(
                                got, want,
                                "PL031 register {offset:#x} read {got:#x}, model {want:#x}"
                            );
                        }
                    } else {
                        assert!(
                            buf.iter().all(|&b| b == 0),
                            "an access the PL031 does not take read {buf:02x?}"
                        );
                    }
                }
            }
            2 => {
                let step = u64::from(input.u32()) * 1_000_000;
                let step = step.saturating_mul(1 << ((tag >> 2) & 31));
                clock.0.store(now.saturating_add(step), Ordering::Relaxed);
            }
            _ => {}
        }
        check(&rtc, &m, &rec);
    }
});
