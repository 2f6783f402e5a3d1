//! The `pci-testdev` view (seed 003): the eight kvm-unit-tests pci-testdev
//! rows, named and ordered as in the seed, with this host's cycles beside
//! the published ones and each row's ratio to its BAR's no-eventfd row.

use super::seed::{Bars, Callout, Field, SeedChart, SeedRow, SeedTable, MEDIAN_NET};
use crate::derive::findings::{
    self,
    pci_testdev::{HYPERCALL, MMIO_NO, MMIO_PV, MMIO_WILDCARD, PIO_KERNEL, PIO_NO, PIO_WILDCARD},
    Finding,
};
use crate::model::Report;
use crate::unit::Unit;

/// Where the published numbers come from.
pub const SOURCE: &str = "Michael S. Tsirkin, \"[PATCH 0/6] kvm: pci PORT IO MMIO and PV MMIO \
speed tests\", kvm and qemu-devel lists, 4 April 2013: kvm-unit-tests vmexit output with \
QEMU's pci-testdev";

/// What carries over from the seed and what does not.
pub const CAPTION: &str = "Seed 003 ran the same kvm-unit-tests pci-testdev rows on 2013 \
bare-metal x86 under QEMU and KVM, so the rows mean the same here but the cycles come from \
another CPU, kernel and VMM: compare each row's ratio to its no-eventfd row, not the cycles";

/// The peer VMM whose rows get a column when present.
pub const PEER_VMM: &str = "qemu";

/// A row named like its scenario, divided by its BAR's no-eventfd row.
const fn row(name: &'static str, per: &'static str, published: &'static [Option<f64>]) -> SeedRow {
    SeedRow::new(name, name, published, per)
}

/// Seed 003 and how this host maps onto it: the published numbers
/// (`/work/shared/seeds/003_dba34c1a1cdd64b1.txt`, the cover letter's
/// "Example test output"; see [`SOURCE`]), the pci-testdev rows in the
/// seed's order plus its `vmcall` line and its `outl_to_kernel` line (an
/// OUT to the in-kernel PIC's ELCR, 0x4d0). The only copy of them in the
/// code.
pub const TABLE: SeedTable = SeedTable {
    view: "pci-testdev",
    title: "pci-testdev (seed 003) beside this host",
    source: SOURCE,
    caption: CAPTION,
    label: Field::new("name", "row", "row"),
    published: &[(
        Field::new("published_cycles", "seed cyc", "seed_cycles"),
        Unit::Cycles,
    )],
    published_ratio: Some(Field::new("published_ratio", "seed ÷no-evfd", "seed_ratio")),
    measures: MEDIAN_NET,
    ratio: Some(Field::new("ratio", "÷no-evfd", "ratio")),
    peer: Some(PEER_VMM),
    rows: &[
        row(MMIO_NO, MMIO_NO, &[Some(9075.0)]),
        row(MMIO_WILDCARD, MMIO_NO, &[Some(3529.0)]),
        row("mmio-datamatch-eventfd:pci-mem", MMIO_NO, &[Some(3509.0)]),
        row(MMIO_PV, MMIO_NO, &[Some(1878.0)]),
        row(PIO_NO, PIO_NO, &[Some(5535.0)]),
        row(PIO_WILDCARD, PIO_NO, &[Some(1846.0)]),
        row("portio-datamatch-eventfd:pci-io", PIO_NO, &[Some(1848.0)]),
        row("portio-pv-eventfd:pci-io", PIO_NO, &[Some(1842.0)]),
    ],
    also: &[("outl_to_kernel", 1745), ("vmcall", 1519)],
    findings: Some(findings),
    findings_heading: "Seed conclusions",
    notes: &[
        "Ratios divide gross medians (like kvm-unit-tests, which subtracts no baseline) by \
         the no-eventfd row of the same BAR; net cycles subtract this host's noop loop.",
        "The PV MMIO row here writes the doorbell identity to one PV port with a PIO \
         datamatch ioeventfd: KVM never merged PV MMIO, so it is a port write, as the seed's \
         \"PV ≈ portio\" conclusion would predict.",
    ],
    chart: SeedChart {
        heading: "pci-testdev ratios",
        title: "Each row ÷ its BAR's no-eventfd row",
        x_desc: "ratio to the no-eventfd row (1 = as slow as an exit to user space)",
        published: "seed 003",
        caption: "Rows without a bar for this host are not measured.",
        bars: Bars::Ratios,
        callout: Callout::None,
        source_note: None,
    },
    ..SeedTable::BASE
};

/// The seed's `also` numbers that stand for a scenario: (scenario, name).
const ALSO: [(&str, &str); 2] = [(HYPERCALL, "vmcall"), (PIO_KERNEL, "outl_to_kernel")];

fn findings(report: &Report) -> Vec<Finding> {
    let published = |n: &str| {
        TABLE.published(n).or_else(|| {
            let (_, name) = ALSO.iter().find(|(s, _)| *s == n)?;
            TABLE.also(name)
        })
    };
    findings::pci_testdev(&published, &|n| findings::median(report, n))
}
