//! Runs the lab: fresh VMs per repeat, scenarios interleaved across
//! repeats, every result checked, everything gathered into a Report.

use std::collections::BTreeMap;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trapline_abi::{ResultStatus, UcallKind, PROBE_READ_VALUE};
use trapline_devices::probe::ProbeRegister;
use trapline_devices::ucall::{KernelExitCounts, KERNEL_EXIT_COUNTERS};
use trapline_exit::{ExitKind, ExitSnapshot, HandlingTotals};
use trapline_machine::{
    HostKvm, LabFixtures, Machine, MachineConfig, Outcome, RunReport, SeccompMode, SerialOutput,
};
use trapline_report::{Report, RunConfig, Sample, ScenarioResult, ToolInfo};

use crate::catalog::{self, Check, MachineKind, Scenario};
use crate::doorbell::Consumer;
use crate::floor::{self, FloorKind};
use crate::progress::Progress;
use crate::pump::{self, PumpResult};
use trapline_report::ladder::{self, Rung};

/// How to run the lab.
#[derive(Clone, Debug)]
pub struct LabOptions {
    /// Fresh-VM repeats per scenario.
    pub repeat: u32,
    /// TSC cycles a timed batch must last.
    pub goal_cycles: u64,
    /// First batch size.
    pub min_iters: u64,
    /// Largest batch.
    pub max_iters: u64,
    /// Untimed iterations before the batches.
    pub warmup: u64,
    /// Scenario filter (comma-separated globs), if any.
    pub only: Option<String>,
    /// Whether --quick chose the above.
    pub quick: bool,
    /// Longest a probe VM may run.
    pub vm_timeout: Duration,
    /// Longest the hypercall VM may run before the hypercall is declared
    /// not to return.
    pub hypercall_timeout: Duration,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Seccomp filters on the VMs' vCPU threads (the lab's main thread goes
    /// on building VMs, so it stays unfiltered).
    pub seccomp: bool,
    /// The trapline binary, to measure its own footprint with fresh
    /// `trapline run` processes (`None`: not measured).
    pub footprint_exe: Option<std::path::PathBuf>,
    /// QEMU, to run the same probe on as a peer (`--peer qemu`).
    pub peer: Option<crate::peer::Qemu>,
    /// Profile trapline's VMs (`--stat`'s machinery): each scenario gets
    /// trapline's own handling time per exit, and each repeat one more VM
    /// without the profile gives its overhead.
    pub stat: bool,
}

/// Per-scenario accumulation across repeats.
#[derive(Default)]
struct Acc {
    samples: Vec<Sample>,
    failure: Option<String>,
    unsupported: Option<String>,
    check: Option<String>,
}

/// One timed batch as the guest reported it.
#[derive(Clone, Debug)]
struct Batch {
    iterations: u64,
    cycles: u64,
    value: u64,
    status: u64,
    exits: ExitSnapshot,
    /// trapline's handling of the exits between BEGIN and RESULT (profile on).
    handling: Option<HandlingTotals>,
    /// KVM's own exit counters over the same window (profile on, and a
    /// kernel with KVM's stats fd).
    kernel: Option<KernelExitCounts>,
}

/// Everything one probe VM produced, by scenario id.
struct ProbeRun {
    batches: BTreeMap<u32, Vec<Batch>>,
    /// PCI functions the machine has on bus 0.
    functions: u64,
    /// Rings the consumer thread counted, per doorbell.
    doorbells: BTreeMap<&'static str, u64>,
    /// irqfd injections the guest acknowledged.
    injected: u64,
    /// Why injections stopped early.
    inject_error: Option<String>,
    run: RunReport,
    serial: String,
}

