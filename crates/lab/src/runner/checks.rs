//! What each scenario's check demands of a batch, and its description.
//! Both are texts for people: exit counts print as `1 pio-write + 1
//! pio-read`, never as Rust's Debug form.

use std::collections::BTreeMap;
use std::fmt;

use trapline_bus::{ExitKind, ExitSnapshot};
use trapline_lab_devices::probe::ProbeRegister;
use trapline_lab_devices::LabReadout;

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

/// Whether batch `b` did what `check` claims: `exits` are its loop's
/// exits, `total` the iterations the guest made in all (warm-up and the
/// recorded pass included), `recorded` those of the recorded pass (its
/// tails, after the last batch), `run` what the probe VM's host side counted.
pub(super) fn verify(
    check: Check,
    b: &Batch,
    exits: &ExitSnapshot,
    total: u64,
    recorded: u64,
    run: &ProbeRun,
) -> Result<(), String> {
    let batch = Observed {
        n: b.iterations,
        value: b.value,
        exits,
        all: user_exits(exits),
        total,
        recorded,
        host: HostCounts::of(run),
    };
    match check {
        Check::NoExits => batch.no_exits(),
        Check::UserExit(k, reg) => batch.user_exit(k, reg),
        Check::IoEvent(name) => batch.io_event(name),
        Check::Coalesced(r) => batch.coalesced(r),
        Check::Testdev(_, exit) => batch.testdev(exit),
        Check::ExitsPerIter(per) => exact_exits(per, batch.n, exits, batch.all),
        Check::Scan(per) => batch.scan(per),
        Check::Irqfd => batch.irqfd(),
        Check::Doorbell(fd, exit) => batch.doorbell(fd, exit),
        Check::Floor => batch.floor(),
    }
}

/// One batch as its check sees it.
struct Observed<'a> {
    /// Iterations timed.
    n: u64,
    /// The value the guest reported (pci-testdev's count, functions found).
    value: u64,
    /// The loop's exits by kind.
    exits: &'a ExitSnapshot,
    /// Of those, the ones that reached trapline ([`user_exits`]).
    all: u64,
    /// Iterations the guest made in all, warm-up and recorded pass included.
    total: u64,
    /// Of those, the recorded pass's (its tails, after the last batch):
    /// what the host counted includes them, a value the guest read back at
    /// the last batch does not.
    recorded: u64,
    /// What the probe VM's host side counted.
    host: HostCounts<'a>,
}

/// What the probe VM's host side counted: the lab's devices and
/// ioeventfds, the doorbell consumer, the irqfd injector.
struct HostCounts<'a> {
    lab: &'a LabReadout,
    /// Rings the consumer thread counted, per doorbell.
    doorbells: &'a BTreeMap<&'static str, u64>,
    /// PCI functions the machine has on bus 0.
    functions: u64,
    /// irqfd injections the guest acknowledged.
    injected: u64,
    /// Why injections stopped early.
    inject_error: Option<&'a str>,
}

impl<'a> HostCounts<'a> {
    fn of(run: &'a ProbeRun) -> Self {
        HostCounts {
            lab: &run.lab,
            doorbells: &run.doorbells,
            functions: run.functions,
            injected: run.injected,
            inject_error: run.inject_error.as_deref(),
        }
    }
}

