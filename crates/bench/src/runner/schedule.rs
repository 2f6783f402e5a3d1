//! The lab's schedule: which units each repeat runs, in which order, and
//! the report assembled from what they measured.

use std::collections::BTreeMap;
use std::time::Instant;

use trapline_machine::{HostKvm, Outcome};
use trapline_report::ladder::{self, Rung};
use trapline_report::{Report, RunConfig, ScenarioResult, ToolInfo};

use super::derived::{add_footprint, add_peer_derived};
use super::floor_run::absorb_floor;
use super::peer_run::absorb_peer;
use super::probe::{absorb, cmdline, run_probe};
use super::{finish_result, Acc, LabOptions};
use crate::catalog::{self, MachineKind, Scenario};
use crate::floor::{self, FloorKind};
use crate::progress::Progress;
use crate::LabError;

/// What a repeat runs, in some order.
#[derive(Clone, Debug)]
pub(super) enum Unit {
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

pub(super) fn selected(opts: &LabOptions) -> Vec<&'static Scenario> {
    let mut v: Vec<&Scenario> = catalog::SCENARIOS
        .iter()
        .filter(|s| {
            opts.only
                .as_deref()
                .is_none_or(|p| catalog::matches(p, "trapline", s.name()))
        })
        .collect();
    // Every net figure is over the noop baseline: keep it whenever anything
    // else of trapline's is measured.
    if !v.is_empty() && !v.iter().any(|s| s.name() == "noop") {
        v.insert(0, catalog::find("noop").expect("noop is in the catalog"));
    }
    v
}

/// The ladder's (rung, loop) pairs selected, each rung with its noop
/// baseline whenever anything else of it is.
pub(super) fn selected_floor(opts: &LabOptions) -> Vec<(&'static Rung, FloorKind)> {
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
        .map(|s| ("trapline", s.name(), s.group, s.path))
        .collect();
    for rung in &ladder::RUNGS {
        for k in floor::ladder::kinds(rung) {
            v.push((rung.vmm, k.name(), "floor", rung.what));
        }
    }
    v
}

/// The scenario the profile's overhead is measured on.
pub(super) const STAT_OVERHEAD_SCENARIO: &str = trapline_report::derive::names::PIO_USER_OUT;

/// Run the lab and build its report.
pub fn run_lab(kvm: &HostKvm, opts: &LabOptions) -> Result<Report, LabError> {
    let started = Instant::now();
    let started_at = crate::time::rfc3339_now();
    let scenarios = selected(opts);
    let floors = selected_floor(opts);
    if scenarios.is_empty() && floors.is_empty() {
        return Err(LabError::NothingSelected {
            pattern: opts.only.clone().unwrap_or_default(),
        });
    }
    let mut acc: BTreeMap<&'static str, Acc> = scenarios
        .iter()
        .map(|s| (s.name(), Acc::default()))
        .collect();
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
        std::fs::create_dir_all(&peer_dir).map_err(|source| LabError::PeerDir {
            path: peer_dir.clone(),
            source,
        })?;
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
        if opts.stat && main.iter().any(|s| s.name() == STAT_OVERHEAD_SCENARIO) {
            main.iter()
                .copied()
                .filter(|s| s.name() == STAT_OVERHEAD_SCENARIO || s.name() == "noop")
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
                                acc.entry(s.name())
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
                                    .entry(s.name())
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
                        let res = crate::peer::run_probe(
                            q,
                            &peer_dir,
                            &cmdline(&list, kind, opts),
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
        let a = acc.remove(s.name()).unwrap_or_default();
        report.push(finish_result(
            ScenarioResult::new(s.name(), s.group, s.path),
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
        let a = unprofiled_acc.remove(s.name()).unwrap_or_default();
        let r = ScenarioResult::new(s.name(), s.group, s.path)
            .with_vmm(trapline_report::derive::names::UNPROFILED_VMM);
        report.push(finish_result(r, a));
    }
    if opts.peer.is_some() {
        for s in &scenarios {
            let r = ScenarioResult::new(s.name(), s.group, s.path).with_vmm("qemu");
            let r = match crate::peer::not_applicable(s) {
                Some(why) => r.unsupported(format!("n/a on QEMU: {why}")),
                None => finish_result(r, peer_acc.remove(s.name()).unwrap_or_default()),
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
