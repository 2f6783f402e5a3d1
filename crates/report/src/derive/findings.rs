//! The seeds' conclusions ("findings") as formulas over scenario names.
//!
//! Each formula runs twice on the same scenario names: once with a lookup
//! giving the seed's published value of the row mapped to the scenario,
//! once with this host's measured value. So the seed and this host are
//! always compared by the same arithmetic, and the views only supply the
//! two lookups. Missing inputs give `None` (see [`crate::guarded`]).

use serde::Serialize;

use crate::fmt;
use crate::guarded::{difference, finite, ratio};
use crate::model::{Report, TRAPLINE_VMM};
use crate::unit::Unit;

/// What a view shows where a value has no measurement behind it.
pub const NOT_MEASURED: &str = "not measured";

/// A value of a scenario (published or measured), by scenario name.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<f64>;

/// A comparison the seed draws, with its published and this host's value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Short name (JSON).
    pub name: String,
    /// What it compares, in words.
    pub what: String,
    /// How this host's value is computed, from scenario names.
    pub formula: String,
    /// Of `published` and `this_host`.
    pub unit: Unit,
    /// The seed's value (computed from its published numbers).
    pub published: Option<f64>,
    /// This host's value, when its inputs were measured.
    pub this_host: Option<f64>,
}

impl Finding {
    /// One line: `what: seed V · this host V  [formula]`.
    pub fn line(&self) -> String {
        format!(
            "{}: seed {} · this host {}  [{}]",
            self.what,
            value(self.published, self.unit),
            self.this_host
                .map(|v| value(Some(v), self.unit))
                .unwrap_or_else(|| NOT_MEASURED.to_string()),
            self.formula
        )
    }
}

/// A value with its unit; `–` when absent.
pub fn value(v: Option<f64>, unit: Unit) -> String {
    match v.and_then(finite) {
        None => "–".to_string(),
        Some(v) => fmt::with_unit(v, unit),
    }
}

/// One finding: `f` applied to the published and to the measured lookup.
fn finding(
    name: impl Into<String>,
    what: impl Into<String>,
    formula: impl Into<String>,
    unit: Unit,
    (published, this_host): (Lookup, Lookup),
    f: impl Fn(Lookup) -> Option<f64>,
) -> Finding {
    Finding {
        name: name.into(),
        what: what.into(),
        formula: formula.into(),
        unit,
        published: f(published),
        this_host: f(this_host),
    }
}

/// Median cycles per iteration of trapline's `name`, when measured.
pub fn median(report: &Report, name: &str) -> Option<f64> {
    report
        .scenario(TRAPLINE_VMM, name)
        .and_then(|s| s.median())
        .and_then(finite)
}

/// Nanoseconds as microseconds: `None` unless `ns` is positive and finite
/// (a zero or negative time is no round trip). The one ns → µs step of
/// the views and findings.
pub fn micros_from_ns(ns: Option<f64>) -> Option<f64> {
    // NaN fails the comparison and an infinite ns stays infinite after the
    // division, so `finite` on the quotient rejects both.
    ns.filter(|v| *v > 0.0).and_then(|v| finite(v / 1e3))
}

/// Round trip per iteration of trapline's `name` in microseconds (median
/// ns ÷ 1000): needs the TSC frequency.
pub fn rtt_us(report: &Report, name: &str) -> Option<f64> {
    let s = report.scenario(TRAPLINE_VMM, name)?;
    micros_from_ns(median(report, name).and(s.ns_per_iter))
}

/// Scenario names of the pci-testdev findings (seed 003).
pub mod pci_testdev {
    /// MMIO BAR write completed in user space.
    pub const MMIO_NO: &str = "mmio-no-eventfd:pci-mem";
    /// PIO BAR write completed in user space.
    pub const PIO_NO: &str = "portio-no-eventfd:pci-io";
    /// MMIO BAR write completed by a wildcard ioeventfd.
    pub const MMIO_WILDCARD: &str = "mmio-wildcard-eventfd:pci-mem";
    /// PIO BAR write completed by a wildcard ioeventfd.
    pub const PIO_WILDCARD: &str = "portio-wildcard-eventfd:pci-io";
    /// The PV MMIO doorbell.
    pub const MMIO_PV: &str = "mmio-pv-eventfd:pci-mem";
    /// A hypercall (the seed's `vmcall` line).
    pub const HYPERCALL: &str = "hypercall";
    /// A port write to an in-kernel device (the seed's `outl_to_kernel`).
    pub const PIO_KERNEL: &str = "pio-kernel-pic";
}

