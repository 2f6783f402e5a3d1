//! The `virt` machine's real-time clock: an ARM PrimeCell PL031.
//!
//! Register semantics as the PL031 TRM (ARM DDI 0224) describes them and
//! QEMU's model answers them, which is what Linux's `rtc-pl031` and
//! kvm-unit-tests expect:
//!
//! - DR (0x00) counts seconds: host UTC at creation, then the host's
//!   monotonic clock, plus whatever the guest loaded. Writes are ignored.
//! - LR (0x08): a write sets the counter to the value (it moves the offset
//!   between host time and guest time) and is read back.
//! - MR (0x04): the match value. When the counter reaches it, RIS bit 0 is
//!   set; the interrupt line (level, the device's SPI) follows
//!   `RIS & IMSC`. Writing MR or LR re-arms the match, as QEMU does: a match
//!   equal to the counter fires at once, otherwise `MR - DR` seconds
//!   (modulo 2^32) after the write. [`Pl031Timer`] fires it on time; every
//!   guest access also looks, so a guest polling RIS sees it too.
//! - CR (0x0C) reads 1 (the clock is always running); writes are ignored.
//! - IMSC (0x10) bit 0 enables the interrupt; RIS (0x14), MIS (0x18) read
//!   the raw and masked status; a 1 written to ICR (0x1C) bit 0 clears it.
//! - 0xFE0–0xFFC: the PrimeCell IDs (part 0x031, designer ARM, cell id),
//!   which Linux's amba bus matches before binding the driver.
//!
//! QEMU's region takes 4-byte accesses, so does this one (the bus drops
//! narrower pieces and cuts wider ones). Called directly with another width
//! or a misaligned offset, it reads zeros and ignores the write; so does
//! every offset it does not implement.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use trapline_bus::{AccessSizes, BusDevice, IoOutcome};

use crate::pc_testdev::IrqLine;
use crate::pm_timer::{Clock, MonotonicClock};

/// Data register: the current count, in seconds.
pub const DR: u64 = 0x00;
/// Match register.
pub const MR: u64 = 0x04;
/// Load register.
pub const LR: u64 = 0x08;
/// Control register.
pub const CR: u64 = 0x0C;
/// Interrupt mask set/clear (bit 0: 1 = enabled).
pub const IMSC: u64 = 0x10;
/// Raw interrupt status.
pub const RIS: u64 = 0x14;
/// Masked interrupt status.
pub const MIS: u64 = 0x18;
/// Interrupt clear (write-only).
pub const ICR: u64 = 0x1C;
/// First of the eight PrimeCell ID registers (PeriphID0-3, CellID0-3).
pub const ID_BASE: u64 = 0xFE0;

/// RTCPeriphID0..3 and RTCPCellID0..3: part 0x031, designer 0x41 (ARM),
/// revision 1, the PrimeCell cell id; the values QEMU's pl031 reports.
pub const ID: [u8; 8] = [0x31, 0x10, 0x14, 0x00, 0x0D, 0xF0, 0x05, 0xB1];

const NS_PER_SEC: u64 = 1_000_000_000;

/// The registers.
struct State {
    /// Guest seconds at clock time 0, modulo 2^32: DR is `base + elapsed`.
    base: u32,
    mr: u32,
    lr: u32,
    imsc: u32,
    ris: u32,
    /// Clock time (ns) at which the match fires, if armed.
    alarm_at: Option<u64>,
    /// The level last driven on the interrupt line.
    line: bool,
    /// The timer thread should end.
    quit: bool,
}

impl State {
    fn count(&self, now_ns: u64) -> u32 {
        self.base.wrapping_add((now_ns / NS_PER_SEC) as u32)
    }

    /// QEMU's `pl031_set_alarm`: fire now if the match equals the count,
    /// else `MR - DR` seconds from now.
    fn arm(&mut self, now_ns: u64) {
        let ticks = self.mr.wrapping_sub(self.count(now_ns));
        if ticks == 0 {
            self.alarm_at = None;
            self.ris = 1;
        } else {
            self.alarm_at = Some(now_ns.saturating_add(u64::from(ticks) * NS_PER_SEC));
        }
    }

    /// Fire the match if its time has come.
    fn poll(&mut self, now_ns: u64) {
        if self.alarm_at.is_some_and(|at| now_ns >= at) {
            self.alarm_at = None;
            self.ris = 1;
        }
    }