/// What a repeat runs, in some order.
#[derive(Clone, Debug)]
enum Unit {
    Probe(MachineKind, Vec<&'static Scenario>),
    /// One loop on one rung of the raw-KVM floor ladder.
    Floor(&'static Rung, FloorKind),
    /// The same probe on QEMU, for scenarios of one machine kind.
    Peer(MachineKind, Vec<&'static Scenario>),
    /// Main-machine scenarios on a VM without the exit profile, for the
    /// profile's own overhead (`stat-overhead`).
    Unprofiled(Vec<&'static Scenario>),
}

impl Unit {
    fn label(&self) -> String {
        match self {
            Unit::Probe(k, s) => format!("{k:?} VM, {} scenario(s)", s.len()),
            Unit::Floor(r, k) => format!("raw KVM floor {}: {}", r.vmm, k.name()),
            Unit::Peer(k, s) => format!("QEMU {k:?} VM, {} scenario(s)", s.len()),
            Unit::Unprofiled(s) => format!("unprofiled VM, {} scenario(s)", s.len()),
        }
    }
}

fn selected(opts: &LabOptions) -> Vec<&'static Scenario> {
    let mut v: Vec<&Scenario> = catalog::SCENARIOS
        .iter()
        .filter(|s| {
            opts.only
                .as_deref()
                .is_none_or(|p| catalog::matches(p, "trapline", s.name))
        })
        .collect();
    // Every net figure is over the noop baseline: keep it whenever anything
    // else of trapline's is measured.
    if !v.is_empty() && !v.iter().any(|s| s.name == "noop") {
        v.insert(0, catalog::find("noop").expect("noop is in the catalog"));
    }
    v
}

/// The ladder's (rung, loop) pairs selected, each rung with its noop
/// baseline whenever anything else of it is.
fn selected_floor(opts: &LabOptions) -> Vec<(&'static Rung, FloorKind)> {
    let mut v = Vec::new();
    for rung in &ladder::RUNGS {
        let mut kinds: Vec<FloorKind> = floor::ladder::kinds(rung)
            .into_iter()
            .filter(|k| {
                opts.only
                    .as_deref()
                    .is_none_or(|p| catalog::matches(p, rung.vmm, k.name()))
            })
            .collect();
        if !kinds.is_empty() && !kinds.contains(&FloorKind::Noop) {
            kinds.insert(0, FloorKind::Noop);
        }
        v.extend(kinds.into_iter().map(|k| (rung, k)));
    }
    v
}

/// The names `--list` prints: (vmm, name, group, path).
pub fn listing() -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    let mut v: Vec<_> = catalog::SCENARIOS
        .iter()
        .map(|s| ("trapline", s.name, s.group, s.path))
        .collect();
    for rung in &ladder::RUNGS {
        for k in floor::ladder::kinds(rung) {
            v.push((rung.vmm, k.name(), "floor", rung.what));
        }
    }
    v
}

/// The scenario the profile's overhead is measured on.
const STAT_OVERHEAD_SCENARIO: &str = trapline_report::derive::names::PIO_USER_OUT;

/// Run the lab and build its report.
pub fn run_lab(kvm: &HostKvm, opts: &LabOptions) -> Result<Report, String> {
    let started = Instant::now();
    let started_at = crate::time::rfc3339_now();
    let scenarios = selected(opts);
    let floors = selected_floor(opts);
    if scenarios.is_empty() && floors.is_empty() {
        return Err(format!(
            "--only {:?} matches no scenario; `trapline bench --list` shows them",
            opts.only.as_deref().unwrap_or("")
        ));
    }
    let mut acc: BTreeMap<&'static str, Acc> =
        scenarios.iter().map(|s| (s.name, Acc::default())).collect();
    let mut floor_acc: BTreeMap<(&'static str, &'static str), Acc> = floors
        .iter()
        .map(|(r, k)| ((r.vmm, k.name()), Acc::default()))
        .collect();
    let mut peer_acc: BTreeMap<&'static str, Acc> = BTreeMap::new();
    let peer_dir = std::env::temp_dir().join(format!("trapline-peer-{}", std::process::id()));
    let mut peer_units: Vec<(MachineKind, Vec<&'static Scenario>)> = Vec::new();
    if opts.peer.is_some() {
        for s in &scenarios {
            if crate::peer::not_applicable(s).is_none() {
                // QEMU needs one VM per vCPU count and APIC mode.
                let kind = match s.machine {
                    MachineKind::Smp | MachineKind::SmpX2apic => s.machine,
                    _ => MachineKind::Main,
                };
                match peer_units.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, v)) => v.push(s),
                    None => peer_units.push((kind, vec![s])),
                }
            }
        }
        std::fs::create_dir_all(&peer_dir).map_err(|e| format!("{}: {e}", peer_dir.display()))?;
    }
    // The peer with its CPU model chosen once, up front (QEMU may abort
    // with `-cpu host` on this host); if no model starts, every peer run
    // fails with the reason.
    let mut peer = opts.peer.clone();
    let mut peer_unusable: Option<String> = None;
    if let Some(q) = peer.as_mut().filter(|_| !peer_units.is_empty()) {
        if let Err(e) = q.select_cpu(&peer_dir, opts.vm_timeout) {
            peer_unusable = Some(e);
        }
    }
    let mut tsc_khz = 0u64;
    let mut hypercall_supported = true;

