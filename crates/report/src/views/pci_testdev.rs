//! The `pci-testdev` view (seed 003): the eight kvm-unit-tests pci-testdev
//! rows, named and ordered as in the seed, with this host's cycles beside
//! the published ones and each row's ratio to its BAR's no-eventfd row.

use serde::Serialize;

use super::common::{self, caption, ratio, Finding, Measured};
use crate::model::{Report, TRAPLINE_VMM};
use crate::render::charts::{hbars, BarValue, HBars, Series, Swatch};
use crate::render::grid::{Align, Cell, Grid, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
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

/// One published row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublishedRow {
    /// The seed's (and our scenario's) name.
    pub name: &'static str,
    /// The row of the same BAR without an eventfd (the ratio's denominator).
    pub no_eventfd: &'static str,
    /// Published cycles.
    pub cycles: u32,
}

/// Everything seed 003 publishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed003 {
    /// The pci-testdev rows, in the seed's order.
    pub rows: [PublishedRow; 8],
    /// The `vmcall` line of the same output.
    pub vmcall: u32,
    /// The `outl_to_kernel` line (an OUT to the in-kernel PIC's ELCR, 0x4d0).
    pub outl_to_kernel: u32,
}

const MMIO_NO: &str = "mmio-no-eventfd:pci-mem";
const PIO_NO: &str = "portio-no-eventfd:pci-io";

/// The published numbers of seed 003 (`/work/shared/seeds/003_dba34c1a1cdd64b1.txt`,
/// the cover letter's "Example test output"; see [`SOURCE`]). The only copy
/// of them in the code.
pub const SEED_003: Seed003 = Seed003 {
    rows: [
        PublishedRow {
            name: MMIO_NO,
            no_eventfd: MMIO_NO,
            cycles: 9075,
        },
        PublishedRow {
            name: "mmio-wildcard-eventfd:pci-mem",
            no_eventfd: MMIO_NO,
            cycles: 3529,
        },
        PublishedRow {
            name: "mmio-datamatch-eventfd:pci-mem",
            no_eventfd: MMIO_NO,
            cycles: 3509,
        },
        PublishedRow {
            name: "mmio-pv-eventfd:pci-mem",
            no_eventfd: MMIO_NO,
            cycles: 1878,
        },
        PublishedRow {
            name: PIO_NO,
            no_eventfd: PIO_NO,
            cycles: 5535,
        },
        PublishedRow {
            name: "portio-wildcard-eventfd:pci-io",
            no_eventfd: PIO_NO,
            cycles: 1846,
        },
        PublishedRow {
            name: "portio-datamatch-eventfd:pci-io",
            no_eventfd: PIO_NO,
            cycles: 1848,
        },
        PublishedRow {
            name: "portio-pv-eventfd:pci-io",
            no_eventfd: PIO_NO,
            cycles: 1842,
        },
    ],
    vmcall: 1519,
    outl_to_kernel: 1745,
};

impl Seed003 {
    /// Published cycles of row `name`.
    pub fn cycles(&self, name: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.name == name)
            .map(|r| f64::from(r.cycles))
    }
}

/// One row of the view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TestdevRow {
    /// Seed and scenario name.
    pub name: &'static str,
    /// Published cycles.
    pub published_cycles: u32,
    /// Published cycles ÷ the published no-eventfd row of the same BAR.
    pub published_ratio: Option<f64>,
    /// This host (trapline).
    pub this_host: Measured,
    /// This host's median ÷ its no-eventfd row's median.
    pub ratio: Option<f64>,
    /// The peer VMM's row, when the report has any peer pci-testdev row.
    pub qemu: Option<Measured>,
    /// The peer's median ÷ its no-eventfd row's median.
    pub qemu_ratio: Option<f64>,
}

/// The whole view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PciTestdevView {
    /// `pci-testdev`.
    pub view: &'static str,
    /// Citation.
    pub source: &'static str,
    /// What is comparable.
    pub caption: String,
    /// The eight rows in the seed's order.
    pub rows: Vec<TestdevRow>,
    /// The seed's conclusions, for the seed and this host.
    pub findings: Vec<Finding>,
}

fn median(rows: &[TestdevRow], name: &str, peer: bool) -> Option<f64> {
    let r = rows.iter().find(|r| r.name == name)?;
    if peer {
        r.qemu.as_ref()?.median
    } else {
        r.this_host.median
    }
}

impl PciTestdevView {
    /// Maps `report` onto [`SEED_003`].
    pub fn build(report: &Report) -> Self {
        let names: Vec<&str> = SEED_003.rows.iter().map(|r| r.name).collect();
        let has_peer = report
            .scenarios
            .iter()
            .any(|s| s.vmm == PEER_VMM && names.contains(&s.name.as_str()));
        let mut rows: Vec<TestdevRow> = SEED_003
            .rows
            .iter()
            .map(|p| TestdevRow {
                name: p.name,
                published_cycles: p.cycles,
                published_ratio: ratio(Some(f64::from(p.cycles)), SEED_003.cycles(p.no_eventfd)),
                this_host: Measured::lookup(report, TRAPLINE_VMM, p.name),
                ratio: None,
                qemu: has_peer.then(|| Measured::lookup(report, PEER_VMM, p.name)),
                qemu_ratio: None,
            })
            .collect();
        let ratios: Vec<(Option<f64>, Option<f64>)> = SEED_003
            .rows
            .iter()
            .zip(&rows)
            .map(|(p, r)| {
                (
                    ratio(r.this_host.median, median(&rows, p.no_eventfd, false)),
                    ratio(
                        r.qemu.as_ref().and_then(|q| q.median),
                        median(&rows, p.no_eventfd, true),
                    ),
                )
            })
            .collect();
        for (r, (ours, peer)) in rows.iter_mut().zip(ratios) {
            r.ratio = ours;
            r.qemu_ratio = peer;
        }
        let findings = findings(report, &rows);
        Self {
            view: "pci-testdev",
            source: SOURCE,
            caption: caption(CAPTION, report.host.nested_note.is_some()),
            rows,
            findings,
        }
    }

