//! ACPI power-management I/O: the PM timer and the PM1a event/control
//! registers, laid out like QEMU's PIIX4 at 0x600.
//!
//! Two devices, so the machine can pick:
//!
//! * [`PmIo`] — the whole PM1 block, mapped at [`PM_IO_BASE`] (0x600) with
//!   length [`PM_IO_LEN`] (0x10): PM1a_EVT at +0 (status +0, enable +2),
//!   PM1a_CNT at +4, PM_TMR at +8. This is what the ACPI tables built by
//!   [`crate::acpi`] describe by default ([`PmPorts::PIIX4`]).
//! * [`PmTimer`] — the timer alone (4 ports), for a machine that wants only
//!   the `inl_from_pmtimer` benchmark target.
//!
//! The timer is derived from a host monotonic clock on every read; nothing
//! ticks in the background. Reading it takes no lock, because vmexit's
//! `inl_from_pmtimer` hammers it from every vCPU at once.
//!
//! Sleep: a write to PM1a_CNT with SLP_EN set and SLP_TYP equal to
//! [`S5_SLP_TYP`] (the value the DSDT's `_S5` package declares) stops the VM
//! with [`StopReason::PowerOff`]; with [`S3_SLP_TYP`] (`_S3`) it stops the
//! vCPUs with [`StopReason::Suspend`], and the machine waits for a wake
//! event the PM1 enable bits allow ([`PmIo::enable`]: RTC alarm, PM timer
//! carry), marks it with [`PmIo::wake`] and resumes at the FACS waking
//! vector. Other sleep types (S1, S4) are not declared and are ignored.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use trapline_bus::{AccessSizes, BusDevice, IoOutcome, StopReason};

/// The PM timer's frequency: 3.579545 MHz, the NTSC colour-burst clock
/// every PC chipset uses.
pub const PM_TIMER_HZ: u64 = 3_579_545;
/// The timer is 24 bits wide (FADT flag TMR_VAL_EXT clear), as in QEMU.
pub const PM_TIMER_BITS: u32 = 24;
/// Mask of the counter bits the timer register returns.
pub const PM_TIMER_MASK: u32 = (1 << PM_TIMER_BITS) - 1;
/// Width of the timer register in bytes.
const PM_TIMER_REG_LEN: u64 = 4;
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// SLP_TYP value meaning S5 (soft off). 0, like QEMU: its DSDT declares
/// `_S5 = Package {0, 0, 0, 0}` and its PM1 control decoder powers off on
/// type 0, so a guest that hard-codes QEMU's value behaves the same here.
pub const S5_SLP_TYP: u8 = 0;
/// SLP_TYP value meaning S3 (suspend to RAM). 1, like QEMU's `_S3`
/// (kvm-unit-tests' s3 test hard-codes it: it writes 0x2400).
pub const S3_SLP_TYP: u8 = 1;

/// Base port of the PIIX4-style PM block (QEMU's `-machine pc`).
pub const PM_IO_BASE: u16 = 0x600;
/// Length of the PM block as [`PmIo`] decodes it.
pub const PM_IO_LEN: u64 = 0x10;

/// How the bus cuts accesses to the block: QEMU's acpi_pm_tmr_ops take 1
/// to 4 bytes. Its PM1 event and control registers take at most 2, cutting
/// a dword at PM1a_EVT into status and enable; this block decodes every
/// byte lane itself, so a whole dword there reads and writes the same
/// registers with the same values.
const PM_SIZES: AccessSizes = AccessSizes::QEMU_DEFAULT;

/// Offsets inside the PM block.
const PM1_STS: u64 = 0x0;
const PM1_EN: u64 = 0x2;
const PM1_CNT: u64 = 0x4;
const PM_TMR: u64 = 0x8;
/// One past the last byte of each register.
const PM1_STS_END: u64 = PM1_STS + 2;
const PM1_EN_END: u64 = PM1_EN + 2;
const PM1_CNT_END: u64 = PM1_CNT + 2;
const PM_TMR_END: u64 = PM_TMR + PM_TIMER_REG_LEN;