    let by_machine = |kind: MachineKind| -> Vec<&'static Scenario> {
        scenarios
            .iter()
            .copied()
            .filter(|s| s.machine == kind)
            .collect()
    };
    let main = by_machine(MachineKind::Main);
    // pio-user-out (with its noop baseline) once more per repeat on a VM
    // without the profile: the profile's overhead per user exit.
    let unprofiled: Vec<&'static Scenario> =
        if opts.stat && main.iter().any(|s| s.name == STAT_OVERHEAD_SCENARIO) {
            main.iter()
                .copied()
                .filter(|s| s.name == STAT_OVERHEAD_SCENARIO || s.name == "noop")
                .collect()
        } else {
            Vec::new()
        };
    let mut unprofiled_acc: BTreeMap<&'static str, Acc> = BTreeMap::new();
    let no_irqchip = by_machine(MachineKind::NoIrqchip);
    let hypercall = by_machine(MachineKind::Hypercall);
    let ecam_ro = by_machine(MachineKind::EcamRo);
    let smp = by_machine(MachineKind::Smp);
    let smp_x2apic = by_machine(MachineKind::SmpX2apic);
    let units_per_repeat = usize::from(!main.is_empty())
        + usize::from(!no_irqchip.is_empty())
        + usize::from(!hypercall.is_empty())
        + usize::from(!ecam_ro.is_empty())
        + usize::from(!smp.is_empty())
        + usize::from(!smp_x2apic.is_empty())
        + usize::from(!unprofiled.is_empty())
        + floors.len()
        + peer_units.len();
    let mut progress = Progress::new(opts.progress, units_per_repeat * opts.repeat as usize);

    for rep in 0..opts.repeat as usize {
        let mut units = Vec::new();
        if !main.is_empty() {
            // Rotate the order each repeat so slow drift hits every
            // scenario alike.
            let mut order = main.clone();
            let len = order.len();
            order.rotate_left(rep % len);
            units.push(Unit::Probe(MachineKind::Main, order));
        }
        if !no_irqchip.is_empty() {
            units.push(Unit::Probe(MachineKind::NoIrqchip, no_irqchip.clone()));
        }
        for (kind, list) in [
            (MachineKind::EcamRo, &ecam_ro),
            (MachineKind::Smp, &smp),
            (MachineKind::SmpX2apic, &smp_x2apic),
        ] {
            if !list.is_empty() {
                units.push(Unit::Probe(kind, list.clone()));
            }
        }
        if !hypercall.is_empty() && hypercall_supported {
            units.push(Unit::Probe(MachineKind::Hypercall, hypercall.clone()));
        }
        if !unprofiled.is_empty() {
            units.push(Unit::Unprofiled(unprofiled.clone()));
        }
        units.extend(floors.iter().map(|(r, k)| Unit::Floor(r, *k)));
        for (kind, list) in &peer_units {
            let mut order = list.clone();
            let len = order.len();
            order.rotate_left(rep % len);
            units.push(Unit::Peer(*kind, order));
        }
        let n = units.len();
        units.rotate_left(rep % n.max(1));
        for unit in units {
            progress.step(&format!(
                "repeat {}/{}: {}",
                rep + 1,
                opts.repeat,
                unit.label()
            ));
            match unit {
                Unit::Probe(kind, list) => {
                    let timeout = if kind == MachineKind::Hypercall {
                        opts.hypercall_timeout
                    } else {
                        opts.vm_timeout
                    };
                    match run_probe(kvm, kind, &list, opts, timeout) {
                        Ok(run) => {
                            if tsc_khz == 0 {
                                tsc_khz = run.tsc_khz;
                            }
                            if kind == MachineKind::Hypercall
                                && run.probe.run.outcome == Outcome::Timeout
                            {
                                hypercall_supported = false;
                            }
                            absorb(&mut acc, &list, &run.probe, opts);
                        }
                        Err(e) => {
                            for s in &list {
                                acc.entry(s.name)
                                    .or_default()
                                    .failure
                                    .get_or_insert(e.clone());
                            }
                        }
                    }
                }
                Unit::Unprofiled(list) => {
                    let unprofiled_opts = LabOptions {
                        stat: false,
                        ..opts.clone()
                    };
                    match run_probe(
                        kvm,
                        MachineKind::Main,
                        &list,
                        &unprofiled_opts,
                        opts.vm_timeout,
                    ) {
                        Ok(run) => absorb(&mut unprofiled_acc, &list, &run.probe, opts),
                        Err(e) => {
                            for s in &list {
                                unprofiled_acc
                                    .entry(s.name)
                                    .or_default()
                                    .failure
                                    .get_or_insert(e.clone());
                            }
                        }
                    }
                }
                Unit::Peer(kind, list) => {
                    if let Some(why) = &peer_unusable {
                        absorb_peer(&mut peer_acc, &list, Err(why.clone()));
                    } else if let Some(q) = &peer {
                        let mut append = cmdline(&list, opts);
                        if crate::peer::cpus_for(kind) > 1 {
                            append.push_str(" cpus=2");
                        }
                        if kind == MachineKind::SmpX2apic {
                            append.push_str(" x2apic=1");
                        }
                        let res = crate::peer::run_probe(
                            q,
                            &peer_dir,
                            &append,
                            crate::peer::cpus_for(kind),
                            opts.vm_timeout,
                        );
                        absorb_peer(&mut peer_acc, &list, res);
                    }
                }
                Unit::Floor(rung, kind) => {
                    let a = floor_acc.entry((rung.vmm, kind.name())).or_default();
                    let measured = floor::ladder::pieces(rung.vmm)
                        .ok_or_else(|| format!("no pieces for the rung {}", rung.vmm))
                        .and_then(|pieces| {
                            floor::measure_to_goal(
                                kvm.kvm(),
                                pieces,
                                kind,
                                opts.goal_cycles,
                                opts.min_iters,
                                opts.max_iters,
                            )
                        });
                    match measured {
                        Ok(s) => absorb_floor(a, kind, s),
                        Err(e) => {
                            a.failure.get_or_insert(e);
                        }
                    }
                }
            }
        }
    }
    progress.finish();

    let host = crate::host::collect(kvm, tsc_khz);
    let config = RunConfig {
        repeat: opts.repeat,
        goal_cycles: opts.goal_cycles,
        min_iters: opts.min_iters,
        max_iters: opts.max_iters,
        warmup: opts.warmup as u32,
        quick: opts.quick,
        only: opts.only.clone(),
        peer: opts.peer.as_ref().map(|q| format!("qemu ({})", q.version)),
        peer_cpu: peer
            .as_ref()
            .and_then(|q| q.cpu.as_ref())
            .map(|c| c.model.name().to_string()),
        peer_cpu_note: peer
            .as_ref()
            .and_then(|q| q.cpu.as_ref())
            .and_then(|c| c.fallback_note()),
    };
    let mut report = Report::new(
        ToolInfo::new("trapline", env!("CARGO_PKG_VERSION")),
        host,
        config,
    );
    report.started_at = started_at;
    for s in &scenarios {
        let a = acc.remove(s.name).unwrap_or_default();
        report.push(finish_result(
            ScenarioResult::new(s.name, s.group, s.path),
            a,
        ));
    }
    for (rung, k) in &floors {
        let a = floor_acc.remove(&(rung.vmm, k.name())).unwrap_or_default();
        let r =
            ScenarioResult::new(k.name(), "floor", floor::ladder::path(rung)).with_vmm(rung.vmm);
        report.push(finish_result(r, a));
    }
    for s in &unprofiled {
        let a = unprofiled_acc.remove(s.name).unwrap_or_default();
        let r = ScenarioResult::new(s.name, s.group, s.path)
            .with_vmm(trapline_report::derive::names::UNPROFILED_VMM);
        report.push(finish_result(r, a));
    }
    if opts.peer.is_some() {
        for s in &scenarios {
            let r = ScenarioResult::new(s.name, s.group, s.path).with_vmm("qemu");
            let r = match crate::peer::not_applicable(s) {
                Some(why) => r.unsupported(format!("n/a on QEMU: {why}")),
                None => finish_result(r, peer_acc.remove(s.name).unwrap_or_default()),
            };
            report.push(r);
        }
        let _ = std::fs::remove_dir_all(&peer_dir);
    }
    report.finish();
    add_peer_derived(&mut report);
    if let Some(exe) = &opts.footprint_exe {
        add_footprint(&mut report, exe, opts.repeat.clamp(3, 11));
    }
    report.wall_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// One QEMU run's results into the peer accumulators.
