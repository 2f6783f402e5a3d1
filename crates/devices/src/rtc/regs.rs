//! The MC146818 register file, as a pure state machine over a monotonic
//! time in nanoseconds that the caller passes in: no clock, no lock, no
//! thread, so every behaviour is unit-testable.
//!
//! Nothing ticks: the time registers, register A's update-in-progress bit
//! and register C's flags are computed from the time when they are read.
//! Register C's flags are "latched" over the interval since they were last
//! computed, which is exactly what the chip's flags record (an update, an
//! alarm match or a periodic tick happened since the guest last read C).

use super::time::{self, DateTime, NS_PER_SEC};

/// Seconds, minutes, hours and their alarms.
pub const REG_SECONDS: u8 = 0x00;
/// Seconds alarm.
pub const REG_SECONDS_ALARM: u8 = 0x01;
/// Minutes.
pub const REG_MINUTES: u8 = 0x02;
/// Minutes alarm.
pub const REG_MINUTES_ALARM: u8 = 0x03;
/// Hours.
pub const REG_HOURS: u8 = 0x04;
/// Hours alarm.
pub const REG_HOURS_ALARM: u8 = 0x05;
/// Day of week (1 = Sunday).
pub const REG_DAY_OF_WEEK: u8 = 0x06;
/// Day of month.
pub const REG_DAY_OF_MONTH: u8 = 0x07;
/// Month.
pub const REG_MONTH: u8 = 0x08;
/// Year (two digits).
pub const REG_YEAR: u8 = 0x09;
/// Register A: UIP, divider, rate select.
pub const REG_A: u8 = 0x0a;
/// Register B: SET, interrupt enables, data mode, 24 h.
pub const REG_B: u8 = 0x0b;
/// Register C: interrupt flags, read-only, cleared by reading.
pub const REG_C: u8 = 0x0c;
/// Register D: valid RAM and time.
pub const REG_D: u8 = 0x0d;
/// The CMOS shutdown status byte (0xFE: resuming from S3, as QEMU sets it).
pub const REG_SHUTDOWN_STATUS: u8 = 0x0f;
/// The century byte PC BIOSes keep (ACPI FADT CENTURY points here in QEMU).
pub const REG_CENTURY: u8 = 0x32;
/// Bytes of CMOS the index register reaches (7 bits; bit 7 masks NMIs).
pub const CMOS_LEN: usize = 128;

/// Register A: update in progress (read-only).
pub const A_UIP: u8 = 0x80;
/// Register A: divider 010 (32.768 kHz time base, running) and rate 6
/// (1024 Hz), the value QEMU and PC firmware leave.
pub const A_DEFAULT: u8 = 0x26;
const A_RATE_MASK: u8 = 0x0f;

/// Register B: SET (updates inhibited, time registers writable at rest).
pub const B_SET: u8 = 0x80;
/// Register B: periodic interrupt enable.
pub const B_PIE: u8 = 0x40;
/// Register B: alarm interrupt enable.
pub const B_AIE: u8 = 0x20;
/// Register B: update-ended interrupt enable.
pub const B_UIE: u8 = 0x10;
/// Register B: square-wave output enable.
pub const B_SQWE: u8 = 0x08;
/// Register B: data mode binary (clear: BCD).
pub const B_DM_BINARY: u8 = 0x04;
/// Register B: 24-hour mode (clear: 12-hour with bit 7 = PM).
pub const B_24H: u8 = 0x02;
/// 24-hour BCD, no interrupts: QEMU's reset value.
pub const B_DEFAULT: u8 = B_24H;

/// Register C: an enabled flag is set (the IRQ line is asserted).
pub const C_IRQF: u8 = 0x80;
/// Register C: periodic flag.
pub const C_PF: u8 = 0x40;
/// Register C: alarm flag.
pub const C_AF: u8 = 0x20;
/// Register C: update-ended flag.
pub const C_UF: u8 = 0x10;
/// The three flags, at the same bit positions as their enables in B.
const C_FLAGS: u8 = C_PF | C_AF | C_UF;

