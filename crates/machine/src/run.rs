//! Running a machine: one thread per vCPU, a controller that waits for the
//! first vCPU to end (or the timeout), then kicks and joins the rest.
//!
//! ACPI S3 (a PM1a control write with the `_S3` sleep type) does not end a
//! vCPU thread: that vCPU reports [`StopReason::Suspend`] and parks, the
//! controller stops and parks the others the same way, sleeps until a wake
//! event (x86's `arch::sleep`), then sends each parked thread where its vCPU
//! resumes; the thread sets its registers itself and enters KVM_RUN again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use trapline_bus::{ExitSnapshot, StopReason};
use trapline_devices::virtio::NotifyWorker;
use trapline_kvm::{kick, run_vcpu, VcpuContext, VcpuEnd, VcpuFd};
use trapline_seccomp::{BpfProgram, ThreadKind};
use vmm_sys_util::signal::Killable;

use crate::arch::{self, ResumeAt};
use crate::kvm_stats::Snapshots;
use crate::stat::{MetricsLines, StatReport, VcpuStat};
use crate::SeccompMode;
use crate::{Machine, MachineError, Outcome};

/// How long the controller waits for kicked vCPUs before giving up.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often a vCPU that has not stopped yet is kicked again.
const REKICK: Duration = Duration::from_millis(20);
/// How long the controller waits for vCPU 0 to head into the guest before
/// it starts the deferred helpers anyway.
const FIRST_ENTRY_WAIT: Duration = Duration::from_secs(1);

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
    /// Each virtio disk's counters, in `--disk` order.
    pub virtio: Vec<crate::VirtioReadout>,
    /// The network card's counters (`--net`).
    pub virtio_net: Option<crate::NetReadout>,
}

impl Machine {
    /// Run until a device stops the VM, the guest dies, or the timeout
    /// expires. Every vCPU thread is joined before this returns.
    pub fn run(mut self) -> Result<RunReport, MachineError> {
        kick::install()?;
        let vcpu_filter = match self.seccomp {
            SeccompMode::Off => None,
            _ => Some(trapline_seccomp::filter(ThreadKind::Vcpu)?),
        };
        crate::footprint::marks::mark("vcpu filter compiled");
        // The ioeventfd path's worker, before the vCPUs can notify.
        let virtio_worker = self.virtio.spawn_worker(self.seccomp != SeccompMode::Off)?;
        let kvm_start = self.kvm_stats.as_ref().map(|k| k.snapshot());
        let started = Instant::now();
        crate::footprint::marks::mark("worker started");
        let (mut vcpus, ends_tx) = self.spawn_vcpus(vcpu_filter)?;
        // What the guest does not wait for starts once vCPU 0 is on its
        // way into the guest (crate::deferred).
        vcpus.wait_first_entry();
        let _helpers = match crate::deferred::start_all(std::mem::take(&mut self.deferred)) {
            Ok(h) => h,
            Err(e) => {
                vcpus.stop_all();
                return Err(e);
            }
        };
        self.spawn_console(&mut vcpus, ends_tx)?;
        // Start-up's garbage, returned while the guest runs.
        crate::footprint::release_free_heap();
        let main_filter = match self.seccomp {
            SeccompMode::All => match trapline_seccomp::filter(ThreadKind::VmmMain) {
                Ok(f) => Some(f),
                Err(e) => {
                    vcpus.stop_all();
                    return Err(e.into());
                }
            },
            _ => None,
        };
        // Opened now, read after the run: the main thread's filter allows
        // reading an open file but not opening one.
        let smaps = if self.measure_footprint {
            std::fs::File::open("/proc/self/smaps").ok()
        } else {
            None
        };
        lock_down_main_thread(main_filter, &mut vcpus)?;
        let deadline = self.timeout.map(|t| started + t);
        let mut metrics_lines = MetricsLines::default();
        let (outcome, resumes) = self.control(
            &mut vcpus,
            started,
            deadline,
            &mut metrics_lines,
            kvm_start.as_ref(),
        );
        let wall = started.elapsed();
        let first_run = vcpus.first_run.clone();
        self.wind_down(vcpus, virtio_worker, &mut metrics_lines, kvm_start.as_ref())?;
        let end = RunEnd {
            outcome: outcome.unwrap_or(Outcome::PowerOff),
            wall,
            resumes,
            cpu_at_first_run: first_run.get().copied(),
        };
        Ok(self.report(end, kvm_start.as_ref(), smaps))
    }