fn absorb_peer(
    acc: &mut BTreeMap<&'static str, Acc>,
    list: &[&'static Scenario],
    res: Result<String, String>,
) {
    let serial = match res {
        Ok(s) => s,
        Err(e) => {
            for s in list {
                acc.entry(s.name)
                    .or_default()
                    .failure
                    .get_or_insert(e.clone());
            }
            return;
        }
    };
    let results = crate::peer::parse(&serial);
    for s in list {
        let a = acc.entry(s.name).or_default();
        let Some(r) = results.get(s.name) else {
            a.failure
                .get_or_insert("no TRAPLINE-RESULT line from the probe on QEMU".into());
            continue;
        };
        match ResultStatus::from_raw(r.status) {
            Some(ResultStatus::Ok) => {}
            Some(ResultStatus::BadValue) if crate::peer::value_unchecked(s.name) => {
                a.check.get_or_insert("timed as an exit to QEMU's user space; nothing answers there, so the value read is all-ones".into());
            }
            Some(ResultStatus::BadValue) => {
                a.failure
                    .get_or_insert(format!("the probe read back {:#x} on QEMU", r.value));
            }
            _ => {
                a.unsupported
                    .get_or_insert("the probe could not run it on QEMU".into());
                continue;
            }
        }
        a.check.get_or_insert(
            "the guest's own checks (QEMU has no ucall port: exits are not counted)".into(),
        );
        a.samples.push(Sample::new(r.iterations, r.cycles));
    }
}

/// The user-exit premium both VMMs can be measured on alike: pci-testdev's
/// port I/O test without and with an ioeventfd (each VMM registers its
/// own); and each VMM's own cost per user exit over the raw-KVM floor.
fn add_peer_derived(report: &mut Report) {
    use trapline_report::derive::{difference, ratio};
    let raw = report
        .derived
        .iter()
        .find(|d| d.name == "raw-kvm:user-exit-premium")
        .cloned();
    let mut own = Vec::new();
    for vmm in ["trapline", "qemu"] {
        let Some(p) = difference(
            report,
            vmm,
            "pci-io-user-exit-premium",
            "portio-no-eventfd:pci-io",
            "portio-wildcard-eventfd:pci-io",
            "pci-testdev OUTB served in user space over the same OUTB served by an ioeventfd",
        ) else {
            continue;
        };
        if let Some(raw) = &raw {
            own.push(trapline_report::Derived {
                name: trapline_report::scenario_key(vmm, "own-cost-per-user-exit"),
                value: p.value - raw.value,
                unit: "cycles".into(),
                formula: format!("{} − raw-kvm:user-exit-premium", p.name),
                note: Some(
                    "what the VMM itself spends per exit to user space, over a bare KVM_RUN loop"
                        .into(),
                ),
            });
        }
        report.derived.push(p);
    }
    if let [t, q] = own.as_slice() {
        let r = ratio(
            "own-cost-ratio-trapline-vs-qemu",
            t,
            q,
            "trapline's own cost per user exit as a fraction of QEMU's (goal: at most 0.25)",
        );
        report.derived.extend(own.clone());
        report.derived.extend(r);
    } else {
        report.derived.extend(own);
    }
}

/// trapline's own cost, as derived values (goals from the hygiene issue;
/// Firecracker's published figures for scale).
fn add_footprint(report: &mut Report, exe: &std::path::Path, runs: u32) {
    let f = match crate::footprint::measure(exe, runs) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("trapline bench: warning: footprint not measured: {e}");
            return;
        }
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let cpu = median(f.iter().map(|x| x.cpu_ms_to_first_run).collect());
    let rss = median(f.iter().map(|x| x.rss_beyond_guest_mib).collect());
    report.derived.push(trapline_report::Derived {
        name: trapline_report::derive::VMM_CPU_TO_FIRST_KVM_RUN.into(),
        value: cpu,
        unit: "ms".into(),
        formula: format!(
            "median over {runs} `trapline run` processes: CPU time from exec to the first KVM_RUN"
        ),
        note: Some("goal: at most 3 CPU-ms (Firecracker promises 8)".into()),
    });
    report.derived.push(trapline_report::Derived {
        name: trapline_report::derive::VMM_RSS_BEYOND_GUEST.into(),
        value: rss,
        unit: "MiB".into(),
        formula: format!(
            "median over {runs} `trapline run` processes: resident memory outside guest RAM"
        ),
        note: Some("goal: at most 4 MiB (Firecracker promises 5)".into()),
    });
}