/// Register D: valid RAM and time (the battery is fine).
pub const D_VRT: u8 = 0x80;

/// Alarm register values from 0xC0 up match any value ("don't care").
pub const ALARM_DONT_CARE: u8 = 0xc0;

/// The time base, in Hz.
const BASE_HZ: u128 = 32_768;
/// UIP is set this long before each update: 8 cycles of the time base
/// (244 µs), as in QEMU.
pub const UIP_HOLD_NS: u64 = 244_141;
/// Most calendar steps the alarm search takes (it needs at most 24 hour
/// steps, 60 minute steps and two second steps per minute).
const ALARM_SEARCH_STEPS: u32 = 400;

/// What the timer thread must do after a [`RegisterFile::poll`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Poll {
    /// Pulse the IRQ line: an enabled flag was set and the line was idle.
    pub raise_irq: bool,
    /// The alarm matched with AIE set since the last poll: a wake event
    /// while the machine is suspended.
    pub alarm: bool,
    /// When (monotonic ns) the next enabled event is due, if any.
    pub next_ns: Option<u64>,
}

/// Where the guest's clock stands.
#[derive(Clone, Copy, Debug)]
struct TimeBase {
    /// Guest time (ns since 1970) at `mono`.
    guest: u64,
    /// The monotonic time it refers to.
    mono: u64,
}

/// The registers and CMOS memory.
#[derive(Clone, Debug)]
pub struct RegisterFile {
    cmos: [u8; CMOS_LEN],
    base: TimeBase,
    /// Flags computed up to `flags_until` and not yet read by the guest.
    latched: u8,
    flags_until: u64,
    /// The IRQ line was pulsed for the flags now latched; no new edge
    /// until the guest reads C.
    irq_raised: bool,
    /// The timer thread has looked for alarms up to here.
    alarms_until: u64,
}

impl RegisterFile {
    /// A register file whose clock reads `guest_ns` (ns since 1970) at the
    /// monotonic time `now`.
    pub fn new(guest_ns: u64, now: u64) -> Self {
        let mut cmos = [0u8; CMOS_LEN];
        cmos[REG_A as usize] = A_DEFAULT;
        cmos[REG_B as usize] = B_DEFAULT;
        Self {
            cmos,
            base: TimeBase {
                guest: guest_ns,
                mono: now,
            },
            latched: 0,
            flags_until: now,
            irq_raised: false,
            alarms_until: now,
        }
    }

    /// Set a CMOS memory byte directly (the machine's memory-size bytes).
    pub fn set_cmos(&mut self, index: u8, value: u8) {
        if let Some(b) = self.cmos.get_mut(usize::from(index)) {
            *b = value;
        }
    }

    fn reg(&self, r: u8) -> u8 {
        self.cmos[usize::from(r)]
    }

    fn binary(&self) -> bool {
        self.reg(REG_B) & B_DM_BINARY != 0
    }

    fn h24(&self) -> bool {
        self.reg(REG_B) & B_24H != 0
    }

    fn updates_inhibited(&self) -> bool {
        self.reg(REG_B) & B_SET != 0
    }

    /// The guest's time at monotonic `now`; frozen while SET is on.
    pub fn guest_ns(&self, now: u64) -> u64 {
        if self.updates_inhibited() {
            self.base.guest
        } else {
            self.base
                .guest
                .saturating_add(now.saturating_sub(self.base.mono))
        }
    }

    /// The periodic interrupt's period in time-base cycles, from the
    /// rate-select bits (0: off; 1 and 2 repeat 8 and 9 with a 32 kHz base).
    fn period_cycles(&self) -> Option<u128> {
        match self.reg(REG_A) & A_RATE_MASK {
            0 => None,
            1 => Some(128),
            2 => Some(256),
            r => Some(1 << (r - 1)),
        }
    }

    fn cycles(ns: u64) -> u128 {
        u128::from(ns) * BASE_HZ / u128::from(NS_PER_SEC)
    }