/// Seed 003's conclusions: the MMIO exit premium, PV MMIO against port I/O
/// and hypercalls against port I/O.
pub fn pci_testdev(published: Lookup, this_host: Lookup) -> Vec<Finding> {
    use pci_testdev::*;
    let both = (published, this_host);
    vec![
        finding(
            "mmio-exit-premium",
            "MMIO exit to user space over PIO, as a multiple of MMIO ioeventfd over PIO \
             ioeventfd (seed: \"double\")",
            "(mmio-no-eventfd − portio-no-eventfd) ÷ (mmio-wildcard-eventfd − \
             portio-wildcard-eventfd)",
            Unit::Ratio,
            both,
            |get| {
                ratio(
                    difference(get(MMIO_NO), get(PIO_NO)),
                    difference(get(MMIO_WILDCARD), get(PIO_WILDCARD)),
                )
            },
        ),
        finding(
            "pv-vs-portio",
            "PV MMIO doorbell against a port I/O eventfd (seed: \"almost as fast as portio\")",
            "mmio-pv-eventfd ÷ portio-wildcard-eventfd",
            Unit::Ratio,
            both,
            |get| ratio(get(MMIO_PV), get(PIO_WILDCARD)),
        ),
        finding(
            "hypercall-vs-portio",
            "hypercall against an in-kernel port write (seed: \"hypercalls are measureably \
             faster than port io\")",
            "hypercall ÷ pio-kernel-pic (seed: vmcall ÷ outl_to_kernel)",
            Unit::Ratio,
            both,
            |get| ratio(get(HYPERCALL), get(PIO_KERNEL)),
        ),
    ]
}

/// Scenario names of the doorbell findings (seed 002).
pub mod doorbell {
    /// Doorbell through an MMIO exit to user space.
    pub const USER_MMIO: &str = "doorbell-user-mmio";
    /// Doorbell through an MMIO ioeventfd.
    pub const IOEVENTFD_MMIO: &str = "doorbell-ioeventfd-mmio";
    /// Doorbell through a PIO ioeventfd.
    pub const IOEVENTFD_PIO: &str = "doorbell-ioeventfd-pio";
    /// The round-trip saving's name.
    pub const SAVING: &str = "userspace-hop-saving";
}

/// Seed 002's conclusions on round trips (µs): what skipping the userspace
/// hop saves, and the user/ioeventfd and MMIO/PIO ratios.
pub fn doorbell(published: Lookup, this_host: Lookup) -> Vec<Finding> {
    use doorbell::*;
    let both = (published, this_host);
    vec![
        finding(
            SAVING,
            "round trip saved by skipping the userspace hop",
            format!("{USER_MMIO} − {IOEVENTFD_MMIO} (rtt)"),
            Unit::Micros,
            both,
            |get| difference(get(USER_MMIO), get(IOEVENTFD_MMIO)),
        ),
        finding(
            "user-vs-ioeventfd-mmio",
            "user-space MMIO ÷ ioeventfd MMIO round trip",
            format!("{USER_MMIO} ÷ {IOEVENTFD_MMIO} (rtt)"),
            Unit::Ratio,
            both,
            |get| ratio(get(USER_MMIO), get(IOEVENTFD_MMIO)),
        ),
        finding(
            "mmio-vs-pio-ioeventfd",
            "ioeventfd MMIO ÷ ioeventfd PIO round trip",
            format!("{IOEVENTFD_MMIO} ÷ {IOEVENTFD_PIO} (rtt)"),
            Unit::Ratio,
            both,
            |get| ratio(get(IOEVENTFD_MMIO), get(IOEVENTFD_PIO)),
        ),
    ]
}