/// Lengths of the PM1 event and control blocks as the FADT states them.
pub const PM1_EVT_LEN: u8 = 4;
/// See [`PM1_EVT_LEN`].
pub const PM1_CNT_LEN: u8 = 2;
/// See [`PM1_EVT_LEN`].
pub const PM_TMR_LEN: u8 = PM_TIMER_REG_LEN as u8;

/// PM1_STS.TMR_STS: set whenever bit 23 of the counter toggles.
const TMR_STS: u16 = 1 << 0;
/// PM1_STS.PWRBTN_STS / PM1_EN.PWRBTN_EN.
pub const PM1_PWRBTN: u16 = 1 << 8;
/// PM1_STS.RTC_STS / PM1_EN.RTC_EN: the RTC alarm (may wake from S3).
pub const PM1_RTC: u16 = 1 << 10;
/// PM1_EN.TMR_EN: the PM timer's carry out of bit 23 (may wake from S3).
pub const PM1_TMR_EN: u16 = 1 << 0;
/// PM1_STS.WAK_STS: set when the machine wakes from a sleep state.
pub const PM1_WAK_STS: u16 = 1 << 15;
/// The PM1_STS bits stored (and cleared by writing 1).
const PM1_STS_STORED: u16 = PM1_PWRBTN | PM1_RTC | PM1_WAK_STS;
/// PM1_CNT.SCI_EN: reads as 1 because the FADT has no SMI_CMD port, which
/// per the ACPI spec means the platform is always in ACPI mode.
const SCI_EN: u16 = 1 << 0;
/// PM1_CNT.BM_RLD: read/write, no effect.
const BM_RLD: u16 = 1 << 1;
/// PM1_CNT.SLP_TYP field.
const SLP_TYP_SHIFT: u16 = 10;
const SLP_TYP_MASK: u16 = 0b111 << SLP_TYP_SHIFT;
/// PM1_CNT.SLP_EN: write-only, triggers the sleep transition.
const SLP_EN: u16 = 1 << 13;
/// The PM1_CNT bits that are stored (GBL_RLS and SLP_EN are write-only).
const PM1_CNT_STORED: u16 = BM_RLD | SLP_TYP_MASK;

/// The I/O ports of the PM registers, as the FADT describes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PmPorts {
    /// PM1a_EVT_BLK (status at +0, enable at +2).
    pub pm1a_evt: u16,
    /// PM1a_CNT_BLK.
    pub pm1a_cnt: u16,
    /// PM_TMR_BLK.
    pub pm_tmr: u16,
}

impl PmPorts {
    /// QEMU `-machine pc` (PIIX4): 0x600 / 0x604 / 0x608.
    pub const PIIX4: PmPorts = PmPorts {
        pm1a_evt: PM_IO_BASE,
        pm1a_cnt: PM_IO_BASE + PM1_CNT as u16,
        pm_tmr: PM_IO_BASE + PM_TMR as u16,
    };

    /// The ports of a [`PmIo`] mapped at `base`; `None` if the block would
    /// run past port 0xFFFF.
    pub const fn at(base: u16) -> Option<PmPorts> {
        if base as u64 + PM_IO_LEN > 0x1_0000 {
            return None;
        }
        Some(PmPorts {
            pm1a_evt: base,
            pm1a_cnt: base + PM1_CNT as u16,
            pm_tmr: base + PM_TMR as u16,
        })
    }
}

impl Default for PmPorts {
    fn default() -> Self {
        Self::PIIX4
    }
}

/// A monotonic time source in nanoseconds since an arbitrary epoch.
/// Injectable so tests can drive the timer deterministically.
pub trait Clock: Send + Sync {
    /// Nanoseconds since this clock's epoch; never decreases.
    fn now_ns(&self) -> u64;
}

/// The host's CLOCK_MONOTONIC (through [`Instant`]), with the epoch at
/// creation, so the guest's counter starts near 0 like on a fresh machine.
#[derive(Debug)]
pub struct MonotonicClock {
    start: Instant,
}

impl MonotonicClock {
    /// A clock whose epoch is now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    fn now_ns(&self) -> u64 {
        // u64 nanoseconds last 584 years; saturate rather than wrap.
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
}