    /// An alarm register as a value to match: `Ok(None)` is "don't care",
    /// `Err` a value that can never match (out of range, bad BCD).
    fn alarm_field(&self, r: u8, limit: u8) -> Result<Option<u8>, ()> {
        let raw = self.reg(r);
        if raw >= ALARM_DONT_CARE {
            return Ok(None);
        }
        let v = if r == REG_HOURS_ALARM {
            time::decode_hour(raw, self.binary(), self.h24())
        } else {
            time::decode(raw, self.binary())
        };
        v.filter(|v| *v < limit).map(Some).ok_or(())
    }

    /// The first second boundary strictly after `secs` whose time matches
    /// the alarm registers, if any ever does.
    pub fn next_alarm_after(&self, secs: u64) -> Option<u64> {
        let sec = self.alarm_field(REG_SECONDS_ALARM, 60).ok()?;
        let min = self.alarm_field(REG_MINUTES_ALARM, 60).ok()?;
        let hour = self.alarm_field(REG_HOURS_ALARM, 24).ok()?;
        let mut t = secs.checked_add(1)?;
        for _ in 0..ALARM_SEARCH_STEPS {
            let day = t % time::SECS_PER_DAY;
            let (h, m, s) = ((day / 3600) as u8, (day / 60 % 60) as u8, (day % 60) as u8);
            if hour.is_some_and(|x| x != h) {
                t = t - day % 3600 + 3600;
            } else if min.is_some_and(|x| x != m) {
                t = t - u64::from(s) + 60;
            } else if let Some(x) = sec.filter(|x| *x != s) {
                t += if x > s {
                    u64::from(x - s)
                } else {
                    u64::from(60 - s)
                };
            } else {
                return Some(t);
            }
        }
        None
    }

    /// The flags an interval of monotonic time (t0, t1] sets, under the
    /// current configuration.
    fn flags_between(&self, t0: u64, t1: u64) -> u8 {
        if t1 <= t0 {
            return 0;
        }
        let mut f = 0;
        // As QEMU: the periodic divider runs (and PF sets) only while the
        // periodic interrupt or the square wave is enabled.
        let periodic_on = self.reg(REG_B) & (B_PIE | B_SQWE) != 0;
        if let Some(p) = self.period_cycles().filter(|_| periodic_on) {
            if Self::cycles(t1) / p > Self::cycles(t0) / p {
                f |= C_PF;
            }
        }
        if !self.updates_inhibited() {
            let s0 = self.guest_ns(t0) / NS_PER_SEC;
            let s1 = self.guest_ns(t1) / NS_PER_SEC;
            if s1 > s0 {
                f |= C_UF;
                if self.next_alarm_after(s0).is_some_and(|a| a <= s1) {
                    f |= C_AF;
                }
            }
        }
        f
    }

    /// Fold the flags up to `now` into the latch.
    fn latch(&mut self, now: u64) {
        if now > self.flags_until {
            self.latched |= self.flags_between(self.flags_until, now);
            self.flags_until = now;
        }
    }

    /// Before a change of configuration or time: flags so far are latched
    /// under the old one, and alarms before the change are not wake events.
    fn settle(&mut self, now: u64) {
        self.latch(now);
        self.alarms_until = self.alarms_until.max(now);
    }

    /// Whether register A's UIP bit reads set at `now`.
    pub fn update_in_progress(&self, now: u64) -> bool {
        !self.updates_inhibited() && self.guest_ns(now) % NS_PER_SEC >= NS_PER_SEC - UIP_HOLD_NS
    }

    /// A guest read of register `index` (0..=0x7F) at `now`. Reading C
    /// clears it.
    pub fn read(&mut self, index: u8, now: u64) -> u8 {
        if let Some(v) = self.time_register(index, now) {
            return v;
        }
        match index {
            REG_A => {
                let uip = if self.update_in_progress(now) {
                    A_UIP
                } else {
                    0
                };
                self.reg(REG_A) & !A_UIP | uip
            }
            REG_C => {
                self.latch(now);
                let mut v = self.latched;
                if v & self.reg(REG_B) & C_FLAGS != 0 {
                    v |= C_IRQF;
                }
                self.latched = 0;
                self.irq_raised = false;
                v
            }
            REG_D => D_VRT,
            i => self.cmos.get(usize::from(i)).copied().unwrap_or(0xff),
        }
    }