    fn read(&self, reg: u64, now_ns: u64) -> u32 {
        match reg {
            DR => self.count(now_ns),
            MR => self.mr,
            LR => self.lr,
            CR => 1,
            IMSC => self.imsc,
            RIS => self.ris,
            MIS => self.ris & self.imsc,
            ID_BASE..=0xFFC => u32::from(ID[((reg - ID_BASE) >> 2) as usize]),
            // ICR is write-only; everything else is unimplemented.
            _ => 0,
        }
    }

    fn write(&mut self, reg: u64, value: u32, now_ns: u64) {
        match reg {
            LR => {
                self.lr = value;
                let elapsed = (now_ns / NS_PER_SEC) as u32;
                self.base = value.wrapping_sub(elapsed);
                self.arm(now_ns);
            }
            MR => {
                self.mr = value;
                self.arm(now_ns);
            }
            IMSC => self.imsc = value & 1,
            ICR => self.ris &= !value,
            // DR, CR, RIS, MIS, the IDs: read-only or ignored.
            _ => {}
        }
    }
}

/// The PL031. Map at `VIRT_PL031_BASE` (one 4 KiB page).
pub struct Pl031 {
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
    /// Signalled when the match is re-armed, so the timer thread
    /// recomputes its deadline.
    changed: Condvar,
    irq: Option<(Arc<dyn IrqLine>, u32)>,
}

impl Pl031 {
    /// A PL031 reading the host's UTC time, running on the host's monotonic
    /// clock; its interrupt drives `spi` through `line`.
    pub fn new(line: Arc<dyn IrqLine>, spi: u32) -> Self {
        let unix_secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self::with_clock(
            Arc::new(MonotonicClock::new()),
            unix_secs,
            Some((line, spi)),
        )
    }