fn finish_result(mut r: ScenarioResult, a: Acc) -> ScenarioResult {
    if let Some(c) = a.check {
        r = r.with_check(c);
    }
    r = r.with_samples(a.samples);
    if let Some(f) = a.failure {
        r = r.failed(f);
    } else if let Some(u) = a.unsupported {
        r = r.unsupported(u);
    }
    r
}

struct ProbeOutcome {
    probe: ProbeRun,
    tsc_khz: u64,
}

fn cmdline(list: &[&Scenario], opts: &LabOptions) -> String {
    let ids: Vec<String> = list
        .iter()
        .filter_map(|s| trapline_abi::scenario_by_name(s.name))
        .map(|a| a.id.to_string())
        .collect();
    format!(
        "s={} goal={} min={} max={} warmup={}",
        ids.join(","),
        opts.goal_cycles,
        opts.min_iters,
        opts.max_iters,
        opts.warmup
    )
}

fn run_probe(
    kvm: &HostKvm,
    kind: MachineKind,
    list: &[&Scenario],
    opts: &LabOptions,
    timeout: Duration,
) -> Result<ProbeOutcome, String> {
    let (tx, rx) = channel();
    let serial = Arc::new(Mutex::new(Vec::new()));
    let mut cfg = MachineConfig::new(trapline_guest::PROBE.to_vec(), "probe");
    cfg.append = cmdline(list, opts);
    if matches!(kind, MachineKind::Smp | MachineKind::SmpX2apic) {
        cfg.vcpus = 2;
        cfg.append.push_str(" cpus=2");
        if kind == MachineKind::SmpX2apic {
            cfg.append.push_str(" x2apic=1");
        }
    }
    // Each machine gets the least it needs: no scenario uses the PIT, and
    // the HLT scenario needs no interrupt controller at all.
    cfg.pit = false;
    if kind == MachineKind::NoIrqchip {
        cfg.irqchip = trapline_machine::Irqchip::None;
    }
    cfg.serial = SerialOutput::Capture(serial.clone());
    cfg.timeout = Some(timeout);
    cfg.ucall_sink = Some(tx);
    cfg.lab = LabFixtures::all();
    // The exit profile gives trapline's own handling time per exit,
    // measured directly (`--no-stat` measures without it).
    cfg.profile = opts.stat;
    cfg.pci_testdev = true;
    cfg.ecam_ro = kind == MachineKind::EcamRo;
    cfg.seccomp = if opts.seccomp {
        SeccompMode::VcpusOnly
    } else {
        SeccompMode::Off
    };
    let machine = Machine::build(kvm, cfg).map_err(|e| format!("building the probe VM: {e}"))?;
    let handles = machine
        .lab_handles()
        .map_err(|e| format!("probe VM handles: {e}"))?;
    let consumer = Consumer::spawn(handles.doorbells, opts.seccomp)
        .map_err(|e| format!("doorbell consumer: {e}"))?;
    let pump = match pump::spawn(rx, handles.irqfd, handles.memory, opts.seccomp) {
        Ok(p) => p,
        Err(e) => {
            consumer.finish();
            return Err(format!("ucall pump: {e}"));
        }
    };
    let tsc_khz = machine.tsc_khz().unwrap_or(0) as u64;
    let functions = machine.pci().bus.devfns().count() as u64;
    let run = machine.run();
    // The machine is gone (its ucall sender with it), so the pump ends.
    let doorbells = consumer.finish();
    let pumped = pump.join().unwrap_or_default();
    let run = run.map_err(|e| format!("running the probe VM: {e}"))?;
    let serial =
        String::from_utf8_lossy(&serial.lock().unwrap_or_else(|e| e.into_inner())).into_owned();
    Ok(ProbeOutcome {
        probe: collect(pumped, doorbells, run, serial, functions),
        tsc_khz,
    })
}

