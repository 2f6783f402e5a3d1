//! The MC146818 real-time clock and CMOS memory at ports 0x70/0x71, as on
//! every PC (QEMU's `mc146818rtc`).
//!
//! * Port 0x70 (write): bits 6:0 select a CMOS byte, bit 7 masks NMIs
//!   (recorded, see [`Rtc::nmi_masked`]; KVM delivers NMIs regardless).
//!   Reads of 0x70 return all-ones, as QEMU's do.
//! * Port 0x71: the selected byte. Registers 0x00–0x09 (time, alarms,
//!   date), A–D and 0x32 (century) behave as the chip does (see
//!   [`regs`]); the rest is battery-backed memory, where the machine puts
//!   the memory-size bytes PC guests read ([`CmosMemory`]).
//!
//! The time comes from the host clock (UTC) at start and then runs on a
//! monotonic clock; the guest may set it. The periodic, alarm and
//! update-ended interrupts reach ISA IRQ 8 through [`timer::RtcTimer`],
//! which is also the wake source for ACPI S3.
//!
//! A guest access takes one small lock (this is a slow device, and the
//! timer thread shares the state); nothing allocates or logs.

pub mod regs;
pub mod time;
pub mod timer;

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use trapline_bus::{AccessSizes, BusDevice, IoOutcome};

use crate::pm_timer::{Clock, MonotonicClock};
use regs::RegisterFile;

/// First port of the RTC (index register).
pub const RTC_PORT: u16 = 0x70;
/// Ports the RTC decodes: index and data.
pub const RTC_PORT_LEN: u64 = 2;
/// The RTC's ISA interrupt line.
pub const RTC_IRQ: u32 = 8;
/// Port-0x70 bit that masks NMIs.
const NMI_MASK: u8 = 0x80;
/// CMOS shutdown status meaning "resume from S3" (QEMU writes it when
/// the machine suspends, for firmware that looks).
const SHUTDOWN_S3_RESUME: u8 = 0xfe;

/// What the machine tells the RTC to write into CMOS memory: the memory
/// size bytes, computed as QEMU's `pc_cmos_init` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmosMemory {
    /// Guest RAM below 4 GiB, in bytes.
    pub ram_below_4g: u64,
    /// Guest RAM above 4 GiB, in bytes.
    pub ram_above_4g: u64,
    /// Number of vCPUs.
    pub cpus: u32,
}

impl CmosMemory {
    /// The (index, value) bytes to write.
    pub fn bytes(&self) -> Vec<(u8, u8)> {
        const KIB: u64 = 1024;
        const MIB: u64 = 1024 * KIB;
        const UNIT_64K: u64 = 64 * KIB;
        let mut out = Vec::new();
        let mut word = |lo: u8, v: u64| {
            let v = v.min(0xffff) as u16;
            out.push((lo, v as u8));
            out.push((lo + 1, (v >> 8) as u8));
        };
        // Base memory: 640 KiB.
        word(0x15, 640);
        // Extended memory above 1 MiB in KiB (twice: 0x17 and 0x30).
        let ext = (self.ram_below_4g / KIB).saturating_sub(1024);
        word(0x17, ext);
        word(0x30, ext);
        // Memory above 16 MiB in 64 KiB units.
        word(0x34, self.ram_below_4g.saturating_sub(16 * MIB) / UNIT_64K);
        // Memory above 4 GiB in 64 KiB units, three bytes.
        let high = (self.ram_above_4g / UNIT_64K).min(0xff_ffff);
        out.push((0x5b, high as u8));
        out.push((0x5c, (high >> 8) as u8));
        out.push((0x5d, (high >> 16) as u8));
        // Number of CPUs minus one.
        out.push((0x5f, self.cpus.saturating_sub(1).min(0xff) as u8));
        out
    }
}

/// State the guest and the timer thread share.
struct Inner {
    index: u8,
    nmi_masked: bool,
    regs: RegisterFile,
    /// The timer thread should end.
    quit: bool,
}

