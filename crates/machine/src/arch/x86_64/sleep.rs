//! ACPI S3 on the controller: once every vCPU has stopped, wait for a wake
//! event the guest enabled in PM1_EN, mark it in PM1_STS (with WAK_STS),
//! and say where the vCPUs go: the boot vCPU to the FACS waking vector,
//! the others back to wait-for-SIPI (see `trapline_kvm::resume`).
//!
//! Wake events, as QEMU honours them: the RTC alarm (with AIE set in the
//! RTC and RTC_EN in PM1_EN) and the PM timer's carry out of bit 23 (with
//! TMR_EN). The power button (PWRBTN_EN) has no host-side source in
//! trapline, so it never wakes the machine. The run's timeout still ends
//! the run while it sleeps.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use trapline_devices::pm_timer::{PmIo, PM1_RTC, PM1_TMR_EN};
use trapline_devices::rtc::Rtc;
pub use trapline_kvm::ResumeAt;
use trapline_kvm::{KvmError, VcpuFd};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use super::platform::Platform;
use crate::Outcome;

/// Offset of the 32-bit firmware waking vector in the FACS.
const FACS_WAKING_VECTOR: u64 = 12;
/// How long to wait at most when nothing but the timeout can wake the
/// machine (the wait is re-armed; this only bounds one sleep).
const IDLE_WAIT: Duration = Duration::from_secs(3600);

/// Why the machine woke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The RTC alarm.
    Rtc,
    /// The PM timer's carry.
    PmTimer,
}

/// How a sleep ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepEnd {
    /// A wake event; the vCPUs resume.
    Woke(Wake),
    /// The run's deadline passed first.
    Deadline,
    /// A stop signal came first (see crate::signals).
    Signal(i32),
}

/// The devices a sleeping machine watches.
pub(crate) struct Sleeper<'a> {
    pub pm: &'a PmIo,
    pub rtc: &'a Rtc,
    pub rtc_alarms: &'a Receiver<()>,
}

impl Sleeper<'_> {
    /// Enter S3: forget alarms that fired while the guest was still
    /// running (they were not wake events), mark the CMOS shutdown byte.
    pub fn enter(&self) {
        while self.rtc_alarms.try_recv().is_ok() {}
        self.rtc.notify_suspend();
    }

    /// Wait for an enabled wake event or `deadline`; on a wake, set the
    /// PM1 status bits.
    pub fn wait(&self, deadline: Option<Instant>) -> SleepEnd {
        loop {
            let enable = self.pm.enable();
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return SleepEnd::Deadline;
            }
            if let Some(sig) = crate::signals::received() {
                return SleepEnd::Signal(sig);
            }
            let carry = (enable & PM1_TMR_EN != 0)
                .then(|| now + Duration::from_nanos(self.pm.until_timer_carry_ns()));
            let signal_poll = crate::signals::watching().then(|| now + crate::signals::POLL);
            let until = [deadline, carry, signal_poll]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(now + IDLE_WAIT);
            match self
                .rtc_alarms
                .recv_timeout(until.saturating_duration_since(now))
            {
                Ok(()) if enable & PM1_RTC != 0 => {
                    self.pm.wake(PM1_RTC);
                    return SleepEnd::Woke(Wake::Rtc);
                }
                // An alarm the guest did not enable as a wake event.
                Ok(()) => {}
                Err(RecvTimeoutError::Timeout) => {
                    if carry.is_some_and(|c| Instant::now() >= c) {
                        // TMR_STS follows from the timer itself.
                        self.pm.wake(0);
                        return SleepEnd::Woke(Wake::PmTimer);
                    }
                }
                // The RTC thread is gone: only the deadline can end this.
                Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(
                        deadline.map_or(IDLE_WAIT, |d| d.saturating_duration_since(Instant::now())),
                    );
                }
            }
        }
    }
}

/// The FACS firmware waking vector the guest wrote (0: none).
pub(crate) fn waking_vector(memory: &GuestMemoryMmap, facs: u64) -> u32 {
    if facs == 0 {
        return 0;
    }
    memory
        .read_obj::<u32>(GuestAddress(facs + FACS_WAKING_VECTOR))
        .unwrap_or(0)
}

/// Where vCPU `index` resumes.
pub(crate) fn resume_at(index: usize, vector: u32) -> ResumeAt {
    if index == 0 {
        ResumeAt::WakingVector(vector)
    } else {
        ResumeAt::WaitForSipi
    }
}

