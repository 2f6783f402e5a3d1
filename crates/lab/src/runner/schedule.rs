//! The lab's schedule: what a run measures ([`Plan`]), and which units
//! each repeat runs, in which order.

use trapline_report::ladder::{self, Rung};

use super::LabOptions;
use crate::arch;
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
            Unit::Probe(k, s) => format!("{} VM, {} scenario(s)", k.name(), s.len()),
            Unit::Floor(r, k) => format!("raw KVM floor {}: {}", r.vmm, k.name()),
            Unit::Peer(k, s) => format!("QEMU {} VM, {} scenario(s)", k.name(), s.len()),
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
    for rung in ladder::HOST.rungs {
        let mut kinds: Vec<FloorKind> = floor::ladder::kinds(rung)
            .into_iter()
            .filter(|k| {
                opts.only
                    .as_deref()
                    .is_none_or(|p| floor_matches(p, rung.vmm, k.name()))
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
    for rung in ladder::HOST.rungs {
        for k in floor::ladder::kinds(rung) {
            v.push((rung.vmm, k.name(), "floor", rung.what));
        }
    }
    v
}

/// A floor loop is selected by a pattern that names its rung (`raw-kvm:*`,
/// `*:ram-read`) or by its bare name written out (`ram-read`, which runs
/// it on every rung); a bare glob (`pio-*`) selects trapline's scenarios
/// only, so it does not quietly add the whole ladder.
fn floor_matches(patterns: &str, vmm: &str, name: &str) -> bool {
    patterns
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .any(|p| {
            if p.contains(':') || !p.contains('*') {
                catalog::matches(p, vmm, name)
            } else {
                false
            }
        })
}

/// What `--list` shows: the rows the options select and the VM runs they
/// take, without running any.
#[derive(Debug)]
pub struct DryRun {
    /// (vmm, name, group, path) of every selected row, in run order.
    pub rows: Vec<(&'static str, &'static str, &'static str, &'static str)>,
    /// Floor ladder rows among them.
    pub floor_rows: usize,
    /// Rows measured again without the exit profile (`trapline-nostat`).
    pub unprofiled_rows: usize,
    /// VM runs per repeat.
    pub units_per_repeat: usize,
    /// Scenario runs per repeat (one scenario on one VM).
    pub scenario_runs_per_repeat: usize,
    /// Of those, interrupt scenarios (IPIs take tens of thousands of cycles
    /// each on a nested host, so --min-iters, not --goal, sets their time).
    pub irq_runs_per_repeat: usize,
    /// Whether the hypercall VM runs (its first run may wait out the
    /// hypercall timeout, 2 s or 1 s with --quick, on a host where the
    /// hypercall never returns).
    pub hypercall: bool,
}

/// A rough cost model for the estimate, from runs on the project's
/// 2-core nested-KVM host (docs/results/2026-11-26-list-estimate.md):
/// starting and tearing down one VM run, and one scenario's warm-up and
/// timed batches beyond the loop's own cycles (which the model takes from
/// `--goal`: the batches double until one lasts the goal, so about twice
/// the goal in all).
const SECS_PER_VM_RUN: f64 = 0.15;
const SECS_PER_SCENARIO: f64 = 0.05;
/// An interrupt scenario's run, whatever the goal.
const SECS_PER_IRQ_SCENARIO: f64 = 0.5;
/// A guest TSC frequency to turn `--goal` cycles into time.
const ASSUMED_TSC_HZ: f64 = 2.5e9;
/// Each `trapline run` process of the footprint measurement.
const SECS_PER_FOOTPRINT_RUN: f64 = 0.1;

impl DryRun {
    /// The estimated wall time of the whole run.
    pub fn estimate(&self, opts: &LabOptions) -> std::time::Duration {
        let repeat = f64::from(opts.repeat);
        let per_scenario = SECS_PER_SCENARIO + 2.0 * opts.goal_cycles as f64 / ASSUMED_TSC_HZ;
        let footprint = f64::from(opts.repeat.clamp(3, 11)) * SECS_PER_FOOTPRINT_RUN;
        let hypercall = if self.hypercall {
            opts.hypercall_timeout.as_secs_f64()
        } else {
            0.0
        };
        std::time::Duration::from_secs_f64(
            repeat
                * (self.units_per_repeat as f64 * SECS_PER_VM_RUN
                    + self.scenario_runs_per_repeat as f64 * per_scenario
                    + self.irq_runs_per_repeat as f64 * SECS_PER_IRQ_SCENARIO)
                + footprint
                + hypercall,
        )
    }

    /// The dry run's last lines: counts, VM runs and the estimate;
    /// `selection` says what chose the rows (`--only …`, `--view …`).
    pub fn summary(&self, opts: &LabOptions, selection: Option<&str>) -> String {
        let trapline = self.rows.len() - self.floor_rows - self.unprofiled_rows;
        let unprofiled = if self.unprofiled_rows > 0 {
            format!(", {} again without --stat", self.unprofiled_rows)
        } else {
            String::new()
        };
        let mut out = format!(
            "{} rows selected ({trapline} of trapline's scenarios, {} floor ladder loops{unprofiled}){}\n",
            self.rows.len(),
            self.floor_rows,
            selection.map_or_else(String::new, |p| format!(" by {p}"))
        );
        out.push_str(&format!(
            "{} VM runs: {} per repeat × {} repeats (fresh VMs; --peer adds the peer's)\n",
            self.units_per_repeat * opts.repeat as usize,
            self.units_per_repeat,
            opts.repeat
        ));
        let secs = self.estimate(opts).as_secs();
        out.push_str(&format!(
            "estimated time: about {} (a rough model of the project's 2-core nested host; \
             under load a run took up to twice as long)\n",
            if secs < 120 {
                format!("{secs} s")
            } else {
                format!("{} min", secs.div_ceil(60))
            }
        ));
        out
    }
}

/// What the options select, as `--list` shows it.
pub fn dry_run(opts: &LabOptions) -> Result<DryRun, LabError> {
    let plan = Plan::select(opts)?;
    let mut rows: Vec<_> = plan
        .scenarios
        .iter()
        .map(|s| ("trapline", s.name(), s.group, s.path))
        .collect();
    rows.extend(
        plan.floors
            .iter()
            .map(|(r, k)| (r.vmm, k.name(), "floor", r.what)),
    );
    // Listed as the run's summary counts them ("2 without --stat"): the
    // same scenarios again on a VM without the exit profile, whose
    // difference is the profile's own cost.
    rows.extend(plan.unprofiled.iter().map(|s| {
        (
            trapline_report::derive::names::UNPROFILED_VMM,
            s.name(),
            s.group,
            "again without --stat: the exit profile's own cost",
        )
    }));
    Ok(DryRun {
        unprofiled_rows: plan.unprofiled.len(),
        irq_runs_per_repeat: plan.scenarios.iter().filter(|s| s.group == "irq").count(),
        hypercall: !plan.hypercall.is_empty(),
        floor_rows: plan.floors.len(),
        units_per_repeat: plan.units_per_repeat(),
        scenario_runs_per_repeat: plan.scenarios.len() + plan.unprofiled.len() + plan.floors.len(),
        rows,
    })
}

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
        // The profile's overhead is measured on the user exit (PIO on x86,
        // MMIO on arm64, which has no port I/O).
        let overhead = arch::STAT_OVERHEAD_SCENARIO;
        let unprofiled = if opts.stat && main.iter().any(|s| s.name() == overhead) {
            main.iter()
                .copied()
                .filter(|s| s.name() == overhead || s.name() == "noop")
                .collect()
        } else {
            Vec::new()
        };
        let peer_units = match super::peer_run::ProbePeer::of(opts) {
            Some(peer) => peer_units(&scenarios, peer),
            None => Vec::new(),
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
fn peer_units(
    scenarios: &[&'static Scenario],
    peer: super::peer_run::ProbePeer,
) -> Vec<(MachineKind, Vec<&'static Scenario>)> {
    let mut units: Vec<(MachineKind, Vec<&'static Scenario>)> = Vec::new();
    for s in scenarios {
        if peer.not_applicable(s).is_none() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_name_machines_as_people_do_not_as_rust_types() {
        for k in [
            MachineKind::Main,
            MachineKind::NoIrqchip,
            MachineKind::Hypercall,
            MachineKind::EcamRo,
            MachineKind::Smp,
            MachineKind::SmpX2apic,
        ] {
            for unit in [Unit::Probe(k, vec![]), Unit::Peer(k, vec![])] {
                let label = unit.label();
                assert!(!label.contains(&format!("{k:?}")), "{label}");
                assert!(label.contains(&format!("{} VM", k.name())), "{label}");
            }
        }
        assert_eq!(
            Unit::Probe(MachineKind::NoIrqchip, vec![]).label(),
            "no-irqchip VM, 0 scenario(s)"
        );
    }

    /// `--view vmm` measures its exit rows and the whole floor ladder, not
    /// the rest of trapline's catalog (on each architecture its own rows:
    /// port I/O on x86, MMIO and the vGIC on arm64).
    #[test]
    fn the_vmm_view_runs_its_exit_rows_and_the_ladder() {
        let arm64 = cfg!(target_arch = "aarch64");
        let only = trapline_report::View::Vmm.needs(arm64).unwrap().join(",");
        let vmm = dry_run(&LabOptions::for_tests(Some(&only))).unwrap();
        let all = dry_run(&LabOptions::for_tests(None)).unwrap();
        assert_eq!(vmm.floor_rows, all.floor_rows, "{:?}", vmm.rows);
        let trapline: Vec<&str> = vmm
            .rows
            .iter()
            .filter(|r| r.0 == "trapline")
            .map(|r| r.1)
            .collect();
        let expected = if arm64 {
            ["noop", "mmio-user-write", "mmio-vgic-read", "ram-read"]
        } else {
            ["noop", "pio-user-out", "vmm-floor-pio", "ram-read"]
        };
        for s in expected {
            assert!(trapline.contains(&s), "{s}: {trapline:?}");
        }
        assert!(trapline.len() < 10, "{trapline:?}");
    }
}
