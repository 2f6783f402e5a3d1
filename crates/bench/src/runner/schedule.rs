//! The lab's schedule: what a run measures ([`Plan`]), and which units
//! each repeat runs, in which order.

use trapline_report::ladder::{self, Rung};

use super::LabOptions;
use crate::catalog::{self, MachineKind, Scenario};
use crate::floor::{self, FloorKind};
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
    /// What the progress bar says it is.
    pub(super) fn label(&self) -> String {
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

/// The scenario the profile's overhead is measured on: the user exit
/// (PIO on x86, MMIO on arm64, which has no port I/O).
#[cfg(target_arch = "x86_64")]
pub(super) const STAT_OVERHEAD_SCENARIO: &str = trapline_report::derive::names::PIO_USER_OUT;
#[cfg(target_arch = "aarch64")]
pub(super) const STAT_OVERHEAD_SCENARIO: &str = trapline_report::derive::names::MMIO_USER_WRITE;

/// What a run measures, chosen once from the options: the selected
/// scenarios and floor loops, trapline's scenarios grouped by the machine
/// they run on, and the peer's units.
pub(super) struct Plan {
    /// trapline's scenarios, in catalog order.
    pub(super) scenarios: Vec<&'static Scenario>,
    /// The floor ladder's (rung, loop) pairs.
    pub(super) floors: Vec<(&'static Rung, FloorKind)>,
    main: Vec<&'static Scenario>,
    no_irqchip: Vec<&'static Scenario>,
    hypercall: Vec<&'static Scenario>,
    ecam_ro: Vec<&'static Scenario>,
    smp: Vec<&'static Scenario>,
    smp_x2apic: Vec<&'static Scenario>,
    /// pio-user-out (with its noop baseline) once more per repeat on a VM
    /// without the profile: the profile's overhead per user exit.
    pub(super) unprofiled: Vec<&'static Scenario>,
    /// QEMU's units: one VM per vCPU count and APIC mode.
    pub(super) peer_units: Vec<(MachineKind, Vec<&'static Scenario>)>,
}

impl Plan {
    /// The plan for `opts`, or an error when it selects nothing.
    pub(super) fn select(opts: &LabOptions) -> Result<Plan, LabError> {
        let scenarios = selected(opts);
        let floors = selected_floor(opts);
        if scenarios.is_empty() && floors.is_empty() {
            return Err(LabError::NothingSelected {
                pattern: opts.only.clone().unwrap_or_default(),
            });
        }
        let by_machine = |kind: MachineKind| -> Vec<&'static Scenario> {
            scenarios
                .iter()
                .copied()
                .filter(|s| s.machine == kind)
                .collect()
        };
        let main = by_machine(MachineKind::Main);
        let unprofiled = if opts.stat && main.iter().any(|s| s.name() == STAT_OVERHEAD_SCENARIO) {
            main.iter()
                .copied()
                .filter(|s| s.name() == STAT_OVERHEAD_SCENARIO || s.name() == "noop")
                .collect()
        } else {
            Vec::new()
        };
        let peer_units = if opts.peer.is_some() {
            peer_units(&scenarios)
        } else {
            Vec::new()
        };
        Ok(Plan {
            no_irqchip: by_machine(MachineKind::NoIrqchip),
            hypercall: by_machine(MachineKind::Hypercall),
            ecam_ro: by_machine(MachineKind::EcamRo),
            smp: by_machine(MachineKind::Smp),
            smp_x2apic: by_machine(MachineKind::SmpX2apic),
            main,
            unprofiled,
            peer_units,
            scenarios,
            floors,
        })
    }

    /// How many units a repeat runs (the hypercall VM's counted even
    /// when a timeout drops it from later repeats).
    pub(super) fn units_per_repeat(&self) -> usize {
        [
            &self.main,
            &self.no_irqchip,
            &self.hypercall,
            &self.ecam_ro,
            &self.smp,
            &self.smp_x2apic,
            &self.unprofiled,
        ]
        .iter()
        .filter(|list| !list.is_empty())
        .count()
            + self.floors.len()
            + self.peer_units.len()
    }

    /// Repeat `rep`'s units, in its order. The hypercall VM runs only
    /// while the hypercall is known to return.
    pub(super) fn units(&self, rep: usize, hypercall_supported: bool) -> Vec<Unit> {
        let mut units = Vec::new();
        if !self.main.is_empty() {
            // Rotate the order each repeat so slow drift hits every
            // scenario alike.
            units.push(Unit::Probe(MachineKind::Main, rotated(&self.main, rep)));
        }
        if !self.no_irqchip.is_empty() {
            units.push(Unit::Probe(MachineKind::NoIrqchip, self.no_irqchip.clone()));
        }
        for (kind, list) in [
            (MachineKind::EcamRo, &self.ecam_ro),
            (MachineKind::Smp, &self.smp),
            (MachineKind::SmpX2apic, &self.smp_x2apic),
        ] {
            if !list.is_empty() {
                units.push(Unit::Probe(kind, list.clone()));
            }
        }
        if !self.hypercall.is_empty() && hypercall_supported {
            units.push(Unit::Probe(MachineKind::Hypercall, self.hypercall.clone()));
        }
        if !self.unprofiled.is_empty() {
            units.push(Unit::Unprofiled(self.unprofiled.clone()));
        }
        units.extend(self.floors.iter().map(|(r, k)| Unit::Floor(r, *k)));
        for (kind, list) in &self.peer_units {
            units.push(Unit::Peer(*kind, rotated(list, rep)));
        }
        let n = units.len();
        units.rotate_left(rep % n.max(1));
        units
    }
}

/// `list` rotated left by `rep` (a non-empty list).
fn rotated(list: &[&'static Scenario], rep: usize) -> Vec<&'static Scenario> {
    let mut order = list.to_vec();
    order.rotate_left(rep % list.len());
    order
}

/// The scenarios QEMU can run, grouped into one unit per vCPU count and
/// APIC mode (QEMU needs one VM for each), in order of first appearance.
fn peer_units(scenarios: &[&'static Scenario]) -> Vec<(MachineKind, Vec<&'static Scenario>)> {
    let mut units: Vec<(MachineKind, Vec<&'static Scenario>)> = Vec::new();
    for s in scenarios {
        if crate::peer::not_applicable(s).is_none() {
            let kind = match s.machine {
                MachineKind::Smp | MachineKind::SmpX2apic => s.machine,
                _ => MachineKind::Main,
            };
            match units.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, v)) => v.push(s),
                None => units.push((kind, vec![s])),
            }
        }
    }
    units
}
