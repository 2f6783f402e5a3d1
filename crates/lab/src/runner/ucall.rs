//! The guest's ucalls paired: each BEGIN with its RESULT, into batches
//! with the exits (trapline's and KVM's) counted between them.

use std::collections::BTreeMap;

use trapline_abi::UcallKind;
use trapline_bus::{ExitSnapshot, HandlingTotals};
use trapline_devices::ucall::{KernelExitCounts, KERNEL_EXIT_COUNTERS};
use trapline_lab_devices::LabReadout;
use trapline_machine::RunReport;

use crate::arch;
use crate::pump::{PumpResult, TailsBlock};

/// One timed batch as the guest reported it.
#[derive(Clone, Debug)]
pub(super) struct Batch {
    pub(super) iterations: u64,
    pub(super) cycles: u64,
    pub(super) value: u64,
    pub(super) status: u64,
    pub(super) exits: ExitSnapshot,
    /// trapline's handling of the exits between BEGIN and RESULT (profile on).
    pub(super) handling: Option<HandlingTotals>,
    /// KVM's own exit counters over the same window (profile on, and a
    /// kernel with KVM's stats fd).
    pub(super) kernel: Option<KernelExitCounts>,
}

/// Everything one probe VM produced, by scenario id.
pub(super) struct ProbeRun {
    pub(super) batches: BTreeMap<u32, Vec<Batch>>,
    /// PCI functions the machine has on bus 0.
    pub(super) functions: u64,
    /// Rings the consumer thread counted, per doorbell.
    pub(super) doorbells: BTreeMap<&'static str, u64>,
    /// irqfd injections the guest acknowledged.
    pub(super) injected: u64,
    /// Each scenario's recorded pass (its tails), by scenario id.
    pub(super) tails: BTreeMap<u32, TailsBlock>,
    /// Why injections stopped early.
    pub(super) inject_error: Option<String>,
    pub(super) run: RunReport,
    /// The lab's devices' and fast paths' counts.
    pub(super) lab: LabReadout,
    pub(super) serial: String,
}

/// Pair BEGIN and RESULT ucalls into batches with their exit counts.
pub(super) fn collect(
    pumped: PumpResult,
    doorbells: BTreeMap<&'static str, u64>,
    run: RunReport,
    lab: LabReadout,
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
    let tails = pumped.tails.into_iter().map(|t| (t.scenario, t)).collect();
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
        tails,
        inject_error: pumped.inject_error,
        run,
        lab,
        serial,
    }
}

/// Exits during a batch, minus the RESULT ucall's own exit (an OUT on x86,
/// an MMIO store on arm64).
pub(super) fn loop_exits(b: &Batch) -> ExitSnapshot {
    b.exits.without(arch::UCALL_EXIT, 1)
}

/// KVM's own exit counters that moved during a batch, minus the RESULT
/// ucall's own exit from `exits` (its BEGIN was counted before the first
/// snapshot). Where the RESULT OUT also counts as an `io_exits` (not on
/// hosts whose KVM emulates the guest's I/O), that counter reads one high
/// per batch, i.e. 1/N per iteration.
pub(super) fn kernel_exits(b: &Batch) -> BTreeMap<String, u64> {
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
