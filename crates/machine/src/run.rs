//! Running a machine: one thread per vCPU, a controller that waits for the
//! first vCPU to end (or the timeout), then kicks and joins the rest.
//!
//! ACPI S3 (a PM1a control write with the `_S3` sleep type) does not end a
//! vCPU thread: that vCPU reports [`StopReason::Suspend`] and parks, the
//! controller stops and parks the others the same way, sleeps until a wake
//! event ([`crate::sleep`]), then sends each parked thread where its vCPU
//! resumes; the thread sets its registers itself and enters KVM_RUN again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use trapline_bus::{ExitSnapshot, StopReason};
use trapline_kvm::{kick, resume::resume, run_vcpu, ResumeAt, VcpuContext, VcpuEnd};
use vmm_sys_util::signal::Killable;

use crate::sleep::{self, SleepEnd, Sleeper};
use crate::stat::{MetricsLines, StatReport, VcpuStat};
use crate::SeccompMode;
use crate::{Machine, MachineError, Outcome};
use trapline_seccomp::ThreadKind;

/// How long the controller waits for kicked vCPUs before giving up.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often a vCPU that has not stopped yet is kicked again.
const REKICK: Duration = Duration::from_millis(20);

/// What a run produced.
pub struct RunReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Each vCPU's exit counters at the end.
    pub exits: Vec<ExitSnapshot>,
    /// Wall time from starting the vCPU threads to the outcome.
    pub wall: Duration,
    /// What the config's extension installed, handed back for reading
    /// (see [`crate::MachineExtension`]); `None` without one.
    pub extension: Option<crate::ExtensionHandle>,
    /// Process CPU time (all threads, since exec) when vCPU 0 was about to
    /// enter KVM_RUN for the first time.
    pub cpu_at_first_run: Option<Duration>,
    /// Resident memory of the process outside guest RAM, after the run
    /// (only with `MachineConfig::measure_footprint`).
    pub vmm_rss_bytes: Option<u64>,
    /// The exit profile (only with `MachineConfig::profile`).
    pub stat: Option<StatReport>,
    /// How many times the guest suspended to S3 and was woken.
    pub resumes: u32,
    /// Each virtio device's counters, in `--disk` order.
    pub virtio: Vec<crate::VirtioReadout>,
}