    /// The calendar registers, encoded as register B says.
    fn time_register(&self, index: u8, now: u64) -> Option<u8> {
        let (binary, h24) = (self.binary(), self.h24());
        let t = || DateTime::from_secs(self.guest_ns(now) / NS_PER_SEC);
        Some(match index {
            REG_SECONDS => time::encode(t().second, binary),
            REG_MINUTES => time::encode(t().minute, binary),
            REG_HOURS => time::encode_hour(t().hour, binary, h24),
            REG_DAY_OF_WEEK => time::encode(t().weekday, binary),
            REG_DAY_OF_MONTH => time::encode(t().day, binary),
            REG_MONTH => time::encode(t().month, binary),
            REG_YEAR => time::encode((t().year % 100) as u8, binary),
            REG_CENTURY => time::encode((t().year / 100 % 100) as u8, binary),
            _ => return None,
        })
    }

    /// Replace one calendar field of the guest's time (a write to a time
    /// register). Values that are not valid in the current mode are
    /// ignored: the model cannot represent an impossible time.
    fn set_time_field(&mut self, index: u8, raw: u8, now: u64) {
        let (binary, h24) = (self.binary(), self.h24());
        let g = self.guest_ns(now);
        let mut t = DateTime::from_secs(g / NS_PER_SEC);
        let v = time::decode(raw, binary);
        let ok = match index {
            REG_SECONDS => v.filter(|v| *v < 60).map(|v| t.second = v),
            REG_MINUTES => v.filter(|v| *v < 60).map(|v| t.minute = v),
            REG_HOURS => time::decode_hour(raw, binary, h24).map(|v| t.hour = v),
            REG_DAY_OF_MONTH => v.filter(|v| (1..=31).contains(v)).map(|v| t.day = v),
            REG_MONTH => v.filter(|v| (1..=12).contains(v)).map(|v| t.month = v),
            REG_YEAR => v
                .filter(|v| *v < 100)
                .map(|v| t.year = t.year / 100 * 100 + u32::from(v)),
            REG_CENTURY => v
                .filter(|v| *v >= 19 && *v < 100)
                .map(|v| t.year = u32::from(v) * 100 + t.year % 100),
            _ => None,
        };
        if ok.is_none() {
            return;
        }
        // A written time starts a fresh second, as after the divider reset
        // that follows setting the clock.
        self.base = TimeBase {
            guest: t.to_secs().saturating_mul(NS_PER_SEC),
            mono: now,
        };
    }

    /// A guest write of `value` to register `index` at `now`.
    pub fn write(&mut self, index: u8, value: u8, now: u64) {
        self.settle(now);
        match index {
            REG_SECONDS | REG_MINUTES | REG_HOURS | REG_DAY_OF_MONTH | REG_MONTH | REG_YEAR
            | REG_CENTURY => self.set_time_field(index, value, now),
            // Follows from the date.
            REG_DAY_OF_WEEK => {}
            REG_A => self.cmos[usize::from(REG_A)] = value & !A_UIP,
            REG_B => {
                let old = self.reg(REG_B);
                let mut value = value;
                if value & B_SET != 0 {
                    // Setting SET aborts any update and clears UIE.
                    value &= !B_UIE;
                }
                if (old ^ value) & B_SET != 0 {
                    // Freeze or restart the clock where it stands now.
                    self.base = TimeBase {
                        guest: self.guest_ns(now),
                        mono: now,
                    };
                }
                self.cmos[usize::from(REG_B)] = value;
            }
            REG_C | REG_D => {}
            i => {
                if let Some(b) = self.cmos.get_mut(usize::from(i)) {
                    *b = value;
                }
            }
        }
    }