    /// A PL031 whose DR reads `unix_secs` when `clock` reads its current
    /// time (tests; no line when `irq` is `None`).
    pub fn with_clock(
        clock: Arc<dyn Clock>,
        unix_secs: u64,
        irq: Option<(Arc<dyn IrqLine>, u32)>,
    ) -> Self {
        let elapsed = (clock.now_ns() / NS_PER_SEC) as u32;
        Self {
            clock,
            state: Mutex::new(State {
                // The counter is 32 bits wide, as the TRM's: it wraps in 2106.
                base: (unix_secs as u32).wrapping_sub(elapsed),
                mr: 0,
                lr: 0,
                imsc: 0,
                ris: 0,
                alarm_at: None,
                line: false,
                quit: false,
            }),
            changed: Condvar::new(),
            irq,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Plain integers: a panic elsewhere cannot leave them inconsistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drive the line to `RIS & IMSC` if it changed.
    fn update_line(&self, s: &mut State) {
        let level = s.ris & s.imsc != 0;
        if level != s.line {
            s.line = level;
            if let Some((line, spi)) = &self.irq {
                line.set_irq(*spi, level);
            }
        }
    }

    /// The level of the interrupt line.
    pub fn irq_level(&self) -> bool {
        self.lock().line
    }

    /// Which register a direct access addresses, if it is one the device
    /// takes: 4 bytes, 4-aligned, inside the page.
    fn register(offset: u64, len: usize) -> Option<u64> {
        (len == 4 && offset & 3 == 0 && offset < 0x1000).then_some(offset)
    }
}

impl BusDevice for Pl031 {
    fn access_sizes(&self) -> AccessSizes {
        // QEMU's pl031 region: 4-byte registers.
        AccessSizes::aligned(4, 4)
    }

    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        data.fill(0);
        let Some(reg) = Self::register(offset, data.len()) else {
            return;
        };
        let now = self.clock.now_ns();
        let mut s = self.lock();
        s.poll(now);
        data.copy_from_slice(&s.read(reg, now).to_le_bytes());
        self.update_line(&mut s);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let Some(reg) = Self::register(offset, data.len()) else {
            return IoOutcome::Continue;
        };
        let value = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        let now = self.clock.now_ns();
        let mut s = self.lock();
        s.poll(now);
        s.write(reg, value, now);
        self.update_line(&mut s);
        drop(s);
        if matches!(reg, LR | MR) {
            self.changed.notify_all();
        }
        IoOutcome::Continue
    }
}

/// The thread that fires the PL031's match on time; dropping it stops and
/// joins the thread.
pub struct Pl031Timer {
    rtc: Arc<Pl031>,
    thread: Option<JoinHandle<()>>,
}

impl Pl031Timer {
    /// Start the thread; `on_start` runs first on it (the machine installs
    /// the thread's seccomp filter there).
    pub fn spawn(rtc: Arc<Pl031>, on_start: Box<dyn FnOnce() + Send>) -> std::io::Result<Self> {
        let r = rtc.clone();
        let thread = std::thread::Builder::new()
            .name("pl031-timer".into())
            .spawn(move || {
                on_start();
                run(&r);
            })?;
        Ok(Self {
            rtc,
            thread: Some(thread),
        })
    }
}

fn run(rtc: &Pl031) {
    let mut s = rtc.lock();
    while !s.quit {
        let now = rtc.clock.now_ns();
        s.poll(now);
        rtc.update_line(&mut s);
        s = match s.alarm_at {
            Some(at) => {
                let wait = Duration::from_nanos(at.saturating_sub(now));
                rtc.changed
                    .wait_timeout(s, wait)
                    .map(|(s, _)| s)
                    .unwrap_or_else(|e| e.into_inner().0)
            }
            None => rtc.changed.wait(s).unwrap_or_else(PoisonError::into_inner),
        };
    }
}

impl Drop for Pl031Timer {
    fn drop(&mut self) {
        self.rtc.lock().quit = true;
        self.rtc.changed.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostile::each_access;
    use std::sync::atomic::{AtomicU64, Ordering};

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

    const SPI: u32 = 2;
    /// 2026-01-01T00:00:00Z.
    const T0: u64 = 1_767_225_600;

    fn rtc() -> (Pl031, Arc<FakeClock>, Arc<Recorder>) {
        let clock = Arc::new(FakeClock(AtomicU64::new(5 * NS_PER_SEC + 123)));
        let rec = Arc::new(Recorder::default());
        let r = Pl031::with_clock(clock.clone(), T0, Some((rec.clone(), SPI)));
        (r, clock, rec)
    }

    fn r32(r: &Pl031, off: u64) -> u32 {
        let mut b = [0u8; 4];
        r.read(0, 0, off, &mut b);
        u32::from_le_bytes(b)
    }

    fn w32(r: &Pl031, off: u64, v: u32) {
        let _ = r.write(0, 0, off, &v.to_le_bytes());
    }

    fn advance(c: &FakeClock, secs: u64) {
        c.0.fetch_add(secs * NS_PER_SEC, Ordering::Relaxed);
    }

    #[test]
    fn dr_counts_host_seconds_from_creation() {
        let (r, clock, _) = rtc();
        assert_eq!(u64::from(r32(&r, DR)), T0);
        advance(&clock, 3);
        assert_eq!(u64::from(r32(&r, DR)), T0 + 3);
        w32(&r, DR, 7);
        assert_eq!(u64::from(r32(&r, DR)), T0 + 3, "DR is read-only");
    }

    #[test]
    fn the_real_clock_reads_now() {
        let r = Pl031::with_clock(Arc::new(MonotonicClock::new()), T0, None);
        assert_eq!(u64::from(r32(&r, DR)), T0);
        let now = Pl031::new(Arc::new(Recorder::default()), SPI);
        // After 2020-01-01.
        assert!(r32(&now, DR) > 1_577_836_800);
    }

    #[test]
    fn load_sets_the_count_and_reads_back() {
        let (r, clock, _) = rtc();
        w32(&r, LR, 1000);
        assert_eq!(r32(&r, DR), 1000);
        assert_eq!(r32(&r, LR), 1000);
        advance(&clock, 2);
        assert_eq!(r32(&r, DR), 1002);
        // The counter wraps at 32 bits.
        w32(&r, LR, u32::MAX);
        advance(&clock, 1);
        assert_eq!(r32(&r, DR), 0);
    }

    #[test]
    fn control_reads_one_and_ignores_writes() {
        let (r, _, _) = rtc();
        assert_eq!(r32(&r, CR), 1);
        w32(&r, CR, 0);
        assert_eq!(r32(&r, CR), 1);
    }

    #[test]
    fn primecell_ids() {
        let (r, _, _) = rtc();
        let ids: Vec<u32> = (0..8).map(|i| r32(&r, ID_BASE + 4 * i)).collect();
        assert_eq!(ids, [0x31, 0x10, 0x14, 0x00, 0x0D, 0xF0, 0x05, 0xB1]);
    }

    #[test]
    fn match_raises_the_masked_line_and_icr_clears_it() {
        let (r, clock, rec) = rtc();
        let now = r32(&r, DR);
        w32(&r, IMSC, 0xFFFF_FFFF);
        assert_eq!(r32(&r, IMSC), 1);
        w32(&r, MR, now + 2);
        assert_eq!(r32(&r, MR), now + 2);
        advance(&clock, 1);
        assert_eq!(r32(&r, RIS), 0);
        advance(&clock, 1);
        assert_eq!(r32(&r, RIS), 1);
        assert_eq!(r32(&r, MIS), 1);
        assert!(r.irq_level());
        w32(&r, IMSC, 0);
        assert_eq!((r32(&r, RIS), r32(&r, MIS)), (1, 0));
        assert!(!r.irq_level());
        w32(&r, IMSC, 1);
        w32(&r, ICR, 1);
        assert_eq!(r32(&r, RIS), 0);
        assert!(!r.irq_level());
        assert_eq!(r32(&r, ICR), 0, "ICR is write-only");
        let seen = rec.0.lock().unwrap().clone();
        assert_eq!(seen, [(SPI, true), (SPI, false), (SPI, true), (SPI, false)]);
        // Fired once: time passing does not raise it again.
        advance(&clock, 10);
        assert_eq!(r32(&r, RIS), 0);
    }

    #[test]
    fn a_match_equal_to_the_count_fires_at_once() {
        let (r, _, _) = rtc();
        w32(&r, MR, r32(&r, DR));
        assert_eq!(r32(&r, RIS), 1);
        // Loading the match value fires it too.
        w32(&r, ICR, 1);
        w32(&r, MR, 50);
        w32(&r, LR, 50);
        assert_eq!(r32(&r, RIS), 1);
    }

    #[test]
    fn narrow_or_misaligned_accesses_read_zero_and_change_nothing() {
        let (r, _, _) = rtc();
        let mut b = [0xAAu8; 2];
        r.read(0, 0, DR, &mut b);
        assert_eq!(b, [0, 0]);
        let mut b = [0xAAu8; 4];
        r.read(0, 0, DR + 1, &mut b);
        assert_eq!(b, [0; 4]);
        let _ = r.write(0, 0, IMSC, &[1]);
        let _ = r.write(0, 0, IMSC + 2, &[1, 0, 0, 0]);
        assert_eq!(r32(&r, IMSC), 0);
        assert_eq!(r.access_sizes(), AccessSizes::aligned(4, 4));
    }

    #[test]
    fn the_timer_thread_fires_the_match() {
        let rec = Arc::new(Recorder::default());
        let r = Arc::new(Pl031::with_clock(
            Arc::new(MonotonicClock::new()),
            T0,
            Some((rec.clone(), SPI)),
        ));
        let timer = Pl031Timer::spawn(r.clone(), Box::new(|| {})).unwrap();
        w32(&r, IMSC, 1);
        w32(&r, MR, r32(&r, DR).wrapping_add(1));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !rec.0.lock().unwrap().contains(&(SPI, true)) {
            assert!(std::time::Instant::now() < deadline, "no match in 30 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(timer);
        assert!(r.irq_level());
    }

    #[test]
    fn hostile_accesses_keep_the_state_consistent() {
        let (r, clock, rec) = rtc();
        each_access(0x9031, 0x1000, 20_000, |a| {
            if a.extra & 1 == 0 {
                r.read(0, 0, a.offset, a.data);
                if a.data.len() != 4 || a.offset & 3 != 0 || a.offset >= 0x1000 {
                    assert!(a.data.iter().all(|&b| b == 0));
                }
            } else {
                let _ = r.write(0, 0, a.offset, a.data);
            }
            if a.extra & 0x30 == 0 {
                clock.0.fetch_add(a.extra >> 34, Ordering::Relaxed);
            }
            let s = r.lock();
            assert!(s.imsc <= 1 && s.ris <= 1);
            assert_eq!(s.line, s.ris & s.imsc != 0);
        });
        let history = rec.0.lock().unwrap();
        for pair in history.windows(2) {
            assert_ne!(pair[0].1, pair[1].1, "the line alternates");
        }
        assert_eq!(history.last().is_some_and(|l| l.1), r.irq_level());
    }
}