/// Copy the little-endian bytes of a `reg_len`-byte register into `data`,
/// starting at byte `offset` of the register; bytes past the register read
/// as all-ones (nothing decodes them).
fn read_reg_bytes(value: u64, reg_len: u64, offset: u64, data: &mut [u8]) {
    let bytes = value.to_le_bytes();
    for (i, b) in data.iter_mut().enumerate() {
        *b = match offset.checked_add(i as u64) {
            Some(pos) if pos < reg_len => bytes[pos as usize],
            _ => 0xff,
        };
    }
}

/// The ACPI PM timer: a free-running 24-bit counter at [`PM_TIMER_HZ`],
/// read-only. Map it at PM_TMR_BLK with length 4, or use [`PmIo`].
#[derive(Debug, Default)]
pub struct PmTimer<C: Clock = MonotonicClock> {
    clock: C,
}

impl PmTimer<MonotonicClock> {
    /// A timer running off the host monotonic clock, starting at 0 now.
    pub fn new() -> Self {
        Self::with_clock(MonotonicClock::new())
    }
}

impl<C: Clock> PmTimer<C> {
    /// A timer running off `clock`.
    pub fn with_clock(clock: C) -> Self {
        Self { clock }
    }

    /// Ticks since the clock's epoch, not wrapped to 24 bits.
    pub fn ticks(&self) -> u64 {
        // u128 so that ns * 3.58e6 cannot overflow; the quotient fits in
        // u64 for any u64 nanosecond count.
        let ns = u128::from(self.clock.now_ns());
        (ns * u128::from(PM_TIMER_HZ) / NANOS_PER_SEC) as u64
    }

    /// The register value the guest reads: the tick count mod 2^24,
    /// bits 31:24 zero.
    pub fn value(&self) -> u32 {
        (self.ticks() as u32) & PM_TIMER_MASK
    }
}

impl<C: Clock> BusDevice for PmTimer<C> {
    fn access_sizes(&self) -> AccessSizes {
        PM_SIZES
    }

    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        read_reg_bytes(u64::from(self.value()), PM_TIMER_REG_LEN, offset, data);
    }

    fn write(&self, _vcpu: usize, _base: u64, _offset: u64, _data: &[u8]) -> IoOutcome {
        // The timer is read-only.
        IoOutcome::Continue
    }
}

/// The stored PM1 register state.
#[derive(Debug, Default)]
struct Pm1Regs {
    /// PM1_EN as last written.
    enable: u16,
    /// PM1_STS's stored bits ([`PM1_STS_STORED`]).
    status: u16,
    /// PM1_CNT's stored bits ([`PM1_CNT_STORED`]).
    control: u16,
    /// `ticks >> 23` when TMR_STS was last cleared: TMR_STS is set exactly
    /// when bit 23 has toggled since, computed on read rather than by a
    /// background thread.
    tmr_epoch: u64,
}

/// Bytes written to one 16-bit register: the value and which lanes.
#[derive(Clone, Copy, Default)]
struct Lanes16 {
    value: u16,
    mask: u16,
}

impl Lanes16 {
    fn set(&mut self, lane: u64, byte: u8) {
        let shift = (lane & 1) * 8;
        self.value |= u16::from(byte) << shift;
        self.mask |= 0xff << shift;
    }

    /// `old` with the written lanes replaced.
    fn merge(self, old: u16) -> u16 {
        (old & !self.mask) | (self.value & self.mask)
    }
}

/// The PIIX4-style PM block: PM1a event and control registers and the PM
/// timer, at fixed offsets (see the module docs). Map at a base `b` with
/// length [`PM_IO_LEN`]; its ports are [`PmPorts::at`]`(b)`.
///
/// Unimplemented bytes (0x6–0x7, 0xC–0xF) read all-ones, writes to them and
/// to the timer are ignored.
#[derive(Debug, Default)]
pub struct PmIo<C: Clock = MonotonicClock> {
    timer: PmTimer<C>,
    regs: Mutex<Pm1Regs>,
}

impl PmIo<MonotonicClock> {
    /// A PM block whose timer runs off the host monotonic clock.
    pub fn new() -> Self {
        Self::with_clock(MonotonicClock::new())
    }
}

impl<C: Clock> PmIo<C> {
    /// A PM block whose timer runs off `clock`.
    pub fn with_clock(clock: C) -> Self {
        Self {
            timer: PmTimer::with_clock(clock),
            regs: Mutex::new(Pm1Regs::default()),
        }
    }