/// Scenario names of the pci-config findings (seed 004): CF8, ECAM and
/// read-only ECAM, for single reads and for bus scans.
pub mod pci_config {
    /// Single reads through CF8, ECAM, read-only ECAM.
    pub const READS: [&str; 3] = [
        "pci-config-read-cf8",
        "pci-config-read-ecam",
        crate::derive::ECAM_RO_READ,
    ];
    /// Bus scans through CF8, ECAM, read-only ECAM.
    pub const SCANS: [&str; 3] = ["pci-scan-cf8", "pci-scan-ecam", "pci-scan-ecam-ro"];
}

/// Seed 004's conclusions: each pair of config-access mechanisms as a
/// ratio of per-read costs, for reads and for scans.
pub fn pci_config(published: Lookup, this_host: Lookup) -> Vec<Finding> {
    // (name, numerator, denominator, what): indexes into the triples.
    let pairs = [
        ("pio-vs-mmio", 0, 1, "PIO ÷ MMIO (CF8 ÷ ECAM)"),
        ("mmio-vs-ro", 1, 2, "MMIO ÷ read-only MMIO (ECAM ÷ ECAM-RO)"),
        ("pio-vs-ro", 0, 2, "PIO ÷ read-only MMIO (CF8 ÷ ECAM-RO)"),
    ];
    let kinds = [
        ("reads", "read", pci_config::READS),
        ("scans", "scan", pci_config::SCANS),
    ];
    kinds
        .iter()
        .flat_map(|(kind, per, scen)| {
            pairs.iter().map(move |&(name, num, den, what)| {
                finding(
                    format!("{name}-{kind}"),
                    format!("{what}, {kind}"),
                    format!("{} ÷ {} per {per}", scen[num], scen[den]),
                    Unit::Ratio,
                    (published, this_host),
                    |get| ratio(get(scen[num]), get(scen[den])),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_formula_for_the_seed_and_this_host() {
        let published = |n: &str| match n {
            doorbell::USER_MMIO => Some(9.0),
            doorbell::IOEVENTFD_MMIO => Some(5.0),
            doorbell::IOEVENTFD_PIO => Some(2.5),
            _ => None,
        };
        let here = |n: &str| (n == doorbell::USER_MMIO).then_some(3.0);
        let f = doorbell(&published, &here);
        assert_eq!(f[0].published, Some(4.0));
        assert_eq!(f[1].published, Some(1.8));
        assert_eq!(f[2].published, Some(2.0));
        assert!(f.iter().all(|f| f.this_host.is_none()), "inputs missing");
        assert_eq!(
            f[0].line().split(" · ").nth(1),
            Some("this host not measured  [doorbell-user-mmio − doorbell-ioeventfd-mmio (rtt)]")
        );
    }

    #[test]
    fn micros_from_ns_keeps_only_positive_finite_times() {
        assert_eq!(micros_from_ns(Some(9090.0)), Some(9.09));
        assert_eq!(micros_from_ns(Some(0.0)), None, "no round trip");
        assert_eq!(micros_from_ns(Some(-5.0)), None);
        assert_eq!(micros_from_ns(Some(f64::NAN)), None);
        assert_eq!(micros_from_ns(Some(f64::INFINITY)), None);
        assert_eq!(micros_from_ns(None), None);
    }

    #[test]
    fn pci_config_pairs_reads_and_scans() {
        let cost = |n: &str| match n {
            "pci-config-read-cf8" => Some(20.0),
            "pci-config-read-ecam" => Some(10.0),
            "pci-config-read-ecam-ro" => Some(0.0),
            _ => None,
        };
        let f = pci_config(&cost, &|_| None);
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "pio-vs-mmio-reads",
                "mmio-vs-ro-reads",
                "pio-vs-ro-reads",
                "pio-vs-mmio-scans",
                "mmio-vs-ro-scans",
                "pio-vs-ro-scans"
            ]
        );
        assert_eq!(f[0].published, Some(2.0));
        assert_eq!(f[1].published, None, "zero denominator");
        assert_eq!(f[3].formula, "pci-scan-cf8 ÷ pci-scan-ecam per scan");
    }
}
