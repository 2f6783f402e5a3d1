//! What each scenario's check demands of a batch, and its description.
//! Both are texts for people: exit counts print as `1 pio-write + 1
//! pio-read`, never as Rust's Debug form.

use std::fmt;

use trapline_bus::{ExitKind, ExitSnapshot};
use trapline_lab_devices::probe::ProbeRegister;

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
        Check::ExitsPerIter(per) => {
            format!("{} exits per read; vendor/device read back", PerKind(per))
        }
        Check::Scan(per) => format!("{} exits per scan; every function found", PerKind(per)),
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
    let seen = Seen(exits);
    let lab = &run.lab;
    let device = |r: ProbeRegister| lab.probe_pio.writes(r) + lab.probe_mmio.writes(r);
    let all = user_exits(exits);
    match check {
        Check::NoExits if all == 0 => Ok(()),
        Check::NoExits => Err(format!(
            "{all} exits reached trapline in {n} iterations: {seen}"
        )),
        Check::UserExit(k, reg) => {
            if got(k) != n || all != n {
                return Err(format!(
                    "expected {n} {} exits and nothing else, saw {seen}",
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
                return Err(format!(
                    "the ioeventfd path leaked {all} exits to user space in {n} iterations: {seen}"
                ));
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
                    "expected {want} {} exits in {n} iterations, saw {seen}",
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
                    "{all} exits during the batch (only its start ucall expected): {seen}"
                ));
            }
            Ok(())
        }
        Check::Doorbell(fd, exit) => {
            let want = if exit.is_some() { n } else { 0 };
            if all != want || exit.is_some_and(|k| got(k) != n) {
                return Err(format!("expected {want} exits for {n} rings, saw {seen}"));
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
                    "expected {n} floor exits and nothing else, saw {seen}"
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
    let seen = Seen(exits);
    let each = per.iter().all(|(k, c)| exits.get(*k) == c * n);
    if all == want_all && each {
        Ok(())
    } else {
        Err(format!(
            "expected {} exits per iteration over {n} iterations, saw {seen}",
            PerKind(per)
        ))
    }
}

/// Exit counts by kind as people read them: `1 pio-write + 1 pio-read`,
/// `no exits` for none (the word `exits` follows in the sentence).
struct PerKind<'a>(&'a [(ExitKind, u64)]);

impl fmt::Display for PerKind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no");
        }
        for (i, (kind, count)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" + ")?;
            }
            write!(f, "{count} {}", kind.name())?;
        }
        Ok(())
    }
}

/// What a batch's counters saw, for a failure message: `2048 pio-write,
/// 3 hlt`, or `nothing` when no counter moved.
struct Seen<'a>(&'a ExitSnapshot);

impl fmt::Display for Seen<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let moved = self.0.nonzero();
        if moved.is_empty() {
            return f.write_str("nothing");
        }
        for (i, (name, count)) in moved.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{count} {name}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_texts_name_exit_kinds_in_words() {
        const CF8: [(ExitKind, u64); 2] = [(ExitKind::PioWrite, 1), (ExitKind::PioRead, 1)];
        assert_eq!(
            describe_check(Check::ExitsPerIter(&CF8), 64),
            "1 pio-write + 1 pio-read exits per read; vendor/device read back"
        );
        assert_eq!(
            describe_check(Check::Scan(&[]), 4),
            "no exits per scan; every function found"
        );
        assert_eq!(
            describe_check(Check::Scan(&[(ExitKind::MmioRead, 256)]), 4),
            "256 mmio-read exits per scan; every function found"
        );
    }

    #[test]
    fn a_failed_count_says_what_was_seen_in_words() {
        let seen = ExitSnapshot::default()
            .with_count(ExitKind::PioWrite, 3)
            .with_count(ExitKind::Hlt, 1);
        let cf8 = [(ExitKind::PioWrite, 1), (ExitKind::PioRead, 1)];
        let err = exact_exits(&cf8, 2, &seen, 4).unwrap_err();
        assert_eq!(
            err,
            "expected 1 pio-write + 1 pio-read exits per iteration over 2 iterations, \
             saw 3 pio-write, 1 hlt"
        );
        assert_eq!(Seen(&ExitSnapshot::default()).to_string(), "nothing");
    }
}
