//! Running one unit of a repeat and taking what it measured into the
//! per-scenario accumulators, across repeats.

use std::collections::BTreeMap;

use trapline_machine::{HostKvm, Outcome};
use trapline_report::ladder::Rung;

use super::floor_run::absorb_floor;
use super::peer_run::{absorb_peer, PeerSetup};
use super::probe::{absorb, cmdline, run_probe};
use super::schedule::Unit;
use super::{stop_signal, Acc, LabOptions};
use crate::arch;
use crate::catalog::{MachineKind, Scenario};
use crate::floor::{self, FloorKind};

/// What the repeats have measured so far, and what the probe VMs told
/// about the host.
pub(super) struct Tally {
    /// trapline's scenarios, by name.
    pub(super) acc: BTreeMap<&'static str, Acc>,
    /// The floor ladder's loops, by (rung, loop).
    pub(super) floor_acc: BTreeMap<(&'static str, &'static str), Acc>,
    /// QEMU's runs, by scenario name.
    pub(super) peer_acc: BTreeMap<&'static str, Acc>,
    /// The VM without the exit profile, by scenario name.
    pub(super) unprofiled_acc: BTreeMap<&'static str, Acc>,
    /// The TSC frequency the first probe VM reported (0: none did yet).
    pub(super) tsc_khz: u64,
    /// False once the hypercall VM timed out: the hypercall does not
    /// return here, and later repeats leave that VM out.
    pub(super) hypercall_supported: bool,
    /// What this host's KVM cannot run (arm64: `hypercall-user` without
    /// the SMCCC filter), asked on the first probe run that has it.
    support: arch::HostSupport,
}

impl Tally {
    /// Empty accumulators for every selected scenario and floor loop.
    pub(super) fn new(
        scenarios: &[&'static Scenario],
        floors: &[(&'static Rung, FloorKind)],
    ) -> Tally {
        Tally {
            acc: scenarios
                .iter()
                .map(|s| (s.name(), Acc::default()))
                .collect(),
            floor_acc: floors
                .iter()
                .map(|(r, k)| ((r.vmm, k.name()), Acc::default()))
                .collect(),
            peer_acc: BTreeMap::new(),
            unprofiled_acc: BTreeMap::new(),
            tsc_khz: 0,
            hypercall_supported: true,
            support: arch::HostSupport::new(),
        }
    }

    /// Run `unit` and take what it measured (or why it failed). Returns
    /// false when a stop signal came while it ran: what it measured then
    /// is dropped, not taken (the signal may have cut it short, and a VM
    /// stopped early is no failure of its scenarios).
    pub(super) fn run(
        &mut self,
        kvm: &HostKvm,
        opts: &LabOptions,
        peer: &PeerSetup,
        unit: Unit,
    ) -> bool {
        match unit {
            Unit::Probe(kind, list) => self.run_probe(kvm, opts, kind, &list),
            Unit::Unprofiled(list) => self.run_unprofiled(kvm, opts, &list),
            Unit::Peer(kind, list) => self.run_peer(opts, peer, kind, &list),
            Unit::Floor(rung, kind) => self.run_floor(kvm, opts, rung, kind),
        }
        stop_signal().is_none()
    }

    /// trapline's probe VM of `kind` on `list`.
    fn run_probe(
        &mut self,
        kvm: &HostKvm,
        opts: &LabOptions,
        kind: MachineKind,
        list: &[&'static Scenario],
    ) {
        let runnable = self.runnable(kvm, list);
        let list = runnable.as_slice();
        if list.is_empty() {
            return;
        }
        let timeout = if kind == MachineKind::Hypercall {
            opts.hypercall_timeout
        } else {
            opts.vm_timeout
        };
        match run_probe(kvm, kind, list, opts, timeout) {
            _ if stop_signal().is_some() => {}
            Ok(run) => {
                if self.tsc_khz == 0 {
                    self.tsc_khz = run.tsc_khz;
                }
                if kind == MachineKind::Hypercall && run.probe.run.outcome == Outcome::Timeout {
                    self.hypercall_supported = false;
                }
                absorb(&mut self.acc, list, &run.probe, opts);
            }
            Err(e) => fail_all(&mut self.acc, list, &e),
        }
    }

    /// `list` without what this host's KVM cannot run, each of those
    /// reported unsupported with the reason.
    fn runnable(&mut self, kvm: &HostKvm, list: &[&'static Scenario]) -> Vec<&'static Scenario> {
        let mut runnable = Vec::with_capacity(list.len());
        for s in list {
            match self.support.why_not(kvm, s) {
                Some(why) => {
                    self.acc
                        .entry(s.name())
                        .or_default()
                        .unsupported
                        .get_or_insert(why);
                }
                None => runnable.push(*s),
            }
        }
        runnable
    }

    /// The main machine's `list` once more, without the exit profile.
    fn run_unprofiled(&mut self, kvm: &HostKvm, opts: &LabOptions, list: &[&'static Scenario]) {
        let unprofiled_opts = LabOptions {
            stat: false,
            ..opts.clone()
        };
        match run_probe(
            kvm,
            MachineKind::Main,
            list,
            &unprofiled_opts,
            opts.vm_timeout,
        ) {
            _ if stop_signal().is_some() => {}
            Ok(run) => absorb(&mut self.unprofiled_acc, list, &run.probe, opts),
            Err(e) => fail_all(&mut self.unprofiled_acc, list, &e),
        }
    }

    /// The same probe on the peer (QEMU, or kvmtool's build of it).
    fn run_peer(
        &mut self,
        opts: &LabOptions,
        peer: &PeerSetup,
        kind: MachineKind,
        list: &[&'static Scenario],
    ) {
        let Some(who) = peer.probe_peer else { return };
        let line = cmdline(list, kind, opts);
        let cpus = crate::peer::cpus_for(kind);
        let res = if let Some(why) = &peer.unusable {
            Err(why.clone())
        } else if let Some(q) = &peer.qemu {
            crate::peer::run_probe(q, &peer.dir, &line, cpus, opts.vm_timeout)
        } else {
            arch::run_kvmtool_probe(opts, &peer.dir, &line, cpus)
        };
        if stop_signal().is_some() {
            return;
        }
        absorb_peer(&mut self.peer_acc, list, res, who);
    }

    /// One loop of the raw-KVM floor ladder, to its goal.
    fn run_floor(&mut self, kvm: &HostKvm, opts: &LabOptions, rung: &Rung, kind: FloorKind) {
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
        if stop_signal().is_some() {
            return;
        }
        let a = self.floor_acc.entry((rung.vmm, kind.name())).or_default();
        match measured {
            Ok(s) => absorb_floor(a, kind, s),
            Err(e) => {
                a.failure.get_or_insert(e);
            }
        }
    }
}

/// Every scenario of `list` failed with `e` (its first failure is kept).
fn fail_all(acc: &mut BTreeMap<&'static str, Acc>, list: &[&'static Scenario], e: &str) {
    for s in list {
        acc.entry(s.name())
            .or_default()
            .failure
            .get_or_insert_with(|| e.to_string());
    }
}