/// Pair BEGIN and RESULT ucalls into batches with their exit counts.
fn collect(
    pumped: PumpResult,
    doorbells: BTreeMap<&'static str, u64>,
    run: RunReport,
    serial: String,
    functions: u64,
) -> ProbeRun {
    type Start = (
        ExitSnapshot,
        Option<HandlingTotals>,
        Option<KernelExitCounts>,
    );
    let mut begun: BTreeMap<(usize, u64), Start> = BTreeMap::new();
    let mut batches: BTreeMap<u32, Vec<Batch>> = BTreeMap::new();
    for ev in pumped.events {
        match ev.kind {
            UcallKind::Begin => {
                begun.insert((ev.vcpu, ev.args[0]), (ev.exits, ev.handling, ev.kernel));
            }
            UcallKind::Result => {
                // A scenario the guest cannot run reports Unsupported with
                // no BEGIN (and so no exits to count).
                let (exits, handling, kernel) = match begun.remove(&(ev.vcpu, ev.args[0])) {
                    Some((start, h0, k0)) => (
                        ev.exits.since(&start),
                        ev.handling.zip(h0).map(|(h1, h0)| h1.since(&h0)),
                        ev.kernel
                            .zip(k0)
                            .map(|(k1, k0)| std::array::from_fn(|i| k1[i].wrapping_sub(k0[i]))),
                    ),
                    None => (ExitSnapshot::default(), None, None),
                };
                batches.entry(ev.args[0] as u32).or_default().push(Batch {
                    iterations: ev.args[1],
                    cycles: ev.args[2],
                    value: ev.args[3],
                    status: ev.args[4],
                    exits,
                    handling,
                    kernel,
                });
            }
            _ => {}
        }
    }
    ProbeRun {
        batches,
        functions,
        doorbells,
        injected: pumped.injected,
        inject_error: pumped.inject_error,
        run,
        serial,
    }
}

/// Exits during a batch, minus the RESULT ucall's own OUT.
fn loop_exits(b: &Batch) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for k in ExitKind::ALL {
        let mut n = b.exits.get(k);
        if k == ExitKind::PioWrite {
            n = n.saturating_sub(1);
        }
        if n != 0 {
            m.insert(k.name().to_string(), n);
        }
    }
    m
}

