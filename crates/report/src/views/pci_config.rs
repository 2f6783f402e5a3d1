//! The `pci-config` view (seed 004): PCI config reads through CF8/CFC,
//! ECAM, and ECAM mapped read-only, as cycles per read and seconds per
//! 100,000 reads beside VMware's published times.

use super::seed::{
    Bars, Callout, DerivedLine, Field, Measure, Quantity, SeedChart, SeedRow, SeedTable,
};
use crate::derive::findings::{
    self,
    pci_config::{READS as READ, SCANS as SCAN},
    Finding,
};
use crate::model::Report;
use crate::render::charts::Swatch;
use crate::unit::Unit;

/// Where the published numbers come from.
pub const SOURCE: &str = "Ajay Kaher, \"[PATCH v2] x86/PCI: Prefer MMIO over PIO on VMware \
hypervisor\", September 2022 (as quoted in Wei Liu's reply on xen-devel): 100,000 \
raw_pci_read() calls in a VMware guest";

/// What carries over from the seed and what does not.
pub const CAPTION: &str = "Seed 004 timed Linux's raw_pci_read() in a VMware guest, not KVM, \
in seconds per 100,000 reads including the kernel's own config-access code, so the seconds do \
not carry over: compare the CF8 : ECAM : read-only-ECAM ratios";

/// Reads the published times are for.
pub const READS: u32 = 100_000;

/// Config reads one scan makes (bus 0: 32 devices × 8 functions).
pub const READS_PER_SCAN: u32 = 256;

/// A config-access mechanism: its (JSON, shown) names and the seed's
/// seconds per 100,000 reads through it
/// (`/work/shared/seeds/004_3b34b38919d8d52b.txt`; see [`SOURCE`]).
struct Mechanism {
    names: &'static [(&'static str, &'static str)],
    seconds: &'static [Option<f64>],
}

/// CF8/CFC port I/O: two exits per read.
const CF8: Mechanism = Mechanism {
    names: &[("cf8", "PIO (CF8/CFC)")],
    seconds: &[Some(12.809)],
};
/// ECAM MMIO, trapped: one exit per read.
const ECAM: Mechanism = Mechanism {
    names: &[("ecam", "MMIO (ECAM)")],
    seconds: &[Some(8.517)],
};
/// ECAM mapped read-only in the EPT/NPT: no exit.
const ECAM_RO: Mechanism = Mechanism {
    names: &[("ecam-ro", "MMIO, read-only mapped")],
    seconds: &[Some(0.010)],
};

/// A row: `scenario` reads config space through `mech`, `per_iter` reads
/// per iteration, compared with the read-only row `per` of its kind.
const fn row(scenario: &'static str, mech: Mechanism, per_iter: u32, per: &'static str) -> SeedRow {
    SeedRow {
        texts: mech.names,
        per_iter,
        ..SeedRow::new(scenario, scenario, mech.seconds, per)
    }
}

/// Seed 004 and how this host maps onto it: reads, then scans. The only
/// copy of its numbers in the code (besides the scan times in the notes).
pub const TABLE: SeedTable = SeedTable {
    view: "pci-config",
    title: "PCI config reads (seed 004) beside this host",
    source: SOURCE,
    caption: CAPTION,
    label: Field::new("scenario", "scenario", "scenario"),
    texts: &[Field::new("mechanism", "mechanism", "mechanism")],
    per_iter: Some(Field::new("reads_per_iter", "reads/iter", "reads_per_iter")),
    published: &[(
        Field::new(
            "published_seconds_per_100k",
            "seed s/100k (VMware)",
            "seed_seconds_per_100k_reads",
        ),
        Unit::Seconds,
    )],
    published_ratio: Some(Field::new(
        "published_ratio_to_ro",
        "seed ÷RO",
        "seed_ratio_to_ro",
    )),
    measures: &[
        Measure::new(
            Field::new("cycles_per_read", "cyc/read", "cycles_per_read"),
            Quantity::Median,
        ),
        Measure::new(
            Field::new("ns_per_read", "ns/read", "ns_per_read"),
            Quantity::Nanos,
        ),
        Measure::new(
            Field::new("seconds_per_100k", "s/100k reads", "seconds_per_100k_reads"),
            Quantity::SecondsFor(READS),
        ),
    ],
    ratio: Some(Field::new("ratio_to_ro", "÷ECAM-RO", "ratio_to_ecam_ro")),
    published_last: true,
    rows: &[
        row(READ[0], CF8, 1, READ[2]),
        row(READ[1], ECAM, 1, READ[2]),
        row(READ[2], ECAM_RO, 1, READ[2]),
        row(SCAN[0], CF8, READS_PER_SCAN, SCAN[2]),
        row(SCAN[1], ECAM, READS_PER_SCAN, SCAN[2]),
        row(SCAN[2], ECAM_RO, READS_PER_SCAN, SCAN[2]),
    ],
    findings: Some(findings),
    findings_heading: "Ratios",
    derived: Some(DerivedLine {
        key: "ecam_ro_vs_ram",
        heading: "Derived",
        what: "ECAM-RO read vs RAM read",
        value: crate::derive::ecam_ro_vs_ram,
    }),
    notes: &[
        "Seconds per 100,000 reads = ns per read × 1e5 / 1e9, from the median ns per iteration; a \
         scan reads 256 config dwords (bus 0, every devfn), so its per-read cost is the scan's ÷ \
         256. Ratios are per read, reads against reads and scans against scans.",
        "The seed also reports the guest's whole PCI scan and initialization dropping from ~55 ms \
         to ~18 ms with the read-only mapping (not a per-read figure).",
    ],
    chart: SeedChart {
        heading: "Config read cost",
        title: "Seconds per 100,000 config reads",
        x_desc: "seconds per 100,000 reads",
        published: "seed 004 (VMware)",
        caption: "Scans are per read (÷ 256); missing bars are not measured.",
        bars: Bars::ByText {
            measure: 2,
            series: &[
                ("this host, reads", 1, Swatch::Red),
                ("this host, scans", READS_PER_SCAN, Swatch::Green),
            ],
        },
        callout: Callout::Findings("-reads"),
        source_note: None,
    },
    ..SeedTable::BASE
};

/// The seed's conclusions: published seconds and this host's cycles per
/// read, each looked up by scenario.
fn findings(report: &Report) -> Vec<Finding> {
    let per_read = |n: &str| {
        let r = TABLE.row_for(n)?;
        findings::median(report, n).map(|c| c / f64::from(r.per_iter))
    };
    findings::pci_config(&|n| TABLE.published(n), &per_read)
}