/// Every vCPU is parked in S3: sleep until a wake event, then send each
/// vCPU where it resumes. Returns the outcome if the run ends instead (the
/// deadline, a stop signal, or no waking vector to resume at).
pub(crate) fn sleep_and_resume(
    platform: &Platform,
    memory: &GuestMemoryMmap,
    deadline: Option<Instant>,
    resume_txs: &[Sender<ResumeAt>],
) -> Option<Outcome> {
    let sleeper = Sleeper {
        pm: &platform.pm,
        rtc: &platform.rtc,
        rtc_alarms: &platform.rtc_alarms,
    };
    sleeper.enter();
    match sleeper.wait(deadline) {
        SleepEnd::Deadline => return Some(Outcome::TimeoutAsleep),
        SleepEnd::Signal(sig) => return Some(Outcome::Signal(sig)),
        SleepEnd::Woke(_) => {}
    }
    let vector = waking_vector(memory, platform.facs);
    if vector == 0 {
        // Firmware with no waking vector reboots; trapline has nothing to
        // reboot into.
        return Some(Outcome::Reset);
    }
    for (i, tx) in resume_txs.iter().enumerate() {
        // A thread that already ended has dropped its receiver.
        let _ = tx.send(resume_at(i, vector));
    }
    None
}

/// Set a parked vCPU where the machine resumes it.
pub(crate) fn resume(vcpu: &VcpuFd, at: ResumeAt) -> Result<(), KvmError> {
    trapline_kvm::resume::resume(vcpu, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use trapline_bus::BusDevice;
    use trapline_devices::pm_timer::PM1_WAK_STS;
    use trapline_devices::rtc::CmosMemory;

    fn rtc() -> Rtc {
        Rtc::new(CmosMemory {
            ram_below_4g: 1 << 20,
            ram_above_4g: 0,
            cpus: 1,
        })
    }

    fn pm1_sts(pm: &PmIo) -> u16 {
        let mut b = [0u8; 2];
        pm.read(0, 0x600, 0, &mut b);
        u16::from_le_bytes(b)
    }

    #[test]
    fn an_enabled_rtc_alarm_wakes_and_sets_wak_sts() {
        let (pm, rtc, (tx, rx)) = (PmIo::new(), rtc(), channel());
        let _ = pm.write(0, 0x600, 2, &PM1_RTC.to_le_bytes());
        let s = Sleeper {
            pm: &pm,
            rtc: &rtc,
            rtc_alarms: &rx,
        };
        tx.send(()).unwrap();
        s.enter();
        assert_eq!(rtc.read_register(0x0f), 0xfe);
        tx.send(()).unwrap();
        assert_eq!(s.wait(None), SleepEnd::Woke(Wake::Rtc));
        assert_eq!(
            pm1_sts(&pm) & (PM1_WAK_STS | PM1_RTC),
            PM1_WAK_STS | PM1_RTC
        );
    }

    #[test]
    fn a_disabled_alarm_does_not_wake_and_the_deadline_ends_the_wait() {
        let (pm, rtc, (tx, rx)) = (PmIo::new(), rtc(), channel());
        let s = Sleeper {
            pm: &pm,
            rtc: &rtc,
            rtc_alarms: &rx,
        };
        tx.send(()).unwrap();
        let deadline = Instant::now() + Duration::from_millis(50);
        assert_eq!(s.wait(Some(deadline)), SleepEnd::Deadline);
        assert_eq!(pm1_sts(&pm) & PM1_WAK_STS, 0);
    }

    #[test]
    fn tmr_en_wakes_at_the_pm_timer_carry() {
        // The carry comes every 2.34 s: the wait ends within that.
        let (pm, rtc, (_tx, rx)) = (PmIo::new(), rtc(), channel());
        let _ = pm.write(0, 0x600, 2, &PM1_TMR_EN.to_le_bytes());
        let s = Sleeper {
            pm: &pm,
            rtc: &rtc,
            rtc_alarms: &rx,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        assert_eq!(s.wait(Some(deadline)), SleepEnd::Woke(Wake::PmTimer));
        assert_eq!(pm1_sts(&pm) & PM1_WAK_STS, PM1_WAK_STS);
    }

    #[test]
    fn vcpu_zero_goes_to_the_vector_the_others_wait_for_sipi() {
        assert_eq!(resume_at(0, 0x1000), ResumeAt::WakingVector(0x1000));
        assert_eq!(resume_at(3, 0x1000), ResumeAt::WaitForSipi);
    }
}