    /// The timer thread's step at `now`: latch flags, decide whether to
    /// pulse the IRQ line or signal an alarm, and when to come back.
    pub fn poll(&mut self, now: u64) -> Poll {
        self.latch(now);
        let b = self.reg(REG_B);
        let inhibited = self.updates_inhibited();
        let alarm_on = b & B_AIE != 0 && !inhibited;
        let mut poll = Poll::default();
        if now > self.alarms_until {
            if alarm_on {
                let s0 = self.guest_ns(self.alarms_until) / NS_PER_SEC;
                let s1 = self.guest_ns(now) / NS_PER_SEC;
                poll.alarm = self.next_alarm_after(s0).is_some_and(|a| a <= s1);
            }
            self.alarms_until = now;
        }
        if self.latched & b & C_FLAGS != 0 && !self.irq_raised {
            self.irq_raised = true;
            poll.raise_irq = true;
        }
        let to_mono = |guest: u64| {
            self.base
                .mono
                .saturating_add(guest.saturating_sub(self.base.guest))
        };
        let g = self.guest_ns(now);
        let mut next: Option<u64> = None;
        let mut consider = |at: u64| next = Some(next.map_or(at, |n| n.min(at)));
        if alarm_on {
            if let Some(a) = self.next_alarm_after(g / NS_PER_SEC) {
                consider(to_mono(a.saturating_mul(NS_PER_SEC)));
            }
        }
        if !self.irq_raised {
            if b & B_UIE != 0 && !inhibited {
                consider(to_mono((g / NS_PER_SEC + 1).saturating_mul(NS_PER_SEC)));
            }
            if let Some(p) = self.period_cycles().filter(|_| b & B_PIE != 0) {
                let cycle = (Self::cycles(now) / p + 1) * p;
                let ns = (cycle * u128::from(NS_PER_SEC)).div_ceil(BASE_HZ);
                consider(u64::try_from(ns).unwrap_or(u64::MAX));
            }
        }
        poll.next_ns = next;
        poll
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: u64 = NS_PER_SEC;
    /// 2026-11-25 03:04:05 UTC.
    const T0: u64 = 1_795_575_845;

    fn rf() -> RegisterFile {
        // Guest time T0.0 at monotonic 10 s.
        RegisterFile::new(T0 * SEC, 10 * SEC)
    }

    #[test]
    fn bcd_and_binary_time() {
        let mut r = rf();
        let now = 10 * SEC;
        assert_eq!(r.read(REG_SECONDS, now), 0x05);
        assert_eq!(r.read(REG_MINUTES, now), 0x04);
        assert_eq!(r.read(REG_HOURS, now), 0x03);
        assert_eq!(r.read(REG_DAY_OF_MONTH, now), 0x25);
        assert_eq!(r.read(REG_MONTH, now), 0x11);
        assert_eq!(r.read(REG_YEAR, now), 0x26);
        assert_eq!(r.read(REG_CENTURY, now), 0x20);
        assert_eq!(r.read(REG_DAY_OF_WEEK, now), 4);
        r.write(REG_B, B_24H | B_DM_BINARY, now);
        assert_eq!(r.read(REG_DAY_OF_MONTH, now), 25);
        assert_eq!(r.read(REG_YEAR, now), 26);
        // Time moves on with the monotonic clock.
        assert_eq!(r.read(REG_SECONDS, now + 7 * SEC + SEC / 2), 12);
    }

    #[test]
    fn twelve_hour_mode() {
        let mut r = RegisterFile::new((T0 + 12 * 3600) * SEC, 0); // 15:04:05
        r.write(REG_B, 0, 0);
        assert_eq!(r.read(REG_HOURS, 0), 0x83);
        r.write(REG_B, B_DM_BINARY, 0);
        assert_eq!(r.read(REG_HOURS, 0), 0x83);
        // Writing 12 AM in 12 h mode is midnight.
        r.write(REG_B, B_SET, 0);
        r.write(REG_HOURS, 0x12, 0);
        r.write(REG_B, B_24H, 0);
        assert_eq!(r.read(REG_HOURS, 0), 0x00);
    }

    #[test]
    fn uip_is_set_just_before_each_update() {
        let mut r = rf();
        let base = 10 * SEC;
        assert_eq!(r.read(REG_A, base) & A_UIP, 0);
        assert_eq!(r.read(REG_A, base + SEC - UIP_HOLD_NS - 1) & A_UIP, 0);
        assert_eq!(r.read(REG_A, base + SEC - UIP_HOLD_NS) & A_UIP, A_UIP);
        assert_eq!(r.read(REG_A, base + SEC - 1) & A_UIP, A_UIP);
        assert_eq!(r.read(REG_A, base + SEC) & A_UIP, 0);
        assert_eq!(r.read(REG_A, base) & !A_UIP, A_DEFAULT);
        // The guest cannot write UIP; SET stops updates and UIP.
        r.write(REG_A, 0xff, base);
        assert_eq!(r.read(REG_A, base) & 0x7f, 0x7f);
        r.write(REG_B, B_SET | B_24H, base);
        assert_eq!(r.read(REG_A, base + SEC - 1) & A_UIP, 0);
    }

    #[test]
    fn set_freezes_the_clock_and_time_writes_take() {
        let mut r = rf();
        let now = 10 * SEC;
        r.write(REG_B, B_SET | B_24H | B_UIE, now);
        assert_eq!(r.read(REG_B, now) & B_UIE, 0, "SET clears UIE");
        r.write(REG_HOURS, 0x23, now);
        r.write(REG_MINUTES, 0x59, now);
        r.write(REG_SECONDS, 0x58, now);
        r.write(REG_YEAR, 0x99, now);
        r.write(REG_SECONDS, 0x7a, now); // bad BCD: ignored
        assert_eq!(r.read(REG_SECONDS, now + 5 * SEC), 0x58, "frozen");
        r.write(REG_B, B_24H, now + 5 * SEC);
        let later = now + 7 * SEC;
        assert_eq!(r.read(REG_SECONDS, later), 0x00);
        assert_eq!(r.read(REG_MINUTES, later), 0x00);
        assert_eq!(r.read(REG_HOURS, later), 0x00);
        assert_eq!(r.read(REG_DAY_OF_MONTH, later), 0x26);
        assert_eq!(r.read(REG_YEAR, later), 0x99);
        assert_eq!(r.read(REG_CENTURY, later), 0x20);
    }

    #[test]
    fn alarm_dont_care_matching() {
        let mut r = rf(); // 03:04:05
        let now = 10 * SEC;
        for reg in [REG_SECONDS_ALARM, REG_MINUTES_ALARM, REG_HOURS_ALARM] {
            r.write(reg, 0xff, now);
        }
        assert_eq!(
            r.next_alarm_after(T0),
            Some(T0 + 1),
            "all don't care: every second"
        );
        r.write(REG_SECONDS_ALARM, 0x30, now);
        assert_eq!(
            r.next_alarm_after(T0),
            Some(T0 + 25),
            "once a minute at :30"
        );
        r.write(REG_SECONDS_ALARM, 0x00, now);
        r.write(REG_MINUTES_ALARM, 0x00, now);
        r.write(REG_HOURS_ALARM, 0x02, now);
        // 02:00:00 tomorrow.
        let day_start = T0 - (3 * 3600 + 4 * 60 + 5);
        assert_eq!(r.next_alarm_after(T0), Some(day_start + 86_400 + 2 * 3600));
        r.write(REG_MINUTES_ALARM, 0xc0, now);
        r.write(REG_SECONDS_ALARM, 0xd5, now);
        assert_eq!(
            r.next_alarm_after(T0),
            Some(day_start + 86_400 + 2 * 3600),
            "02:xx:xx from 02:00:00"
        );
        r.write(REG_SECONDS_ALARM, 0x61, now);
        assert_eq!(r.next_alarm_after(T0), None, "61 seconds never matches");
    }

    #[test]
    fn register_c_flags_latch_and_clear_on_read() {
        let mut r = rf();
        let now = 10 * SEC;
        r.write(REG_A, 0x20, now); // no periodic rate
        assert_eq!(r.read(REG_C, now), 0);
        // Across a second boundary: UF; with an alarm on every second: AF.
        for reg in [REG_SECONDS_ALARM, REG_MINUTES_ALARM, REG_HOURS_ALARM] {
            r.write(reg, ALARM_DONT_CARE, now);
        }
        assert_eq!(
            r.read(REG_C, now + SEC),
            C_UF | C_AF,
            "no IRQF: nothing enabled"
        );
        assert_eq!(r.read(REG_C, now + SEC), 0, "read clears");
        r.write(REG_B, B_24H | B_AIE, now + SEC);
        assert_eq!(r.read(REG_C, now + 2 * SEC), C_IRQF | C_UF | C_AF);
        // The periodic flag, 1024 Hz: only while PIE (or SQWE) is on, as
        // in QEMU.
        r.write(REG_A, A_DEFAULT, now + 2 * SEC);
        assert_eq!(r.read(REG_C, now + 2 * SEC + SEC / 1000), 0);
        r.write(REG_B, B_24H | B_SQWE, now + 3 * SEC);
        let t = now + 3 * SEC + SEC / 1000;
        assert_eq!(r.read(REG_C, t), C_PF | C_AF | C_UF);
        r.write(REG_B, B_24H | B_PIE, t);
        assert_eq!(r.read(REG_C, t + SEC / 1000), C_IRQF | C_PF);
    }

    #[test]
    fn poll_raises_once_until_c_is_read_and_reports_alarms() {
        let mut r = rf();
        let now = 10 * SEC;
        r.write(REG_A, 0x20, now);
        for reg in [REG_SECONDS_ALARM, REG_MINUTES_ALARM, REG_HOURS_ALARM] {
            r.write(reg, ALARM_DONT_CARE, now);
        }
        assert_eq!(r.poll(now).next_ns, None, "nothing enabled");
        r.write(REG_B, B_24H | B_AIE, now);
        let p = r.poll(now);
        assert_eq!((p.raise_irq, p.alarm), (false, false));
        assert_eq!(p.next_ns, Some(now + SEC), "next alarm at the next second");
        let p = r.poll(now + SEC);
        assert_eq!((p.raise_irq, p.alarm), (true, true));
        let p = r.poll(now + 2 * SEC);
        assert_eq!((p.raise_irq, p.alarm), (false, true), "line still high");
        assert_eq!(r.read(REG_C, now + 2 * SEC) & C_IRQF, C_IRQF);
        let p = r.poll(now + 3 * SEC);
        assert!(p.raise_irq);
        // Periodic: next tick of 1024 Hz.
        r.write(REG_B, B_24H | B_PIE, now + 3 * SEC);
        r.write(REG_A, A_DEFAULT, now + 3 * SEC);
        let _ = r.read(REG_C, now + 3 * SEC);
        let p = r.poll(now + 3 * SEC);
        let next = p.next_ns.unwrap();
        assert!(next > now + 3 * SEC && next <= now + 3 * SEC + SEC / 1024 + 1);
    }

    #[test]
    fn cmos_memory_and_read_only_registers() {
        let mut r = rf();
        r.write(0x40, 0x5a, 0);
        assert_eq!(r.read(0x40, 0), 0x5a);
        r.set_cmos(0x15, 0x80);
        assert_eq!(r.read(0x15, 0), 0x80);
        r.write(REG_D, 0, 0);
        assert_eq!(r.read(REG_D, 0), D_VRT);
        r.write(REG_C, 0xff, 0);
        assert_eq!(r.read(REG_C, 0), 0);
        // Out-of-range indexes neither panic nor store.
        r.set_cmos(0xff, 1);
        assert_eq!(r.read(0xff, 0), 0xff);
    }
}
