//! The RTC's interrupt source: one thread that sleeps until the next
//! enabled event (alarm, update-ended, periodic tick), then pulses ISA
//! IRQ 8 through the in-kernel irqchip and, for an alarm, tells the
//! machine (the wake source of ACPI S3).
//!
//! The line is pulsed (raised and lowered), not held: IRQ 8 is an ISA edge
//! interrupt on the PIC and the IOAPIC, and a new edge comes only after
//! the guest has read register C, as with the chip's IRQF.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Rtc, RTC_IRQ};
use crate::pc_testdev::IrqLine;

/// The running timer thread; dropping it stops and joins the thread.
pub struct RtcTimer {
    rtc: Arc<Rtc>,
    thread: Option<JoinHandle<()>>,
}

impl RtcTimer {
    /// Start the thread. `on_start` runs first on it (the machine installs
    /// the thread's seccomp filter there); `on_alarm` runs for every alarm
    /// match while AIE is set.
    pub fn spawn(
        rtc: Arc<Rtc>,
        irq: Arc<dyn IrqLine>,
        on_alarm: Box<dyn Fn() + Send>,
        on_start: Box<dyn FnOnce() + Send>,
    ) -> std::io::Result<RtcTimer> {
        let r = rtc.clone();
        let thread = std::thread::Builder::new()
            .name("rtc-timer".into())
            .spawn(move || {
                on_start();
                run(&r, &*irq, &*on_alarm);
            })?;
        Ok(RtcTimer {
            rtc,
            thread: Some(thread),
        })
    }
}

fn run(rtc: &Rtc, irq: &dyn IrqLine, on_alarm: &dyn Fn()) {
    let mut g = rtc.lock();
    while !g.quit {
        let now = rtc.clock.now_ns();
        let p = g.regs.poll(now);
        if p.raise_irq || p.alarm {
            drop(g);
            if p.raise_irq {
                // Fails only without an in-kernel irqchip; the guest then
                // sees no interrupt, as with pc-testdev's lines.
                irq.set_irq(RTC_IRQ, true);
                irq.set_irq(RTC_IRQ, false);
            }
            if p.alarm {
                on_alarm();
            }
            g = rtc.lock();
            continue;
        }
        g = match p.next_ns {
            Some(at) => {
                let wait = Duration::from_nanos(at.saturating_sub(now));
                rtc.changed
                    .wait_timeout(g, wait)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0)
            }
            None => rtc
                .changed
                .wait(g)
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        };
    }
}

impl Drop for RtcTimer {
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
    use super::super::regs::*;
    use super::super::CmosMemory;
    use super::*;
    use std::sync::mpsc::channel;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Lines(Mutex<Vec<(u32, bool)>>);

    impl IrqLine for Lines {
        fn set_irq(&self, line: u32, level: bool) {
            self.0.lock().unwrap().push((line, level));
        }
    }

    fn set(rtc: &Rtc, index: u8, v: u8) {
        use trapline_bus::BusDevice;
        let _ = rtc.write(0, 0x70, 0, &[index, v]);
    }

    /// On the real clock: the alarm (every second) pulses IRQ 8 and calls
    /// the alarm hook within a couple of seconds.
    #[test]
    fn alarm_pulses_irq8_and_signals() {
        let rtc = Arc::new(Rtc::new(CmosMemory {
            ram_below_4g: 1 << 20,
            ram_above_4g: 0,
            cpus: 1,
        }));
        let lines = Arc::new(Lines::default());
        let (tx, rx) = channel();
        let tx = Mutex::new(tx);
        let timer = RtcTimer::spawn(
            rtc.clone(),
            lines.clone(),
            Box::new(move || {
                let _ = tx.lock().unwrap().send(());
            }),
            Box::new(|| {}),
        )
        .unwrap();
        for r in [REG_SECONDS_ALARM, REG_MINUTES_ALARM, REG_HOURS_ALARM] {
            set(&rtc, r, 0xff);
        }
        set(&rtc, REG_B, B_24H | B_AIE);
        rx.recv_timeout(Duration::from_secs(30))
            .expect("an alarm within 30 s");
        drop(timer);
        let seen = lines.0.lock().unwrap().clone();
        assert!(seen.starts_with(&[(8, true), (8, false)]), "{seen:?}");
        assert_eq!(rtc.read_register(REG_C) & (C_IRQF | C_AF), C_IRQF | C_AF);
    }
}