/// KVM's own exit counters that moved during a batch, minus the RESULT
/// ucall's own exit from `exits` (its BEGIN was counted before the first
/// snapshot). Where the RESULT OUT also counts as an `io_exits` (not on
/// hosts whose KVM emulates the guest's I/O), that counter reads one high
/// per batch, i.e. 1/N per iteration.
fn kernel_exits(b: &Batch) -> BTreeMap<String, u64> {
    let Some(k) = b.kernel else {
        return BTreeMap::new();
    };
    KERNEL_EXIT_COUNTERS
        .iter()
        .zip(k)
        .map(|(name, n)| {
            let n = if *name == "exits" {
                n.saturating_sub(1)
            } else {
                n
            };
            (name.to_string(), n)
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

fn absorb(
    acc: &mut BTreeMap<&'static str, Acc>,
    list: &[&Scenario],
    run: &ProbeRun,
    opts: &LabOptions,
) {
    let good_end = run.run.outcome == Outcome::DebugExit(0);
    for s in list {
        let a = acc.entry(s.name).or_default();
        let id = trapline_abi::scenario_by_name(s.name)
            .map(|x| x.id)
            .unwrap_or(u32::MAX);
        let Some(last) = run.batches.get(&id).and_then(|b| b.last()) else {
            // The hypercall VM runs that one scenario alone (warm-up
            // included), so a timeout there means the hypercall never
            // returned.
            let why = if s.machine == MachineKind::Hypercall && run.run.outcome == Outcome::Timeout
            {
                a.unsupported.get_or_insert(format!(
                    "the hypercall did not return within {:.0} s: the vCPU spins inside KVM_RUN (seen on nested KVM); \
                     trapline kicked and stopped it",
                    opts.hypercall_timeout.as_secs_f64()
                ));
                continue;
            } else {
                format!(
                    "no result from the probe ({}); serial tail: {}",
                    run.run.outcome.describe(),
                    tail(&run.serial)
                )
            };
            a.failure.get_or_insert(why);
            continue;
        };
        if !good_end && s.machine != MachineKind::Hypercall {
            a.failure.get_or_insert(format!(
                "probe VM ended badly: {}",
                run.run.outcome.describe()
            ));
        }
        match ResultStatus::from_raw(last.status) {
            Some(ResultStatus::Ok) => {}
            Some(ResultStatus::BadValue) => {
                a.failure.get_or_insert(match s.group {
                    "irq" => format!(
                        "the guest's interrupt handler did not see every interrupt in time (count {:#x})",
                        last.value
                    ),
                    "pci" | "pci-config" => format!("the guest's PCI check failed (read {:#x})", last.value),
                    _ => format!("read back {:#x}, expected {PROBE_READ_VALUE:#x}", last.value),
                });
            }
            Some(ResultStatus::Unsupported) => {
                a.unsupported
                    .get_or_insert("the probe cannot run it on this CPU".into());
                continue;
            }
            None => {
                a.failure
                    .get_or_insert(format!("unknown status {}", last.status));
            }
        }
        let total: u64 = opts.warmup
            + run
                .batches
                .get(&id)
                .map(|v| v.iter().map(|b| b.iterations).sum())
                .unwrap_or(0);
        let mut exits = loop_exits(last);
        if let Check::Testdev(_) = s.check {
            // The guest reads pci-testdev's `count` once per batch, inside
            // the BEGIN/RESULT window: that read is not part of the loop.
            let read = if s.name.ends_with(":pci-mem") {
                ExitKind::MmioRead
            } else {
                ExitKind::PioRead
            };
            if let Some(v) = exits.get_mut(read.name()) {
                *v -= 1;
                if *v == 0 {
                    exits.remove(read.name());
                }
            }
        }
        if let Err(why) = verify(s.check, last, &exits, total, run) {
            a.failure.get_or_insert(why);
        } else if a.check.is_none() {
            a.check = Some(describe_check(s.check, last.iterations));
        }
        let mut sample = Sample::new(last.iterations, last.cycles);
        sample.exits = exits;
        sample.handling = last.handling.map(|h| trapline_report::Handling {
            exits: h.exits,
            cycles: h.cycles,
        });
        sample.kvm_exits = kernel_exits(last);
        a.samples.push(sample);
    }
}

fn tail(s: &str) -> String {
    let t: Vec<&str> = s.lines().rev().take(3).collect();
    t.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

fn describe_check(check: Check, n: u64) -> String {
    match check {
        Check::NoExits => format!("0 exits to trapline in {n} iterations"),
        Check::UserExit(k, Some(_)) => format!(
            "{n} {} exits for {n} iterations; device saw every write",
            k.name()
        ),
        Check::UserExit(k @ (ExitKind::PioRead | ExitKind::MmioRead), None) => {
            format!(
                "{n} {} exits for {n} iterations (values read back checked by the guest)",
                k.name()
            )
        }
        Check::UserExit(k, None) => format!("{n} {} exits for {n} iterations", k.name()),
        Check::IoEvent(name) => format!("0 exits; {name} eventfd count = iterations"),
        Check::Coalesced(_) => {
            "every write reached the device through the ring; < 1 exit per iteration".into()
        }
        Check::Floor => format!("{n} floor exits, 0 bus dispatches"),
        Check::Testdev(Some(k)) => {
            format!("{n} {} exits; pci-testdev count = every write", k.name())
        }
        Check::Testdev(None) => "0 exits; pci-testdev count (eventfd fires) = every write".into(),
        Check::ExitsPerIter([]) => format!("0 exits in {n} iterations; vendor/device read back"),
        Check::ExitsPerIter(per) => format!("{per:?} exits per read; vendor/device read back"),
        Check::Scan(per) => format!("{per:?} exits per scan; every function found"),
        Check::Irqfd => "every injection acknowledged by the guest handler; no exits".into(),
        Check::Doorbell(_, Some(k)) => format!(
            "one {} exit per ring; consumer counted every ring",
            k.name()
        ),
        Check::Doorbell(_, None) => "0 exits; consumer counted every ring (zero lost)".into(),
    }
}

/// Exits that count as "reached trapline" for a check: everything but
/// kicks and signals.
fn user_exits(exits: &BTreeMap<String, u64>) -> u64 {
    exits
        .iter()
        .filter(|(k, _)| {
            ExitKind::ALL
                .iter()
                .any(|x| x.name() == k.as_str() && x.is_exit() && *x != ExitKind::Interrupted)
        })
        .map(|(_, v)| *v)
        .sum()
}

fn verify(
    check: Check,
    b: &Batch,
    exits: &BTreeMap<String, u64>,
    total: u64,
    run: &ProbeRun,
) -> Result<(), String> {
    let n = b.iterations;
    let got = |k: ExitKind| exits.get(k.name()).copied().unwrap_or(0);
    let lab = &run.run.lab;
    let device = |r: ProbeRegister| lab.probe_pio.writes(r) + lab.probe_mmio.writes(r);
    let all = user_exits(exits);
    match check {
        Check::NoExits if all == 0 => Ok(()),
        Check::NoExits => Err(format!(
            "{all} exits reached trapline in {n} iterations: {exits:?}"
        )),
        Check::UserExit(k, reg) => {
            if got(k) != n || all != n {
                return Err(format!(
                    "expected {n} {} exits and nothing else, saw {exits:?}",
                    k.name()
                ));
            }
            match reg {
                Some(r) if device(r) != total => Err(format!(
                    "device saw {} writes, guest made {total}",
                    device(r)
                )),
                _ => Ok(()),
            }
        }
        Check::IoEvent(name) => {
            if all != 0 {
                return Err(format!("the ioeventfd path leaked {all} exits to user space in {n} iterations: {exits:?}"));
            }
            match lab.ioevent_counts.get(name) {
                Some(&c) if c == total => Ok(()),
                Some(&c) => Err(format!(
                    "{name} eventfd counted {c}, guest wrote {total} times"
                )),
                None => Err(format!("{name} ioeventfd was not registered")),
            }
        }
        Check::Coalesced(r) => {
            if all >= n {
                return Err(format!(
                    "{all} exits in {n} iterations: the writes were not coalesced"
                ));
            }
            if device(r) != total {
                return Err(format!(
                    "device saw {} writes through the ring, guest made {total}",
                    device(r)
                ));
            }
            Ok(())
        }
        Check::Testdev(exit) => {
            let want = if exit.is_some() { n } else { 0 };
            if all != want || exit.is_some_and(|k| got(k) != n) {
                return Err(format!(
                    "expected {want} {} exits in {n} iterations, saw {exits:?}",
                    exit.map_or("", |k| k.name())
                ));
            }
            if b.value != total {
                return Err(format!(
                    "pci-testdev counted {} writes, guest made {total}",
                    b.value
                ));
            }
            Ok(())
        }
        Check::ExitsPerIter(per) => exact_exits(per, n, exits, all),
        Check::Scan(per) => {
            exact_exits(per, n, exits, all)?;
            if b.value != run.functions {
                return Err(format!(
                    "the scan found {} functions on bus 0, the machine has {}",
                    b.value, run.functions
                ));
            }
            Ok(())
        }
        Check::Irqfd => {
            if let Some(e) = &run.inject_error {
                return Err(format!("irqfd injections: {e}"));
            }
            if run.injected != total {
                return Err(format!(
                    "{} injections acknowledged, guest expected {total}",
                    run.injected
                ));
            }
            if all > 1 {
                return Err(format!(
                    "{all} exits during the batch (only its start ucall expected): {exits:?}"
                ));
            }
            Ok(())
        }
        Check::Doorbell(fd, exit) => {
            let want = if exit.is_some() { n } else { 0 };
            if all != want || exit.is_some_and(|k| got(k) != n) {
                return Err(format!(
                    "expected {want} exits for {n} rings, saw {exits:?}"
                ));
            }
            let counted = run.doorbells.get(fd).copied().unwrap_or(0)
                + lab.ioevent_counts.get(fd).copied().unwrap_or(0);
            if counted != total {
                return Err(format!(
                    "the consumer counted {counted} rings, the guest rang {total} times"
                ));
            }
            Ok(())
        }
        Check::Floor => {
            if got(ExitKind::Floor) != n || all != n {
                return Err(format!(
                    "expected {n} floor exits and nothing else, saw {exits:?}"
                ));
            }
            if device(ProbeRegister::PioFloor) != 0 {
                return Err("floor writes reached the bus".into());
            }
            Ok(())
        }
    }
}

/// Exactly `per` (kind, count per iteration) exits and nothing else.
fn exact_exits(
    per: &[(ExitKind, u64)],
    n: u64,
    exits: &BTreeMap<String, u64>,
    all: u64,
) -> Result<(), String> {
    let want_all: u64 = per.iter().map(|(_, c)| c * n).sum();
    let each = per
        .iter()
        .all(|(k, c)| exits.get(k.name()).copied().unwrap_or(0) == c * n);
    if all == want_all && each {
        Ok(())
    } else {
        Err(format!(
            "expected {per:?} exits per iteration over {n} iterations, saw {exits:?}"
        ))
    }
}

fn absorb_floor(a: &mut Acc, kind: FloorKind, s: floor::FloorSample) {
    let n = s.iterations;
    let ok = match kind {
        FloorKind::Noop => s.user_exits == 0,
        FloorKind::PioUserOut => s.user_exits == n,
        FloorKind::PioKernelWildcard | FloorKind::MmioKernelWildcard => {
            s.user_exits == 0 && s.eventfd_count == n
        }
        FloorKind::RamRead => s.user_exits == 0 && s.value == u64::from(PROBE_READ_VALUE),
    };
    if !ok {
        a.failure.get_or_insert(format!(
            "{}: {} user exits, eventfd count {}, value {:#x} for {n} iterations",
            kind.name(),
            s.user_exits,
            s.eventfd_count,
            s.value
        ));
    }
    a.check.get_or_insert_with(|| match kind {
        FloorKind::Noop => "0 exits".into(),
        FloorKind::PioUserOut => "one user exit per iteration".into(),
        FloorKind::PioKernelWildcard | FloorKind::MmioKernelWildcard => {
            "0 exits; eventfd count = iterations".into()
        }
        FloorKind::RamRead => "0 exits; the value read checked".into(),
    });
    let mut sample = Sample::new(n, s.cycles);
    if s.user_exits > 0 {
        sample
            .exits
            .insert(ExitKind::PioWrite.name().into(), s.user_exits);
    }
    a.samples.push(sample);
}