    /// Start one thread per vCPU. Also returns the sender the threads
    /// report their ends on, for the console thread.
    fn spawn_vcpus(
        &mut self,
        filter: Option<BpfProgram>,
    ) -> Result<(VcpuThreads, Sender<(usize, VcpuEnd)>), MachineError> {
        let (ends_tx, ends) = channel::<(usize, VcpuEnd)>();
        let fds = std::mem::take(&mut self.vcpus);
        let mut vcpus = VcpuThreads {
            stops: fds
                .iter()
                .map(|_| Arc::new(AtomicBool::new(false)))
                .collect(),
            threads: Vec::with_capacity(fds.len()),
            parked: vec![false; fds.len()],
            ends,
            resume_txs: Vec::with_capacity(fds.len()),
            suspending: Arc::new(AtomicBool::new(false)),
            first_run: Arc::default(),
        };
        for (index, vcpu) in fds.into_iter().enumerate() {
            let (resume_tx, resume_rx) = channel::<ResumeAt>();
            vcpus.resume_txs.push(resume_tx);
            let mut ctx = self.vcpu_context(index, vcpus.stops[index].clone());
            // The clock offset is read here: the vCPU thread's filter allows no attribute reads.
            ctx.exit_stamps = self
                .exit_stamps
                .map(|gpa| trapline_kvm::StampMailbox::new(&vcpu, gpa));
            let thread = VcpuThread {
                vcpu,
                ctx,
                filter: filter.clone(),
                first_run: vcpus.first_run.clone(),
                controller: std::thread::current(),
                suspending: vcpus.suspending.clone(),
                resume_rx,
                ends: ends_tx.clone(),
            };
            let spawned = std::thread::Builder::new()
                .name(format!("vcpu{index}"))
                .spawn(move || thread.run());
            match spawned {
                Ok(t) => vcpus.threads.push(Some(t)),
                Err(source) => {
                    vcpus.stop_all();
                    return Err(MachineError::Host {
                        what: "spawning a vCPU thread",
                        source,
                    });
                }
            }
        }
        Ok((vcpus, ends_tx))
    }

    /// What vCPU `index` runs with.
    fn vcpu_context(&self, index: usize, stop: Arc<AtomicBool>) -> VcpuContext {
        VcpuContext {
            index,
            pio: self.pio.clone(),
            mmio: self.mmio.clone(),
            counters: self.counters[index].clone(),
            fast_port: self.fast_port,
            // Armed in spawn_vcpus, where the vCPU's fd is at hand.
            exit_stamps: None,
            ring: self.ring.clone(),
            stop,
            memory: Some(self.vm.memory().clone()),
            profile: self.profiles.as_ref().map(|p| p[index].clone()),
        }
    }

    /// Start the console thread, if the console reads input; it reports
    /// Ctrl-A x on `ends_tx`. Dropping the controller's own sender here
    /// leaves only the threads holding one.
    fn spawn_console(
        &self,
        vcpus: &mut VcpuThreads,
        ends_tx: Sender<(usize, VcpuEnd)>,
    ) -> Result<(), MachineError> {
        let Some(escape) = self.console_input else {
            return Ok(());
        };
        let filter = match self.seccomp {
            SeccompMode::Off => None,
            _ => Some(trapline_seccomp::filter(ThreadKind::Helper)?),
        };
        if let Err(source) =
            crate::console::spawn(self.uart.clone(), escape, ends_tx.clone(), filter)
        {
            vcpus.stop_all();
            return Err(MachineError::Host {
                what: "spawning the console thread",
                source,
            });
        }
        Ok(())
    }