    /// The row called `name`.
    pub fn row(&self, name: &str) -> Option<&TestdevRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    fn has_peer(&self) -> bool {
        self.rows.iter().any(|r| r.qemu.is_some())
    }

    fn table(&self) -> Grid {
        use Align::{Left, Right};
        let mut cols = vec![
            ("row", "row", Left),
            ("seed cyc", "seed_cycles", Right),
            ("seed ÷no-evfd", "seed_ratio", Right),
            ("median cyc", "median_cycles", Right),
            ("net cyc", "net_cycles", Right),
            ("÷no-evfd", "ratio", Right),
        ];
        if self.has_peer() {
            cols.push(("qemu median", "qemu_median_cycles", Right));
            cols.push(("qemu ÷no-evfd", "qemu_ratio", Right));
        }
        cols.push(("status", "status", Left));
        let mut t = Grid::titled(&cols);
        for r in &self.rows {
            let mut cells = vec![
                Cell::text(r.name),
                Cell::Num(Some(f64::from(r.published_cycles)), Unit::Cycles),
                Cell::Num(r.published_ratio, Unit::Ratio),
                Cell::Num(r.this_host.median, Unit::Cycles),
                Cell::Num(r.this_host.net, Unit::Cycles),
                Cell::Num(r.ratio, Unit::Ratio),
            ];
            if self.has_peer() {
                let q = r.qemu.as_ref();
                cells.push(Cell::Num(q.and_then(|q| q.median), Unit::Cycles));
                cells.push(Cell::Num(r.qemu_ratio, Unit::Ratio));
            }
            let mut status = r.this_host.status_text();
            if let Some(q) = r.qemu.as_ref().filter(|q| !q.is_measured()) {
                status.push_str(&format!("; qemu {}", q.status_text()));
            }
            cells.push(Cell::Text(status));
            t.push_cells(cells);
        }
        t
    }
}

fn findings(report: &Report, rows: &[TestdevRow]) -> Vec<Finding> {
    let p = |n: &str| SEED_003.cycles(n);
    let m = |n: &str| median(rows, n, false);
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
            published: ratio(
                Some(f64::from(SEED_003.vmcall)),
                Some(f64::from(SEED_003.outl_to_kernel)),
            ),
            this_host: ratio(other("hypercall"), other("pio-kernel-pic")),
        },
    ]
}

impl Page for PciTestdevView {
    fn title(&self) -> String {
        "pci-testdev (seed 003) beside this host".to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    fn grid(&self) -> Grid {
        self.table()
    }

    fn sections(&self) -> Vec<Section> {
        vec![
            Section {
                heading: "Seed conclusions".to_string(),
                items: self.findings.iter().map(Finding::line).collect(),
            },
            Section {
                heading: "Notes".to_string(),
                items: vec![
                    format!("Published: {SOURCE} (outl_to_kernel {}, vmcall {}).", SEED_003.outl_to_kernel, SEED_003.vmcall),
                    "Ratios divide gross medians (like kvm-unit-tests, which subtracts no baseline) by \
                     the no-eventfd row of the same BAR; net cycles subtract this host's noop loop."
                        .to_string(),
                    "The PV MMIO row here writes the doorbell identity to one PV port with a PIO \
                     datamatch ioeventfd: KVM never merged PV MMIO, so it is a port write, as the seed's \
                     \"PV ≈ portio\" conclusion would predict."
                        .to_string(),
                ],
            },
        ]
    }

    fn kut(&self) -> Vec<KutLine> {
        self.rows
            .iter()
            .map(|r| KutLine {
                name: r.name.to_string(),
                cycles: r.this_host.median,
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        let mut series = vec![
            Series {
                name: "seed 003".to_string(),
                color: Swatch::Blue,
                values: self
                    .rows
                    .iter()
                    .map(|r| r.published_ratio.map(BarValue::plain))
                    .collect(),
            },
            Series {
                name: "this host".to_string(),
                color: Swatch::Red,
                values: self
                    .rows
                    .iter()
                    .map(|r| r.ratio.map(BarValue::plain))
                    .collect(),
            },
        ];
        if self.has_peer() {
            series.push(Series {
                name: "qemu".to_string(),
                color: Swatch::Orange,
                values: self
                    .rows
                    .iter()
                    .map(|r| r.qemu_ratio.map(BarValue::plain))
                    .collect(),
            });
        }
        let spec = HBars {
            title: "Each row ÷ its BAR's no-eventfd row".to_string(),
            x_desc: "ratio to the no-eventfd row (1 = as slow as an exit to user space)"
                .to_string(),
            categories: self.rows.iter().map(|r| r.name.to_string()).collect(),
            series,
        };
        vec![Chart {
            title: "pci-testdev ratios".to_string(),
            caption: format!(
                "Published: {SOURCE}. Rows without a bar for this host are not measured."
            ),
            svg: hbars(&spec),
            callout: Vec::new(),
        }]
    }
}