/// The RTC device. Map at [`RTC_PORT`] with length [`RTC_PORT_LEN`].
pub struct Rtc {
    clock: Arc<dyn Clock>,
    inner: Mutex<Inner>,
    /// Signalled on every register write and C read, so the timer thread
    /// recomputes its next deadline.
    changed: Condvar,
}

impl Rtc {
    /// An RTC set to the host's UTC time, running on the host monotonic
    /// clock.
    pub fn new(memory: CmosMemory) -> Self {
        let unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Self::with_clock(Arc::new(MonotonicClock::new()), unix_ns, memory)
    }

    /// An RTC reading `unix_ns` (ns since 1970) when `clock` reads its
    /// current value, for tests.
    pub fn with_clock(clock: Arc<dyn Clock>, unix_ns: u64, memory: CmosMemory) -> Self {
        let mut regs = RegisterFile::new(unix_ns, clock.now_ns());
        for (i, v) in memory.bytes() {
            regs.set_cmos(i, v);
        }
        Self {
            clock,
            inner: Mutex::new(Inner {
                index: 0,
                nmi_masked: false,
                regs,
                quit: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Plain bytes and integers: a panic elsewhere cannot leave them
        // inconsistent.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the guest masked NMIs through bit 7 of port 0x70.
    pub fn nmi_masked(&self) -> bool {
        self.lock().nmi_masked
    }

    /// The machine is entering S3: record it in the CMOS shutdown status
    /// byte, as QEMU does.
    pub fn notify_suspend(&self) {
        self.lock()
            .regs
            .set_cmos(regs::REG_SHUTDOWN_STATUS, SHUTDOWN_S3_RESUME);
    }

    /// Read a CMOS register as the guest would (for tests and tools).
    pub fn read_register(&self, index: u8) -> u8 {
        let now = self.clock.now_ns();
        let index = index & !NMI_MASK;
        let v = self.lock().regs.read(index, now);
        if index == regs::REG_C {
            self.changed.notify_one();
        }
        v
    }
}

impl BusDevice for Rtc {
    fn access_sizes(&self) -> AccessSizes {
        // QEMU's cmos_ops: byte registers, so an outw to 0x70 writes the
        // index, then the data.
        AccessSizes::BYTES
    }

    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        let now = self.clock.now_ns();
        let mut touched = false;
        let mut g = self.lock();
        for (i, b) in data.iter_mut().enumerate() {
            *b = match offset.checked_add(i as u64) {
                Some(1) => {
                    let index = g.index;
                    // Only a read of C changes what the timer waits for;
                    // polling A or the time must not wake it.
                    touched |= index == regs::REG_C;
                    g.regs.read(index, now)
                }
                _ => 0xff,
            };
        }
        drop(g);
        if touched {
            // A read of C lowers the line: the timer may have work again.
            self.changed.notify_one();
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let now = self.clock.now_ns();
        let mut g = self.lock();
        for (i, &b) in data.iter().enumerate() {
            match offset.checked_add(i as u64) {
                Some(0) => {
                    g.index = b & !NMI_MASK;
                    g.nmi_masked = b & NMI_MASK != 0;
                }
                Some(1) => {
                    let index = g.index;
                    g.regs.write(index, b, now);
                }
                _ => {}
            }
        }
        let data_written = offset == 1 || (offset == 0 && data.len() > 1);
        drop(g);
        if data_written {
            // A register changed: the next event may have moved.
            self.changed.notify_one();
        }
        IoOutcome::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::regs::*;
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[derive(Default)]
    struct FakeClock(AtomicU64);

    impl Clock for FakeClock {
        fn now_ns(&self) -> u64 {
            self.0.load(Ordering::Relaxed)
        }
    }

    const MEM: CmosMemory = CmosMemory {
        ram_below_4g: 128 << 20,
        ram_above_4g: 0,
        cpus: 2,
    };

    fn rtc() -> (Arc<FakeClock>, Rtc) {
        let clock = Arc::new(FakeClock::default());
        let rtc = Rtc::with_clock(clock.clone(), 1_795_575_845 * 1_000_000_000, MEM);
        (clock, rtc)
    }

    fn cmos(rtc: &Rtc, index: u8) -> u8 {
        let _ = rtc.write(0, 0x70, 0, &[index]);
        let mut b = [0];
        rtc.read(0, 0x70, 1, &mut b);
        b[0]
    }

    #[test]
    fn index_port_and_nmi_mask() {
        let (_, rtc) = rtc();
        assert_eq!(cmos(&rtc, REG_SECONDS), 0x05);
        assert!(!rtc.nmi_masked());
        // Bit 7 masks NMIs and is not part of the index.
        assert_eq!(cmos(&rtc, 0x80 | REG_MINUTES), 0x04);
        assert!(rtc.nmi_masked());
        let mut b = [0u8; 2];
        rtc.read(0, 0x70, 0, &mut b);
        assert_eq!(b, [0xff, 0x04], "port 0x70 reads all-ones");
        // A 16-bit OUT writes the index, then the data.
        let _ = rtc.write(0, 0x70, 0, &[0x40, 0x99]);
        assert_eq!(cmos(&rtc, 0x40), 0x99);
        // Anything beyond the two ports is ignored.
        let _ = rtc.write(0, 0x70, 7, &[1, 2, 3, 4]);
        rtc.read(0, 0x70, u64::MAX, &mut b);
    }

    #[test]
    fn memory_size_bytes_as_qemu_sets_them() {
        let (_, rtc) = rtc();
        let word = |lo| u16::from(cmos(&rtc, lo)) | u16::from(cmos(&rtc, lo + 1)) << 8;
        assert_eq!(word(0x15), 640);
        // 127 MiB of extended memory does not fit: capped, as in QEMU.
        assert_eq!(word(0x17), 0xffff);
        assert_eq!(word(0x30), 0xffff);
        assert_eq!(word(0x34), 112 * 16);
        assert_eq!(cmos(&rtc, 0x5b), 0);
        assert_eq!(cmos(&rtc, 0x5f), 1);
        assert_eq!(cmos(&rtc, REG_CENTURY), 0x20);
        let big = CmosMemory {
            ram_below_4g: 3 << 30,
            ram_above_4g: 1 << 32,
            cpus: 1,
        }
        .bytes();
        assert!(
            big.contains(&(0x17, 0xff)) && big.contains(&(0x18, 0xff)),
            "capped"
        );
        assert!(big.contains(&(0x5d, 1)), "4 GiB above 4G = 0x10000 units");
        let small = CmosMemory {
            ram_below_4g: 32 << 20,
            ram_above_4g: 0,
            cpus: 1,
        }
        .bytes();
        assert!(
            small.contains(&(0x17, 0x00)) && small.contains(&(0x18, 0x7c)),
            "31 MiB"
        );
    }

    #[test]
    fn suspend_marks_the_shutdown_byte() {
        let (_, rtc) = rtc();
        assert_eq!(cmos(&rtc, REG_SHUTDOWN_STATUS), 0);
        rtc.notify_suspend();
        assert_eq!(cmos(&rtc, REG_SHUTDOWN_STATUS), 0xfe);
    }

    #[test]
    fn hostile_accesses_do_not_panic() {
        let (clock, rtc) = rtc();
        for i in 0..=255u8 {
            clock.0.fetch_add(123_456_789, Ordering::Relaxed);
            let _ = rtc.write(0, 0x70, 0, &[i]);
            let _ = rtc.write(0, 0x70, 1, &[i.wrapping_mul(37)]);
            let mut b = [0u8; 4];
            rtc.read(0, 0x70, 0, &mut b);
        }
    }
}