    /// The controller's loop: wait for the first vCPU to end, the
    /// timeout, or Ctrl-A x; write metrics lines on the way; take the
    /// machine through S3 when the guest suspends. Returns how the run
    /// ended (`None`: every thread left without saying) and how many
    /// times it was woken from S3.
    fn control(
        &mut self,
        vcpus: &mut VcpuThreads,
        started: Instant,
        deadline: Option<Instant>,
        metrics_lines: &mut MetricsLines,
        kvm_start: Option<&Snapshots>,
    ) -> (Option<Outcome>, u32) {
        let mut resumes = 0u32;
        let mut next_metrics = self.metrics.as_ref().map(|m| started + m.interval);
        let mut outcome = None;
        let mut running = vcpus.threads.len();
        while outcome.is_none() && running > 0 {
            match vcpus.next_event(deadline, next_metrics) {
                // Ctrl-A x on the console.
                Ok((crate::console::CONSOLE_INDEX, _)) => outcome = Some(Outcome::PowerOff),
                Ok((index, VcpuEnd::Device(StopReason::Suspend))) => {
                    if vcpus.park(index) {
                        match self.sleep_and_resume(deadline, &vcpus.resume_txs) {
                            Some(o) => outcome = Some(o),
                            None => resumes += 1,
                        }
                    }
                }
                Ok((index, end)) => {
                    running -= 1;
                    vcpus.join(index);
                    outcome = Outcome::from_end(index, end);
                }
                Err(RecvTimeoutError::Timeout) if deadline.is_some_and(|d| Instant::now() >= d) => {
                    outcome = Some(Outcome::Timeout)
                }
                // A stop signal: end as a timeout does (the vCPUs are
                // stopped in wind_down), so the profile and the last
                // metrics line are still written.
                Err(RecvTimeoutError::Timeout) if crate::signals::received().is_some() => {
                    outcome = crate::signals::received().map(Outcome::Signal)
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.write_due_metrics(&mut next_metrics, metrics_lines, kvm_start);
                    vcpus.rekick_unparked();
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        (outcome, resumes)
    }

    /// The next metrics line, if it is due at `next`, and when the one
    /// after it is.
    fn write_due_metrics(
        &mut self,
        next: &mut Option<Instant>,
        lines: &mut MetricsLines,
        kvm_start: Option<&Snapshots>,
    ) {
        let now = Instant::now();
        if let (Some(m), Some(at)) = (self.metrics.as_mut(), next.as_mut()) {
            if now >= *at {
                let kvm = kvm_totals(self.kvm_stats.as_ref(), kvm_start);
                write_metrics(m, lines, self.profiles.as_deref(), kvm.as_ref(), false);
                *at += m.interval;
            }
        }
    }

    /// Stop and join every vCPU thread and the virtio worker, then write
    /// the last metrics line. A vCPU that would not stop is an error.
    fn wind_down(
        &mut self,
        mut vcpus: VcpuThreads,
        virtio_worker: Option<NotifyWorker>,
        metrics_lines: &mut MetricsLines,
        kvm_start: Option<&Snapshots>,
    ) -> Result<(), MachineError> {
        // Parked vCPU threads end when their resume channel closes.
        vcpus.resume_txs.clear();
        let stuck = vcpus.stop_all();
        drop(virtio_worker);
        if let Some(index) = stuck {
            return Err(MachineError::VcpuStuck(index));
        }
        if let Some(m) = self.metrics.as_mut() {
            let kvm = kvm_totals(self.kvm_stats.as_ref(), kvm_start);
            write_metrics(
                m,
                metrics_lines,
                self.profiles.as_deref(),
                kvm.as_ref(),
                true,
            );
        }
        Ok(())
    }

    /// What the run produced, read once every thread has left.
    fn report(
        &mut self,
        end: RunEnd,
        kvm_start: Option<&Snapshots>,
        mut smaps: Option<std::fs::File>,
    ) -> RunReport {
        let stat = self.stat_report(end.wall, kvm_start);
        let exits = self.counters.iter().map(|c| c.snapshot()).collect();
        let guest = self.guest_host_range();
        RunReport {
            outcome: end.outcome,
            exits,
            wall: end.wall,
            extension: self.extension.take(),
            cpu_at_first_run: end.cpu_at_first_run,
            vmm_rss_bytes: smaps
                .as_mut()
                .and_then(|f| crate::footprint::rss_outside_from(f, guest.0, guest.1)),
            stat,
            resumes: end.resumes,
            virtio: self.virtio.readout(),
            virtio_net: self.virtio.net_readout(),
        }
    }

    /// The exit profile with KVM's own counters beside it (only with
    /// `MachineConfig::profile`).
    fn stat_report(&self, wall: Duration, kvm_start: Option<&Snapshots>) -> Option<StatReport> {
        let (kvm_vm, mut kvm_vcpus) = match (&self.kvm_stats, kvm_start) {
            (Some(k), Some(start)) => {
                let (vm, vcpus) = k.deltas(start, &k.snapshot());
                (vm, vcpus.into_iter().map(Some).collect())
            }
            _ => (
                Err("KVM's statistics were not opened".to_string()),
                Vec::new(),
            ),
        };
        self.profiles.as_ref().map(|profiles| StatReport {
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
        })
    }

    /// Every vCPU is parked in S3: sleep until a wake event, then send
    /// each vCPU where it resumes (the architecture's: arm64 has no S3).
    /// Returns the outcome if the run ends instead.
    fn sleep_and_resume(
        &self,
        deadline: Option<Instant>,
        resume_txs: &[Sender<ResumeAt>],
    ) -> Option<Outcome> {
        arch::sleep_and_resume(&self.platform, self.vm.memory(), deadline, resume_txs)
    }
}

/// How the run ended, as the controller saw it.
struct RunEnd {
    outcome: Outcome,
    wall: Duration,
    resumes: u32,
    cpu_at_first_run: Option<Duration>,
}

/// From here on the main thread only waits, kicks, joins and reports: no
/// new threads, files or VMs.
fn lock_down_main_thread(
    filter: Option<BpfProgram>,
    vcpus: &mut VcpuThreads,
) -> Result<(), MachineError> {
    if let Some(f) = filter {
        if let Err(e) = trapline_seccomp::install_program(ThreadKind::VmmMain, &f) {
            vcpus.stop_all();
            return Err(e.into());
        }
    }
    Ok(())
}

/// The running vCPU threads, and what the controller holds to reach them.
struct VcpuThreads {
    /// Each vCPU's stop flag.
    stops: Vec<Arc<AtomicBool>>,
    /// Each vCPU's thread, until joined.
    threads: Vec<Option<JoinHandle<()>>>,
    /// Which vCPUs are parked for S3.
    parked: Vec<bool>,
    /// Where the threads report how they ended.
    ends: Receiver<(usize, VcpuEnd)>,
    /// Where each parked vCPU is told to resume.
    resume_txs: Vec<Sender<ResumeAt>>,
    /// Set while the machine is suspending or asleep: a vCPU stopped
    /// then parks instead of ending.
    suspending: Arc<AtomicBool>,
    /// Process CPU time when vCPU 0 was about to enter KVM_RUN.
    first_run: Arc<OnceLock<Duration>>,
}

impl VcpuThreads {
    /// Wait until vCPU 0 is about to enter the guest (it sets
    /// `first_run` first thing on its thread), for at most
    /// [`FIRST_ENTRY_WAIT`] or until its thread has already ended.
    fn wait_first_entry(&self) {
        let give_up = Instant::now() + FIRST_ENTRY_WAIT;
        while self.first_run.get().is_none() {
            let now = Instant::now();
            let ended = self
                .threads
                .first()
                .and_then(Option::as_ref)
                .is_none_or(JoinHandle::is_finished);
            if now >= give_up || ended {
                return;
            }
            std::thread::park_timeout(give_up - now);
        }
    }

    /// The next end a thread reports, or a timeout at whichever comes
    /// first: the deadline, the next metrics line, re-kicking vCPUs not
    /// yet parked for S3, looking for a stop signal (a signal handler
    /// cannot send on the channel: see crate::signals).
    fn next_event(
        &self,
        deadline: Option<Instant>,
        next_metrics: Option<Instant>,
    ) -> Result<(usize, VcpuEnd), RecvTimeoutError> {
        if crate::signals::received().is_some() {
            return Err(RecvTimeoutError::Timeout);
        }
        let rekick = self
            .suspending
            .load(Ordering::Acquire)
            .then(|| Instant::now() + REKICK);
        let signal_poll = crate::signals::watching().then(|| Instant::now() + crate::signals::POLL);
        let wake = [deadline, next_metrics, rekick, signal_poll]
            .into_iter()
            .flatten()
            .min();
        match wake {
            Some(w) => self
                .ends
                .recv_timeout(w.saturating_duration_since(Instant::now())),
            None => self.ends.recv().map_err(|_| RecvTimeoutError::Disconnected),
        }
    }

    /// vCPU `index` parked for S3. The first to park stops the others
    /// (they park too, seeing `suspending`). True once every vCPU still
    /// there is parked: nothing runs then, and the flags are set for the
    /// resume.
    fn park(&mut self, index: usize) -> bool {
        self.parked[index] = true;
        if !self.suspending.swap(true, Ordering::AcqRel) {
            for (i, s) in self.stops.iter().enumerate() {
                s.store(true, Ordering::Release);
                if let Some(t) = self.threads[i].as_ref().filter(|_| !self.parked[i]) {
                    let _ = t.kill(kick::kick_signal());
                }
            }
        }
        let all_parked = self
            .threads
            .iter()
            .zip(&self.parked)
            .all(|(t, p)| t.is_none() || *p);
        if all_parked {
            // A vCPU stopped after the resume must end, not park.
            self.suspending.store(false, Ordering::Release);
            self.parked.iter_mut().for_each(|p| *p = false);
            // Re-arm the stop flags here, while no vCPU runs, not on each
            // vCPU thread after its resume: a slow vCPU clearing its own
            // flag could wipe out the stop of a VM that a faster one
            // already ended, and then never stop.
            for s in &self.stops {
                s.store(false, Ordering::Release);
            }
        }
        all_parked
    }

    /// Kick again every vCPU not yet parked, while the machine suspends.
    fn rekick_unparked(&self) {
        if self.suspending.load(Ordering::Acquire) {
            for (t, _) in self.threads.iter().zip(&self.parked).filter(|(_, p)| !**p) {
                if let Some(t) = t {
                    let _ = t.kill(kick::kick_signal());
                }
            }
        }
    }

    /// Join vCPU `index`'s thread, which has ended.
    fn join(&mut self, index: usize) {
        if let Some(t) = self.threads[index].take() {
            let _ = t.join();
        }
    }

    /// Stop every vCPU still running: set its flag, kick it, and join it,
    /// re-kicking until it ends. Returns the index of a vCPU that would
    /// not stop.
    fn stop_all(&mut self) -> Option<usize> {
        for s in &self.stops {
            s.store(true, Ordering::Release);
        }
        let give_up = Instant::now() + STOP_GRACE;
        while self.threads.iter().any(Option::is_some) {
            for t in self.threads.iter().flatten() {
                // ESRCH (the thread already left) is fine.
                let _ = t.kill(kick::kick_signal());
            }
            match self.ends.recv_timeout(REKICK) {
                Ok((index, _)) => {
                    if let Some(t) = self.threads.get_mut(index).and_then(Option::take) {
                        let _ = t.join();
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    for t in self.threads.iter_mut() {
                        if let Some(t) = t.take() {
                            let _ = t.join();
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) if Instant::now() >= give_up => {
                    return self.threads.iter().position(Option::is_some);
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        None
    }
}

/// What one vCPU thread owns.
struct VcpuThread {
    vcpu: VcpuFd,
    ctx: VcpuContext,
    filter: Option<BpfProgram>,
    first_run: Arc<OnceLock<Duration>>,
    /// The controller's thread, unparked once `first_run` is set.
    controller: std::thread::Thread,
    suspending: Arc<AtomicBool>,
    resume_rx: Receiver<ResumeAt>,
    ends: Sender<(usize, VcpuEnd)>,
}

impl VcpuThread {
    /// The thread's body: arm the kick, install the filter, run (through
    /// any S3 sleeps) and report how it ended.
    fn run(mut self) {
        kick::arm(&mut self.vcpu);
        if self.ctx.index == 0 {
            crate::footprint::marks::mark("first KVM_RUN");
            let _ = self.first_run.set(crate::footprint::process_cpu_time());
            self.controller.unpark();
        }
        let end = match self
            .filter
            .take()
            .map(|f| trapline_seccomp::install_program(ThreadKind::Vcpu, &f))
        {
            Some(Err(e)) => VcpuEnd::Unhandled {
                what: format!("seccomp: {e}"),
            },
            _ => run_with_sleeps(
                &mut self.vcpu,
                &self.ctx,
                &self.suspending,
                &self.resume_rx,
                &self.ends,
            ),
        };
        kick::disarm();
        // The controller may already have gone (it gave up on a stuck
        // vCPU); nothing to tell then.
        let _ = self.ends.send((self.ctx.index, end));
    }
}

/// A vCPU thread's life: run until something ends it; when the machine
/// suspends (this vCPU asked for S3, or was stopped while `suspending`),
/// report [`StopReason::Suspend`], wait for where to resume, set the vCPU
/// there and run again. A closed resume channel ends the thread.
fn run_with_sleeps(
    vcpu: &mut VcpuFd,
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
        if let Err(e) = arch::resume(vcpu, at) {
            return VcpuEnd::Unhandled {
                what: format!("resuming from S3: {e}"),
            };
        }
    }
}

/// Append one metrics line (a write error is reported once on stderr and
/// the run goes on: metrics must not end a guest).
/// KVM's counters that grew since the run began (VM and vCPUs summed), for
/// a metrics line; `None` without KVM's statistics.
fn kvm_totals(
    kvm: Option<&crate::kvm_stats::KvmStats>,
    start: Option<&Snapshots>,
) -> Option<std::collections::BTreeMap<String, u64>> {
    Some(kvm?.totals_since(start?))
}

fn write_metrics(
    sink: &mut crate::config::MetricsSink,
    lines: &mut MetricsLines,
    profiles: Option<&[Arc<trapline_bus::ExitProfile>]>,
    kvm: Option<&std::collections::BTreeMap<String, u64>>,
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
        .write_all(lines.line(ms, &snaps, kvm, final_line).as_bytes())
    {
        if !std::mem::replace(&mut lines.write_failed, true) {
            eprintln!(
                "trapline: warning: writing a metrics line failed: {}",
                crate::words::io(&e)
            );
        }
    }
}