impl Observed<'_> {
    fn got(&self, k: ExitKind) -> u64 {
        self.exits.get(k)
    }

    /// What a failure message shows: the kinds that moved, by name.
    fn seen(&self) -> Seen<'_> {
        Seen(self.exits)
    }

    /// Writes the probe devices saw at `r`.
    fn device(&self, r: ProbeRegister) -> u64 {
        let lab = self.host.lab;
        lab.probe_pio.writes(r) + lab.probe_mmio.writes(r)
    }

    /// Whether the loop made one exit of `exit`'s kind per iteration and
    /// nothing else, or none at all without one; and how many it should.
    fn exits_each(&self, exit: Option<ExitKind>) -> (bool, u64) {
        let want = if exit.is_some() { self.n } else { 0 };
        let ok = self.all == want && exit.is_none_or(|k| self.got(k) == self.n);
        (ok, want)
    }

    fn no_exits(&self) -> Result<(), String> {
        let (all, n) = (self.all, self.n);
        if all == 0 {
            return Ok(());
        }
        Err(format!(
            "{all} exits reached trapline in {n} iterations: {}",
            self.seen()
        ))
    }

    fn user_exit(&self, k: ExitKind, reg: Option<ProbeRegister>) -> Result<(), String> {
        let (n, total) = (self.n, self.total);
        if self.got(k) != n || self.all != n {
            return Err(format!(
                "expected {n} {} exits and nothing else, saw {}",
                k.name(),
                self.seen()
            ));
        }
        match reg {
            Some(r) if self.device(r) != total => Err(format!(
                "device saw {} writes, guest made {total}",
                self.device(r)
            )),
            _ => Ok(()),
        }
    }

    fn io_event(&self, name: &str) -> Result<(), String> {
        let (all, n, total) = (self.all, self.n, self.total);
        if all != 0 {
            return Err(format!(
                "the ioeventfd path leaked {all} exits to user space in {n} iterations: {}",
                self.seen()
            ));
        }
        match self.host.lab.ioevent_counts.get(name) {
            Some(&c) if c == total => Ok(()),
            Some(&c) => Err(format!(
                "{name} eventfd counted {c}, guest wrote {total} times"
            )),
            None => Err(format!("{name} ioeventfd was not registered")),
        }
    }

    fn coalesced(&self, r: ProbeRegister) -> Result<(), String> {
        let (all, n, total) = (self.all, self.n, self.total);
        if all >= n {
            return Err(format!(
                "{all} exits in {n} iterations: the writes were not coalesced"
            ));
        }
        if self.device(r) != total {
            return Err(format!(
                "device saw {} writes through the ring, guest made {total}",
                self.device(r)
            ));
        }
        Ok(())
    }

    fn testdev(&self, exit: Option<ExitKind>) -> Result<(), String> {
        let (n, total) = (self.n, self.total);
        let (ok, want) = self.exits_each(exit);
        if !ok {
            return Err(format!(
                "expected {want} {} exits in {n} iterations, saw {}",
                exit.map_or("", |k| k.name()),
                self.seen()
            ));
        }
        // The count was read at the last batch, before the recorded pass.
        let total = total - self.recorded;
        if self.value != total {
            return Err(format!(
                "pci-testdev counted {} writes, guest made {total}",
                self.value
            ));
        }
        Ok(())
    }

    fn scan(&self, per: &[(ExitKind, u64)]) -> Result<(), String> {
        exact_exits(per, self.n, self.exits, self.all)?;
        if self.value != self.host.functions {
            return Err(format!(
                "the scan found {} functions on bus 0, the machine has {}",
                self.value, self.host.functions
            ));
        }
        Ok(())
    }

    fn irqfd(&self) -> Result<(), String> {
        let (all, total, host) = (self.all, self.total, &self.host);
        if let Some(e) = host.inject_error {
            return Err(format!("irqfd injections: {e}"));
        }
        if host.injected != total {
            return Err(format!(
                "{} injections acknowledged, guest expected {total}",
                host.injected
            ));
        }
        if all > 1 {
            return Err(format!(
                "{all} exits during the batch (only its start ucall expected): {}",
                self.seen()
            ));
        }
        Ok(())
    }

    fn doorbell(&self, fd: &str, exit: Option<ExitKind>) -> Result<(), String> {
        let (n, total) = (self.n, self.total);
        let (ok, want) = self.exits_each(exit);
        if !ok {
            return Err(format!(
                "expected {want} exits for {n} rings, saw {}",
                self.seen()
            ));
        }
        let counted = self.host.doorbells.get(fd).copied().unwrap_or(0)
            + self.host.lab.ioevent_counts.get(fd).copied().unwrap_or(0);
        if counted != total {
            return Err(format!(
                "the consumer counted {counted} rings, the guest rang {total} times"
            ));
        }
        Ok(())
    }

    fn floor(&self) -> Result<(), String> {
        let n = self.n;
        if self.got(ExitKind::FastPort) != n || self.all != n {
            return Err(format!(
                "expected {n} floor exits and nothing else, saw {}",
                self.seen()
            ));
        }
        if self.device(ProbeRegister::PioFloor) != 0 {
            return Err("floor writes reached the bus".into());
        }
        Ok(())
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
    use crate::catalog::TestdevBar;
    use std::sync::Arc;
    use trapline_lab_devices::probe::{ProbeDevice, ProbeSpace};

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

    /// A batch of `n` iterations (`total` with the warm-up) that made
    /// `exits`, checked against what the host side counted.
    fn check(
        check: Check,
        n: u64,
        total: u64,
        exits: &ExitSnapshot,
        lab: &LabReadout,
        doorbells: &BTreeMap<&'static str, u64>,
    ) -> Result<(), String> {
        let batch = Observed {
            n,
            value: total,
            exits,
            all: user_exits(exits),
            total,
            recorded: 0,
            host: HostCounts {
                lab,
                doorbells,
                functions: 2,
                injected: 0,
                inject_error: None,
            },
        };
        match check {
            Check::Doorbell(fd, exit) => batch.doorbell(fd, exit),
            Check::IoEvent(name) => batch.io_event(name),
            Check::UserExit(k, reg) => batch.user_exit(k, reg),
            Check::Testdev(_, exit) => batch.testdev(exit),
            _ => unreachable!("not used here"),
        }
    }

    fn lab(ioevents: &[(&'static str, u64)]) -> LabReadout {
        LabReadout {
            probe_pio: Arc::new(ProbeDevice::new(ProbeSpace::Pio)),
            probe_mmio: Arc::new(ProbeDevice::new(ProbeSpace::Mmio)),
            ioevent_counts: ioevents.iter().copied().collect(),
        }
    }

    /// Each check says what it expected and what it saw, in words.
    #[test]
    fn each_check_passes_exact_counts_and_names_what_it_missed() {
        let none = ExitSnapshot::default();
        let writes = ExitSnapshot::default().with_count(ExitKind::MmioWrite, 100);
        let rings = BTreeMap::from([("doorbell-user-mmio", 116)]);
        let user = Check::Doorbell("doorbell-user-mmio", Some(ExitKind::MmioWrite));
        assert_eq!(check(user, 100, 116, &writes, &lab(&[]), &rings), Ok(()));
        let kvm = Check::Doorbell("doorbell-mmio", None);
        assert_eq!(
            check(kvm, 100, 116, &writes, &lab(&[]), &rings),
            Err("expected 0 exits for 100 rings, saw 100 mmio-write".into())
        );
        assert_eq!(
            check(
                kvm,
                100,
                116,
                &none,
                &lab(&[("doorbell-mmio", 115)]),
                &rings
            ),
            Err("the consumer counted 115 rings, the guest rang 116 times".into())
        );
        let wildcard = Check::IoEvent("mmio-wildcard");
        assert_eq!(
            check(wildcard, 100, 116, &none, &lab(&[]), &rings),
            Err("mmio-wildcard ioeventfd was not registered".into())
        );
        assert_eq!(
            check(
                wildcard,
                100,
                116,
                &none,
                &lab(&[("mmio-wildcard", 116)]),
                &rings
            ),
            Ok(())
        );
        let write = Check::UserExit(ExitKind::MmioWrite, Some(ProbeRegister::MmioUser));
        assert_eq!(
            check(write, 100, 116, &writes, &lab(&[]), &rings),
            Err("device saw 0 writes, guest made 116".into())
        );
        let testdev = Check::Testdev(TestdevBar::Mem, Some(ExitKind::MmioWrite));
        assert_eq!(check(testdev, 100, 116, &writes, &lab(&[]), &rings), Ok(()));
        assert_eq!(
            check(testdev, 100, 116, &none, &lab(&[]), &rings),
            Err("expected 100 mmio-write exits in 100 iterations, saw nothing".into())
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
