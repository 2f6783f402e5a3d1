//! The `pci-testdev` view (seed 003): the eight kvm-unit-tests pci-testdev
//! rows, named and ordered as in the seed, with this host's cycles beside
//! the published ones and each row's ratio to its BAR's no-eventfd row.

use super::common::{self, ratio, Finding};
use super::seed::{Field, SeedChart, SeedRow, SeedTable, SeedView};
use crate::model::{Report, TRAPLINE_VMM};
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

const MMIO_NO: &str = "mmio-no-eventfd:pci-mem";
const PIO_NO: &str = "portio-no-eventfd:pci-io";

/// A row named like its scenario, divided by its BAR's no-eventfd row.
const fn row(name: &'static str, per: &'static str, published: &'static [Option<u32>]) -> SeedRow {
    SeedRow {
        label: name,
        scenario: name,
        published,
        per,
    }
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
    label: Field {
        key: "name",
        title: "row",
        csv: "row",
    },
    scenario_column: false,
    published: &[Field {
        key: "published_cycles",
        title: "seed cyc",
        csv: "seed_cycles",
    }],
    unit: Unit::Cycles,
    published_ratio: Field {
        key: "published_ratio",
        title: "seed ÷no-evfd",
        csv: "seed_ratio",
    },
    ratio: Field {
        key: "ratio",
        title: "÷no-evfd",
        csv: "ratio",
    },
    peer: Some(PEER_VMM),
    rows: &[
        row(MMIO_NO, MMIO_NO, &[Some(9075)]),
        row("mmio-wildcard-eventfd:pci-mem", MMIO_NO, &[Some(3529)]),
        row("mmio-datamatch-eventfd:pci-mem", MMIO_NO, &[Some(3509)]),
        row("mmio-pv-eventfd:pci-mem", MMIO_NO, &[Some(1878)]),
        row(PIO_NO, PIO_NO, &[Some(5535)]),
        row("portio-wildcard-eventfd:pci-io", PIO_NO, &[Some(1846)]),
        row("portio-datamatch-eventfd:pci-io", PIO_NO, &[Some(1848)]),
        row("portio-pv-eventfd:pci-io", PIO_NO, &[Some(1842)]),
    ],
    also: &[("outl_to_kernel", 1745), ("vmcall", 1519)],
    findings: Some(findings),
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
    },
};

fn findings(report: &Report, view: &SeedView) -> Vec<Finding> {
    let p = |n: &str| TABLE.published(n);
    let m = |n: &str| view.median(n);
    let premium = |get: &dyn Fn(&str) -> Option<f64>| {
        ratio(
            common::difference(get(MMIO_NO), get(PIO_NO)),
            common::difference(
                get("mmio-wildcard-eventfd:pci-mem"),
                get("portio-wildcard-eventfd:pci-io"),
            ),
        )
    };
    let other = |n: &str| {
        report
            .scenario(TRAPLINE_VMM, n)
            .and_then(|s| s.median())
            .and_then(common::finite)
    };
    vec![
        Finding {
            name: "mmio-exit-premium".to_string(),
            what: "MMIO exit to user space over PIO, as a multiple of MMIO ioeventfd over PIO \
                   ioeventfd (seed: \"double\")"
                .to_string(),
            formula: "(mmio-no-eventfd − portio-no-eventfd) ÷ (mmio-wildcard-eventfd − \
                      portio-wildcard-eventfd)"
                .to_string(),
            unit: Unit::Ratio,
            published: premium(&p),
            this_host: premium(&m),
        },
        Finding {
            name: "pv-vs-portio".to_string(),
            what:
                "PV MMIO doorbell against a port I/O eventfd (seed: \"almost as fast as portio\")"
                    .to_string(),
            formula: "mmio-pv-eventfd ÷ portio-wildcard-eventfd".to_string(),
            unit: Unit::Ratio,
            published: ratio(
                p("mmio-pv-eventfd:pci-mem"),
                p("portio-wildcard-eventfd:pci-io"),
            ),
            this_host: ratio(
                m("mmio-pv-eventfd:pci-mem"),
                m("portio-wildcard-eventfd:pci-io"),
            ),
        },
        Finding {
            name: "hypercall-vs-portio".to_string(),
            what: "hypercall against an in-kernel port write (seed: \"hypercalls are measureably \
                   faster than port io\")"
                .to_string(),
            formula: "hypercall ÷ pio-kernel-pic (seed: vmcall ÷ outl_to_kernel)".to_string(),
            unit: Unit::Ratio,
            published: ratio(TABLE.also("vmcall"), TABLE.also("outl_to_kernel")),
            this_host: ratio(other("hypercall"), other("pio-kernel-pic")),
        },
    ]
}