impl Machine {
    /// Run until a device stops the VM, the guest dies, or the timeout
    /// expires. Every vCPU thread is joined before this returns.
    pub fn run(mut self) -> Result<RunReport, MachineError> {
        kick::install()?;
        let (tx, rx) = channel::<(usize, VcpuEnd)>();
        let stops: Vec<Arc<AtomicBool>> = self
            .vcpus
            .iter()
            .map(|_| Arc::new(AtomicBool::new(false)))
            .collect();
        let mut threads: Vec<Option<JoinHandle<()>>> = Vec::with_capacity(self.vcpus.len());
        // Built once here (compiling BPF allocates), installed by each vCPU
        // thread right before its first KVM_RUN.
        let vcpu_filter = match self.seccomp {
            SeccompMode::Off => None,
            _ => Some(trapline_seccomp::filter(ThreadKind::Vcpu)?),
        };
        let main_filter = match self.seccomp {
            SeccompMode::All => Some(trapline_seccomp::filter(ThreadKind::VmmMain)?),
            _ => None,
        };
        // The ioeventfd path's worker, before the vCPUs can notify.
        let virtio_worker = self.virtio.spawn_worker(self.seccomp != SeccompMode::Off)?;
        let first_run: Arc<std::sync::OnceLock<Duration>> = Arc::default();
        // Set while the machine is suspending or asleep: a vCPU stopped
        // then parks instead of ending.
        let suspending = Arc::new(AtomicBool::new(false));
        let mut resume_txs: Vec<Sender<ResumeAt>> = Vec::with_capacity(self.vcpus.len());
        let kvm_start = self.kvm_stats.as_ref().map(|k| k.snapshot());
        let started = Instant::now();
        for (index, mut vcpu) in self.vcpus.drain(..).enumerate() {
            let ctx = VcpuContext {
                index,
                pio: self.pio.clone(),
                mmio: self.mmio.clone(),
                counters: self.counters[index].clone(),
                fast_port: self.fast_port,
                ring: self.ring.clone(),
                stop: stops[index].clone(),
                memory: Some(self.vm.memory().clone()),
                profile: self.profiles.as_ref().map(|p| p[index].clone()),
            };
            let tx = tx.clone();
            let filter = vcpu_filter.clone();
            let first_run = first_run.clone();
            let suspending = suspending.clone();
            let (resume_tx, resume_rx) = channel::<ResumeAt>();
            resume_txs.push(resume_tx);
            let spawned = std::thread::Builder::new()
                .name(format!("vcpu{index}"))
                .spawn(move || {
                    kick::arm(&mut vcpu);
                    if index == 0 {
                        let _ = first_run.set(crate::footprint::process_cpu_time());
                    }
                    let end = match filter
                        .map(|f| trapline_seccomp::install_program(ThreadKind::Vcpu, &f))
                    {
                        Some(Err(e)) => VcpuEnd::Unhandled {
                            what: format!("seccomp: {e}"),
                        },
                        _ => run_with_sleeps(&mut vcpu, &ctx, &suspending, &resume_rx, &tx),
                    };
                    kick::disarm();
                    // The controller may already have gone (it gave up on a
                    // stuck vCPU); nothing to tell then.
                    let _ = tx.send((index, end));
                });
            match spawned {
                Ok(t) => threads.push(Some(t)),
                Err(source) => {
                    stop_all(&stops, &mut threads, &rx);
                    return Err(MachineError::Host {
                        what: "spawning a vCPU thread",
                        source,
                    });
                }
            }
        }
        if let Some(escape) = self.console_input {
            let filter = match self.seccomp {
                SeccompMode::Off => None,
                _ => Some(trapline_seccomp::filter(ThreadKind::Helper)?),
            };
            if let Err(source) =
                crate::console::spawn(self.uart.clone(), escape, tx.clone(), filter)
            {
                stop_all(&stops, &mut threads, &rx);
                return Err(MachineError::Host {
                    what: "spawning the console thread",
                    source,
                });
            }
        }
        drop(tx);
        // Opened now, read after the run: the main thread's filter allows
        // reading an open file but not opening one.
        let mut smaps = if self.measure_footprint {
            std::fs::File::open("/proc/self/smaps").ok()
        } else {
            None
        };
        if let Some(f) = main_filter {
            // From here on the main thread only waits, kicks, joins and
            // reports: no new threads, files or VMs.
            if let Err(e) = trapline_seccomp::install_program(ThreadKind::VmmMain, &f) {
                stop_all(&stops, &mut threads, &rx);
                return Err(e.into());
            }
        }

        let deadline = self.timeout.map(|t| started + t);
        let mut parked = vec![false; threads.len()];
        let mut resumes = 0u32;
        let mut metrics_lines = MetricsLines::default();
        let mut next_metrics = self.metrics.as_ref().map(|m| started + m.interval);
        let mut outcome = None;
        let mut running = threads.len();
        while outcome.is_none() && running > 0 {
            // Wake for whichever comes first: a vCPU ending, the timeout,
            // the next metrics line, re-kicking vCPUs not yet parked for S3.
            let rekick = suspending
                .load(Ordering::Acquire)
                .then(|| Instant::now() + REKICK);
            let wake = [deadline, next_metrics, rekick].into_iter().flatten().min();
            let next = match wake {
                Some(w) => rx.recv_timeout(w.saturating_duration_since(Instant::now())),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match next {
                // Ctrl-A x on the console.
                Ok((crate::console::CONSOLE_INDEX, _)) => outcome = Some(Outcome::PowerOff),
                Ok((index, VcpuEnd::Device(StopReason::Suspend))) => {
                    parked[index] = true;
                    if !suspending.swap(true, Ordering::AcqRel) {
                        // The first vCPU to ask: stop the others (they
                        // park too, seeing `suspending`).
                        for (i, s) in stops.iter().enumerate() {
                            s.store(true, Ordering::Release);
                            if let Some(t) = threads[i].as_ref().filter(|_| !parked[i]) {
                                let _ = t.kill(kick::kick_signal());
                            }
                        }
                    }
                    let all_parked = threads.iter().zip(&parked).all(|(t, p)| t.is_none() || *p);
                    if all_parked {
                        // Nothing runs now; a vCPU stopped after the resume
                        // must end, not park.
                        suspending.store(false, Ordering::Release);
                        parked.iter_mut().for_each(|p| *p = false);
                        // Re-arm the stop flags here, while no vCPU runs,
                        // not on each vCPU thread after its resume: a slow
                        // vCPU clearing its own flag could wipe out the
                        // stop of a VM that a faster one already ended, and
                        // then never stop.
                        for s in &stops {
                            s.store(false, Ordering::Release);
                        }
                        match self.sleep_and_resume(deadline, &resume_txs) {
                            Some(o) => outcome = Some(o),
                            None => resumes += 1,
                        }
                    }
                }
                Ok((index, end)) => {
                    running -= 1;
                    if let Some(t) = threads[index].take() {
                        let _ = t.join();
                    }
                    outcome = Outcome::from_end(index, end);
                }
                Err(RecvTimeoutError::Timeout) if deadline.is_some_and(|d| Instant::now() >= d) => {
                    outcome = Some(Outcome::Timeout)
                }
                Err(RecvTimeoutError::Timeout) => {
                    let now = Instant::now();
                    if let (Some(m), Some(at)) = (self.metrics.as_mut(), next_metrics.as_mut()) {
                        if now >= *at {
                            write_metrics(m, &mut metrics_lines, self.profiles.as_deref(), false);
                            *at += m.interval;
                        }
                    }
                    if suspending.load(Ordering::Acquire) {
                        for (t, _) in threads.iter().zip(&parked).filter(|(_, p)| !**p) {
                            if let Some(t) = t {
                                let _ = t.kill(kick::kick_signal());
                            }
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let wall = started.elapsed();
        // Parked vCPU threads end when their resume channel closes.
        drop(resume_txs);
        let stuck = stop_all(&stops, &mut threads, &rx);
        drop(virtio_worker);
        let outcome = outcome.unwrap_or(Outcome::PowerOff);
        if let Some(index) = stuck {
            return Err(MachineError::VcpuStuck(index));
        }
        if let Some(m) = self.metrics.as_mut() {
            write_metrics(m, &mut metrics_lines, self.profiles.as_deref(), true);
        }
        let (kvm_vm, mut kvm_vcpus) = match (&self.kvm_stats, &kvm_start) {
            (Some(k), Some(start)) => {
                let (vm, vcpus) = k.deltas(start, &k.snapshot());
                (vm, vcpus.into_iter().map(Some).collect())
            }
            _ => (
                Err("KVM's statistics were not opened".to_string()),
                Vec::new(),
            ),
        };
        let stat = self.profiles.as_ref().map(|profiles| StatReport {
            wall,
            tsc_khz: self.tsc_khz,
            vcpus: profiles
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let mut v = VcpuStat::from_snapshot(p.snapshot(), &self.pio, &self.mmio);
                    if let Some(k) = kvm_vcpus.get_mut(i).and_then(Option::take) {
                        v.kvm = k;
                    }
                    v
                })
                .collect(),
            kvm_vm,
        });
        let exits = self.counters.iter().map(|c| c.snapshot()).collect();
        let guest = self.guest_host_range();
        Ok(RunReport {
            outcome,
            exits,
            wall,
            extension: self.extension.take(),
            cpu_at_first_run: first_run.get().copied(),
            vmm_rss_bytes: smaps
                .as_mut()
                .and_then(|f| crate::footprint::rss_outside_from(f, guest.0, guest.1)),
            stat,
            resumes,
            virtio: self.virtio.readout(),
        })
    }

    /// Every vCPU is parked in S3: sleep until a wake event, then send
    /// each vCPU where it resumes. Returns the outcome if the run ends
    /// instead (the deadline, or no waking vector to resume at).
    fn sleep_and_resume(
        &self,
        deadline: Option<Instant>,
        resume_txs: &[Sender<ResumeAt>],
    ) -> Option<Outcome> {
        let sleeper = Sleeper {
            pm: &self.platform.pm,
            rtc: &self.platform.rtc,
            rtc_alarms: &self.platform.rtc_alarms,
        };
        sleeper.enter();
        if sleeper.wait(deadline) == SleepEnd::Deadline {
            return Some(Outcome::TimeoutAsleep);
        }
        let vector = sleep::waking_vector(self.vm.memory(), self.platform.facs);
        if vector == 0 {
            // Firmware with no waking vector reboots; trapline has nothing
            // to reboot into.
            return Some(Outcome::Reset);
        }
        for (i, tx) in resume_txs.iter().enumerate() {
            // A thread that already ended has dropped its receiver.
            let _ = tx.send(sleep::resume_at(i, vector));
        }
        None
    }
}

/// A vCPU thread's life: run until something ends it; when the machine
/// suspends (this vCPU asked for S3, or was stopped while `suspending`),
/// report [`StopReason::Suspend`], wait for where to resume, set the vCPU
/// there and run again. A closed resume channel ends the thread.
fn run_with_sleeps(
    vcpu: &mut trapline_kvm::VcpuFd,
    ctx: &VcpuContext,
    suspending: &AtomicBool,
    resume_rx: &Receiver<ResumeAt>,
    tx: &Sender<(usize, VcpuEnd)>,
) -> VcpuEnd {
    loop {
        let end = run_vcpu(vcpu, ctx);
        let parks = match end {
            VcpuEnd::Device(StopReason::Suspend) => true,
            VcpuEnd::Stopped => suspending.load(Ordering::Acquire),
            _ => false,
        };
        if !parks {
            return end;
        }
        if tx
            .send((ctx.index, VcpuEnd::Device(StopReason::Suspend)))
            .is_err()
        {
            return VcpuEnd::Stopped;
        }
        let Ok(at) = resume_rx.recv() else {
            return VcpuEnd::Stopped;
        };
        if let Err(e) = resume(vcpu, at) {
            return VcpuEnd::Unhandled {
                what: format!("resuming from S3: {e}"),
            };
        }
    }
}

/// Append one metrics line (a write error is reported once on stderr and
/// the run goes on: metrics must not end a guest).
fn write_metrics(
    sink: &mut crate::config::MetricsSink,
    lines: &mut MetricsLines,
    profiles: Option<&[Arc<trapline_bus::ExitProfile>]>,
    final_line: bool,
) {
    use std::io::Write as _;
    let snaps: Vec<_> = profiles
        .unwrap_or(&[])
        .iter()
        .map(|p| p.snapshot())
        .collect();
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    if let Err(e) = sink
        .file
        .write_all(lines.line(ms, &snaps, final_line).as_bytes())
    {
        eprintln!("trapline: warning: writing a metrics line failed: {e}");
    }
}

/// Stop every vCPU still running: set its flag, kick it, and join it, re-
/// kicking until it ends. Returns the index of a vCPU that would not stop.
fn stop_all(
    stops: &[Arc<AtomicBool>],
    threads: &mut [Option<JoinHandle<()>>],
    rx: &std::sync::mpsc::Receiver<(usize, VcpuEnd)>,
) -> Option<usize> {
    for s in stops {
        s.store(true, Ordering::Release);
    }
    let give_up = Instant::now() + STOP_GRACE;
    while threads.iter().any(Option::is_some) {
        for t in threads.iter().flatten() {
            // ESRCH (the thread already left) is fine.
            let _ = t.kill(kick::kick_signal());
        }
        match rx.recv_timeout(REKICK) {
            Ok((index, _)) => {
                if let Some(t) = threads.get_mut(index).and_then(Option::take) {
                    let _ = t.join();
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                for t in threads.iter_mut() {
                    if let Some(t) = t.take() {
                        let _ = t.join();
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) if Instant::now() >= give_up => {
                return threads.iter().position(Option::is_some);
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
    None
}