    /// The timer inside the block.
    pub fn timer(&self) -> &PmTimer<C> {
        &self.timer
    }

    fn regs(&self) -> std::sync::MutexGuard<'_, Pm1Regs> {
        // A panic elsewhere cannot leave these plain integers inconsistent.
        self.regs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// PM1_EN as the guest last wrote it: which events may wake the
    /// machine from S3.
    pub fn enable(&self) -> u16 {
        self.regs().enable
    }

    /// The machine woke from a sleep state because of `events`
    /// (PM1_STS bits such as [`PM1_RTC`]): set them and WAK_STS.
    pub fn wake(&self, events: u16) {
        self.regs().status |= (events & PM1_STS_STORED) | PM1_WAK_STS;
    }

    /// Nanoseconds until the timer's next carry out of bit 23 (what sets
    /// TMR_STS and, with TMR_EN, wakes the machine).
    pub fn until_timer_carry_ns(&self) -> u64 {
        let ticks = self.timer.ticks();
        let next = ((ticks >> (PM_TIMER_BITS - 1)) + 1) << (PM_TIMER_BITS - 1);
        let delta = u128::from(next - ticks);
        u64::try_from((delta * NANOS_PER_SEC).div_ceil(u128::from(PM_TIMER_HZ))).unwrap_or(u64::MAX)
    }

    fn tmr_epoch_now(&self) -> u64 {
        self.timer.ticks() >> (PM_TIMER_BITS - 1)
    }

    /// The 16-bit PM1 register at `reg` (PM1_STS, PM1_EN or PM1_CNT) as
    /// the guest reads it.
    fn pm1_value(&self, reg: u64) -> u16 {
        let regs = self.regs();
        match reg {
            PM1_STS => {
                let tmr = if self.tmr_epoch_now() != regs.tmr_epoch {
                    TMR_STS
                } else {
                    0
                };
                tmr | regs.status
            }
            PM1_EN => regs.enable,
            _ => regs.control | SCI_EN,
        }
    }
}

