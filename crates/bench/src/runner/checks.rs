//! What each scenario's check demands of a batch, and its description.

use crate::lab::probe::ProbeRegister;
use trapline_bus::{ExitKind, ExitSnapshot};

use super::ucall::{Batch, ProbeRun};
use crate::catalog::Check;

pub(super) fn describe_check(check: Check, n: u64) -> String {
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
        Check::Testdev(_, Some(k)) => {
            format!("{n} {} exits; pci-testdev count = every write", k.name())
        }
        Check::Testdev(_, None) => {
            "0 exits; pci-testdev count (eventfd fires) = every write".into()
        }
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
pub(super) fn user_exits(exits: &ExitSnapshot) -> u64 {
    exits.total_exits() - exits.get(ExitKind::Interrupted)
}

pub(super) fn verify(
    check: Check,
    b: &Batch,
    exits: &ExitSnapshot,
    total: u64,
    run: &ProbeRun,
) -> Result<(), String> {
    let n = b.iterations;
    let got = |k: ExitKind| exits.get(k);
    // What a failure message shows: the kinds that moved, by name.
    let seen = exits.nonzero();
    let lab = &run.lab;
    let device = |r: ProbeRegister| lab.probe_pio.writes(r) + lab.probe_mmio.writes(r);
    let all = user_exits(exits);
    match check {
        Check::NoExits if all == 0 => Ok(()),
        Check::NoExits => Err(format!(
            "{all} exits reached trapline in {n} iterations: {seen:?}"
        )),
        Check::UserExit(k, reg) => {
            if got(k) != n || all != n {
                return Err(format!(
                    "expected {n} {} exits and nothing else, saw {seen:?}",
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
                return Err(format!("the ioeventfd path leaked {all} exits to user space in {n} iterations: {seen:?}"));
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
        Check::Testdev(_, exit) => {
            let want = if exit.is_some() { n } else { 0 };
            if all != want || exit.is_some_and(|k| got(k) != n) {
                return Err(format!(
                    "expected {want} {} exits in {n} iterations, saw {seen:?}",
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
                    "{all} exits during the batch (only its start ucall expected): {seen:?}"
                ));
            }
            Ok(())
        }
        Check::Doorbell(fd, exit) => {
            let want = if exit.is_some() { n } else { 0 };
            if all != want || exit.is_some_and(|k| got(k) != n) {
                return Err(format!("expected {want} exits for {n} rings, saw {seen:?}"));
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
            if got(ExitKind::FastPort) != n || all != n {
                return Err(format!(
                    "expected {n} floor exits and nothing else, saw {seen:?}"
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
pub(super) fn exact_exits(
    per: &[(ExitKind, u64)],
    n: u64,
    exits: &ExitSnapshot,
    all: u64,
) -> Result<(), String> {
    let want_all: u64 = per.iter().map(|(_, c)| c * n).sum();
    let seen = exits.nonzero();
    let each = per.iter().all(|(k, c)| exits.get(*k) == c * n);
    if all == want_all && each {
        Ok(())
    } else {
        Err(format!(
            "expected {per:?} exits per iteration over {n} iterations, saw {seen:?}"
        ))
    }
}