impl<C: Clock> BusDevice for PmIo<C> {
    fn access_sizes(&self) -> AccessSizes {
        PM_SIZES
    }

    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        // The hot path: a timer read takes no lock.
        if (PM_TMR..PM_TMR_END).contains(&offset) {
            read_reg_bytes(
                u64::from(self.timer.value()),
                PM_TIMER_REG_LEN,
                offset - PM_TMR,
                data,
            );
            return;
        }
        for (i, b) in data.iter_mut().enumerate() {
            let Some(pos) = offset.checked_add(i as u64) else {
                *b = 0xff;
                continue;
            };
            *b = match pos {
                PM1_STS..PM1_STS_END | PM1_EN..PM1_EN_END | PM1_CNT..PM1_CNT_END => {
                    let reg = pos & !1;
                    self.pm1_value(reg).to_le_bytes()[(pos & 1) as usize]
                }
                PM_TMR..PM_TMR_END => self.timer.value().to_le_bytes()[(pos - PM_TMR) as usize],
                _ => 0xff,
            };
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let (mut sts, mut en, mut cnt) =
            (Lanes16::default(), Lanes16::default(), Lanes16::default());
        for (i, &byte) in data.iter().enumerate() {
            match offset.checked_add(i as u64) {
                Some(pos @ PM1_STS..PM1_STS_END) => sts.set(pos, byte),
                Some(pos @ PM1_EN..PM1_EN_END) => en.set(pos, byte),
                Some(pos @ PM1_CNT..PM1_CNT_END) => cnt.set(pos, byte),
                // Timer, reserved bytes, or beyond the block: ignored.
                _ => {}
            }
        }
        let epoch_now = if sts.value & sts.mask & TMR_STS != 0 {
            Some(self.tmr_epoch_now())
        } else {
            None
        };
        let mut regs = self.regs();
        // PM1_STS is write-1-to-clear.
        if let Some(epoch) = epoch_now {
            regs.tmr_epoch = epoch;
        }
        regs.status &= !(sts.value & sts.mask & PM1_STS_STORED);
        regs.enable = en.merge(regs.enable);
        if cnt.mask == 0 {
            return IoOutcome::Continue;
        }
        let written = cnt.merge(regs.control);
        regs.control = written & PM1_CNT_STORED;
        // SLP_EN lives in the high byte, so only a write that covers it can
        // trigger a transition; a low-byte write merges with stored bits
        // that never include SLP_EN.
        if written & SLP_EN != 0 {
            let slp_typ = ((written & SLP_TYP_MASK) >> SLP_TYP_SHIFT) as u8;
            if slp_typ == S5_SLP_TYP {
                return IoOutcome::Stop(StopReason::PowerOff);
            }
            if slp_typ == S3_SLP_TYP {
                return IoOutcome::Stop(StopReason::Suspend);
            }
        }
        IoOutcome::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A clock the test sets by hand.
    #[derive(Default)]
    struct FakeClock(AtomicU64);

    impl FakeClock {
        fn set(&self, ns: u64) {
            self.0.store(ns, Ordering::Relaxed);
        }
    }

    impl Clock for FakeClock {
        fn now_ns(&self) -> u64 {
            self.0.load(Ordering::Relaxed)
        }
    }

    const SEC: u64 = 1_000_000_000;

    fn fake() -> (Arc<FakeClock>, PmIo<Arc<FakeClock>>) {
        let clock = Arc::new(FakeClock::default());
        (clock.clone(), PmIo::with_clock(clock))
    }

    fn read(dev: &dyn BusDevice, offset: u64, width: usize) -> u64 {
        let mut buf = [0u8; 8];
        dev.read(0, 0, offset, &mut buf[..width]);
        u64::from_le_bytes(buf)
    }

    fn write(dev: &dyn BusDevice, offset: u64, value: u64, width: usize) -> IoOutcome {
        dev.write(0, 0, offset, &value.to_le_bytes()[..width])
    }

    #[test]
    fn one_second_is_3579545_ticks() {
        let clock = Arc::new(FakeClock::default());
        let timer = PmTimer::with_clock(clock.clone());
        assert_eq!(timer.value(), 0);
        clock.set(SEC);
        assert_eq!(timer.ticks(), PM_TIMER_HZ);
        assert_eq!(u64::from(timer.value()), PM_TIMER_HZ % (1 << 24));
        assert_eq!(read(&timer, 0, 4), PM_TIMER_HZ);
        // 10 s = 35,795,450 ticks, which wraps twice.
        clock.set(10 * SEC);
        assert_eq!(u64::from(timer.value()), (10 * PM_TIMER_HZ) % (1 << 24));
    }

    #[test]
    fn wraps_at_24_bits_and_is_monotonic_between_wraps() {
        let clock = Arc::new(FakeClock::default());
        let timer = PmTimer::with_clock(clock.clone());
        let wrap_ns = (1u64 << 24) * SEC / PM_TIMER_HZ; // ~4.687 s
        let mut prev = 0u32;
        let mut wraps = 0;
        let mut ns = 0;
        while ns < 3 * wrap_ns {
            clock.set(ns);
            let v = timer.value();
            assert!(v <= PM_TIMER_MASK, "bits 31:24 must be zero");
            if v < prev {
                wraps += 1;
            }
            prev = v;
            ns += 7_777_777;
        }
        assert_eq!(wraps, 2);
        // Exactly at the wrap point the counter is back near 0.
        clock.set(wrap_ns + 1000);
        assert!(timer.value() < 10);
    }

    #[test]
    fn huge_clock_values_do_not_overflow() {
        let clock = Arc::new(FakeClock::default());
        let timer = PmTimer::with_clock(clock.clone());
        clock.set(u64::MAX);
        let expect = (u128::from(u64::MAX) * u128::from(PM_TIMER_HZ) / NANOS_PER_SEC) as u64;
        assert_eq!(timer.ticks(), expect);
        assert!(timer.value() <= PM_TIMER_MASK);
    }

    #[test]
    fn real_clock_advances() {
        let timer = PmTimer::new();
        let a = timer.ticks();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = timer.ticks();
        // 2 ms is ~7159 ticks; allow scheduler slack only upwards.
        assert!(b - a >= 7000, "{a} -> {b}");
    }

    #[test]
    fn timer_width_handling() {
        let (clock, pm) = fake();
        clock.set(SEC); // 0x369e99
        let v = PM_TIMER_HZ;
        assert_eq!(read(&pm, PM_TMR, 4), v);
        assert_eq!(read(&pm, PM_TMR, 2), v & 0xffff);
        assert_eq!(read(&pm, PM_TMR, 1), v & 0xff);
        assert_eq!(read(&pm, PM_TMR + 1, 1), (v >> 8) & 0xff);
        assert_eq!(read(&pm, PM_TMR + 2, 2), v >> 16);
        assert_eq!(read(&pm, PM_TMR + 3, 1), 0, "bits 31:24 are zero");
        // Bytes past the register (0xC..) read all-ones.
        assert_eq!(read(&pm, PM_TMR + 2, 4), (v >> 16) | 0xffff_0000);
        assert_eq!(read(&pm, PM_TMR, 8), v | 0xffff_ffff_0000_0000);
        // Same through the standalone timer.
        let t = PmTimer::with_clock(clock.clone());
        assert_eq!(read(&t, 1, 2), (v >> 8) & 0xffff);
        assert_eq!(read(&t, 3, 2), 0xff00);
        // Timer writes are ignored.
        assert_eq!(write(&pm, PM_TMR, 0, 4), IoOutcome::Continue);
        assert_eq!(read(&pm, PM_TMR, 4), v);
    }

    #[test]
    fn s5_powers_off() {
        let (_, pm) = fake();
        let s5 = SLP_EN | (u16::from(S5_SLP_TYP) << SLP_TYP_SHIFT);
        assert_eq!(
            write(&pm, PM1_CNT, u64::from(s5), 2),
            IoOutcome::Stop(StopReason::PowerOff)
        );
        // Also as a high-byte-only write, and with SCI_EN set as an OS would
        // write back what it read.
        assert_eq!(
            write(&pm, PM1_CNT + 1, u64::from(s5 >> 8), 1),
            IoOutcome::Stop(StopReason::PowerOff)
        );
        assert_eq!(
            write(&pm, PM1_CNT, u64::from(s5 | SCI_EN), 2),
            IoOutcome::Stop(StopReason::PowerOff)
        );
        // A 32-bit write covering EVT_EN's neighbour and CNT.
        assert_eq!(
            write(&pm, PM1_EN, u64::from(s5) << 16, 4),
            IoOutcome::Stop(StopReason::PowerOff)
        );
    }

    #[test]
    fn s3_suspends_and_wake_sets_the_status_bits() {
        let (_, pm) = fake();
        // kvm-unit-tests' s3: RTC_EN in PM1_EN, then 0x2400 to PM1a_CNT.
        assert_eq!(
            write(&pm, PM1_EN, u64::from(PM1_RTC), 2),
            IoOutcome::Continue
        );
        assert_eq!(pm.enable(), PM1_RTC);
        assert_eq!(
            write(&pm, PM1_CNT, 0x2400, 2),
            IoOutcome::Stop(StopReason::Suspend)
        );
        pm.wake(PM1_RTC);
        let sts = read(&pm, PM1_STS, 2) as u16;
        assert_eq!(sts & (PM1_WAK_STS | PM1_RTC), PM1_WAK_STS | PM1_RTC);
        // Write-1-to-clear.
        assert_eq!(
            write(&pm, PM1_STS, u64::from(PM1_WAK_STS | PM1_RTC), 2),
            IoOutcome::Continue
        );
        assert_eq!(read(&pm, PM1_STS, 2) as u16 & (PM1_WAK_STS | PM1_RTC), 0);
    }

    #[test]
    fn timer_carry_is_at_most_one_period_away() {
        let (clock, pm) = fake();
        let period = (1u64 << 23) * 1_000_000_000 / PM_TIMER_HZ;
        let first = pm.until_timer_carry_ns();
        assert!(first > 0 && first <= period + 1, "{first}");
        clock.set(first);
        assert!(pm.until_timer_carry_ns() > period - 1_000);
    }

    #[test]
    fn other_control_writes_continue() {
        let (_, pm) = fake();
        // SLP_TYP = S5 without SLP_EN: stored, no power-off.
        let typ = |t: u16| t << SLP_TYP_SHIFT;
        assert_eq!(
            write(&pm, PM1_CNT, u64::from(typ(5)), 2),
            IoOutcome::Continue
        );
        assert_eq!(read(&pm, PM1_CNT, 2), u64::from(typ(5) | SCI_EN));
        // SLP_EN with an undeclared type (S1, S4 ...): ignored.
        for t in 2..8 {
            if t == u16::from(S5_SLP_TYP) {
                continue;
            }
            assert_eq!(
                write(&pm, PM1_CNT, u64::from(typ(t) | SLP_EN), 2),
                IoOutcome::Continue
            );
        }
        // SLP_EN reads back 0; SCI_EN always 1.
        assert_eq!(read(&pm, PM1_CNT, 2) & u64::from(SLP_EN), 0);
        assert_eq!(write(&pm, PM1_CNT, 0, 2), IoOutcome::Continue);
        assert_eq!(read(&pm, PM1_CNT, 2), u64::from(SCI_EN));
        // A low-byte write never triggers (SLP_EN is not stored).
        assert_eq!(write(&pm, PM1_CNT, 0xff, 1), IoOutcome::Continue);
    }

    #[test]
    fn pm1_event_registers() {
        let (clock, pm) = fake();
        assert_eq!(read(&pm, PM1_STS, 4), 0, "status and enable start clear");
        // Enable register is read/write at any width.
        assert_eq!(write(&pm, PM1_EN, 0x0121, 2), IoOutcome::Continue);
        assert_eq!(read(&pm, PM1_EN, 2), 0x0121);
        assert_eq!(write(&pm, PM1_EN + 1, 0x05, 1), IoOutcome::Continue);
        assert_eq!(read(&pm, PM1_EN, 2), 0x0521);
        assert_eq!(read(&pm, PM1_STS, 4), 0x0521_0000);
        // TMR_STS sets when bit 23 toggles (2^23 ticks ~ 2.34 s).
        clock.set(3 * SEC);
        assert_eq!(read(&pm, PM1_STS, 2), u64::from(TMR_STS));
        // Writing 0 does not clear it; writing 1 does.
        assert_eq!(write(&pm, PM1_STS, 0, 2), IoOutcome::Continue);
        assert_eq!(read(&pm, PM1_STS, 2), u64::from(TMR_STS));
        assert_eq!(write(&pm, PM1_STS, 1, 1), IoOutcome::Continue);
        assert_eq!(read(&pm, PM1_STS, 2), 0);
        clock.set(6 * SEC);
        assert_eq!(read(&pm, PM1_STS, 1), u64::from(TMR_STS));
    }

    #[test]
    fn reserved_bytes_read_all_ones() {
        let (_, pm) = fake();
        assert_eq!(read(&pm, 0x6, 2), 0xffff);
        assert_eq!(read(&pm, 0xc, 4), 0xffff_ffff);
        assert_eq!(read(&pm, 0xf, 1), 0xff);
        assert_eq!(write(&pm, 0x6, 0xffff, 2), IoOutcome::Continue);
        assert_eq!(read(&pm, 0x6, 2), 0xffff);
    }

    #[test]
    fn ports() {
        assert_eq!(
            PmPorts::PIIX4,
            PmPorts {
                pm1a_evt: 0x600,
                pm1a_cnt: 0x604,
                pm_tmr: 0x608
            }
        );
        assert_eq!(PmPorts::at(0x600), Some(PmPorts::PIIX4));
        assert_eq!(PmPorts::at(0xfff0).map(|p| p.pm_tmr), Some(0xfff8));
        assert_eq!(PmPorts::at(0xfff1), None);
    }

    #[test]
    fn hostile_accesses_never_panic() {
        let (clock, pm) = fake();
        let timer = PmTimer::with_clock(clock.clone());
        crate::hostile::each_access(0x9e37_79b9_7f4a_7c15, PM_IO_LEN, 20_000, |a| {
            clock.set(a.extra);
            // Any SLP_EN write might legitimately power off; only panics
            // matter here.
            let _ = pm.write(0, 0, a.offset, a.data);
            pm.read(0, 0, a.offset, a.data);
            let _ = timer.write(0, 0, a.offset, a.data);
            timer.read(0, 0, a.offset, a.data);
        });
    }
}
