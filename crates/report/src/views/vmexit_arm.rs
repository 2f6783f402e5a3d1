//! The `vmexit-arm` view (seed 000): kvm-unit-tests' ARM `vmexit` results
//! on an Arndale board, with and without the vgic, mapped to our rows.

use serde::Serialize;

use super::common::{self, caption, ratio, Measured};
use crate::model::{Report, TRAPLINE_VMM};
use crate::render::charts::{hbars, BarValue, HBars, Series, Swatch};
use crate::render::grid::{Align, Cell, Grid, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::unit::Unit;

/// Where the published numbers come from.
pub const SOURCE: &str = "kvm-unit-tests arm/vmexit on an Arndale board (Exynos 5250, \
Cortex-A15), KVM/ARM with and without vgic/vtimers: the averages of its runs";

/// What carries over from the seed and what does not.
pub const CAPTION: &str = "Seed 000 is ARM (Cortex-A15, GIC with vgic) and this is an x86 host, \
so the exit mechanism, interrupt controller and cycle counter all differ and the cycles do not \
carry over: compare each test's cost relative to a hypercall";

/// One test of the seed and the scenario we measure for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublishedRow {
    /// The kvm-unit-tests test name.
    pub test: &'static str,
    /// The trapline scenario measuring it.
    pub scenario: &'static str,
    /// Average cycles with vgic and vtimers; `None` where not run.
    pub with_vgic: Option<u32>,
    /// Average cycles without them.
    pub without_vgic: Option<u32>,
}

/// The published averages of seed 000 (`/work/shared/seeds/000_278d9a4b2e4aa2a9.txt`,
/// the "average:" blocks as printed — the without-vgic averages are the
/// author's and do not all match the runs listed above them; see
/// [`SOURCE`]). `mmio_kernel` needed a kernel patch and was run without
/// vgic only. The only copy of these numbers in the code.
pub const SEED_000: [PublishedRow; 7] = [
    PublishedRow {
        test: "hvc",
        scenario: HYPERCALL,
        with_vgic: Some(5602),
        without_vgic: Some(2138),
    },
    PublishedRow {
        test: "noop_guest",
        scenario: "noop",
        with_vgic: Some(8),
        without_vgic: Some(7),
    },
    PublishedRow {
        test: "mmio_read_user",
        scenario: "mmio-user-read",
        with_vgic: Some(10816),
        without_vgic: Some(6144),
    },
    PublishedRow {
        test: "mmio_read_vgic",
        scenario: "pio-kernel-pic",
        with_vgic: Some(6792),
        without_vgic: Some(6393),
    },
    PublishedRow {
        test: "ipi",
        scenario: "ipi",
        with_vgic: Some(14198),
        without_vgic: Some(258255),
    },
    PublishedRow {
        test: "eoi",
        scenario: "eoi",
        with_vgic: Some(164),
        without_vgic: Some(15624),
    },
    PublishedRow {
        test: "mmio_kernel",
        scenario: "mmio-kernel-wildcard",
        with_vgic: None,
        without_vgic: Some(7234),
    },
];

const HYPERCALL: &str = "hypercall";

/// One row of the view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArmRow {
    /// kvm-unit-tests test name.
    pub test: &'static str,
    /// Our scenario.
    pub scenario: &'static str,
    /// Published average with vgic.
    pub with_vgic: Option<u32>,
    /// Published average without vgic.
    pub without_vgic: Option<u32>,
    /// Published with-vgic ÷ hvc with vgic.
    pub published_ratio: Option<f64>,
    /// The scenario on this host.
    pub this_host: Measured,
    /// This host's median ÷ its hypercall median.
    pub ratio: Option<f64>,
}

/// The whole view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VmexitArmView {
    /// `vmexit-arm`.
    pub view: &'static str,
    /// Citation.
    pub source: &'static str,
    /// What is comparable.
    pub caption: String,
    /// In the seed's order.
    pub rows: Vec<ArmRow>,
}

impl VmexitArmView {
    /// Maps `report` onto [`SEED_000`].
    pub fn build(report: &Report) -> Self {
        let hvc_pub = SEED_000
            .iter()
            .find(|p| p.scenario == HYPERCALL)
            .and_then(|p| p.with_vgic)
            .map(f64::from);
        let hyper = Measured::lookup(report, TRAPLINE_VMM, HYPERCALL).median;
        let rows = SEED_000
            .iter()
            .map(|p| {
                let m = Measured::lookup(report, TRAPLINE_VMM, p.scenario);
                ArmRow {
                    test: p.test,
                    scenario: p.scenario,
                    with_vgic: p.with_vgic,
                    without_vgic: p.without_vgic,
                    published_ratio: ratio(p.with_vgic.map(f64::from), hvc_pub),
                    ratio: ratio(m.median, hyper),
                    this_host: m,
                }
            })
            .collect();
        Self {
            view: "vmexit-arm",
            source: SOURCE,
            caption: caption(CAPTION, report.host.nested_note.is_some()),
            rows,
        }
    }

    /// The row for kvm-unit-tests test `test`.
    pub fn row(&self, test: &str) -> Option<&ArmRow> {
        self.rows.iter().find(|r| r.test == test)
    }

    fn table(&self) -> Grid {
        use Align::{Left, Right};
        let mut t = Grid::titled(&[
            ("test", "test", Left),
            ("ARM vgic", "arm_vgic_cycles", Right),
            ("ARM no vgic", "arm_no_vgic_cycles", Right),
            ("ARM ÷hvc", "arm_vgic_ratio_to_hvc", Right),
            ("scenario", "scenario", Left),
            ("median cyc", "median_cycles", Right),
            ("net cyc", "net_cycles", Right),
            ("÷hypercall", "ratio_to_hypercall", Right),
            ("status", "status", Left),
        ]);
        for r in &self.rows {
            t.push_cells(vec![
                Cell::text(r.test),
                Cell::Num(r.with_vgic.map(f64::from), Unit::Cycles),
                Cell::Num(r.without_vgic.map(f64::from), Unit::Cycles),
                Cell::Num(r.published_ratio, Unit::Ratio),
                Cell::text(r.scenario),
                Cell::Num(r.this_host.median, Unit::Cycles),
                Cell::Num(r.this_host.net, Unit::Cycles),
                Cell::Num(r.ratio, Unit::Ratio),
                Cell::Text(r.this_host.status_text()),
            ]);
        }
        t
    }
}

impl Page for VmexitArmView {
    fn title(&self) -> String {
        "kvm-unit-tests ARM vmexit (seed 000) beside this host".to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    fn grid(&self) -> Grid {
        self.table()
    }

    fn sections(&self) -> Vec<Section> {
        vec![Section {
            heading: "Notes".to_string(),
            items: vec![
                format!("Published: {SOURCE}."),
                "Mapping: hvc → hypercall (vmcall/vmmcall), noop_guest → noop, mmio_read_user → \
                 mmio-user-read, mmio_read_vgic → pio-kernel-pic and mmio_kernel → mmio-kernel-wildcard: \
                 x86 here has no in-kernel MMIO device to read, so in-kernel MMIO is the ioeventfd \
                 path (a write) and an in-kernel device read is the PIC's ELCR port (an IN)."
                    .to_string(),
                "kvm-unit-tests on ARM times each operation with a counter read on either side, so \
                 its numbers are gross (noop_guest is that overhead); the ratios here divide gross \
                 medians by the hypercall's. eoi is timed inside the handler, so it has no net value."
                    .to_string(),
                "Without vgic, ipi and eoi go through user space and vary several-fold between runs; only \
                 the with-vgic column is charted and used for ratios."
                    .to_string(),
            ],
        }]
    }

    fn kut(&self) -> Vec<KutLine> {
        self.rows
            .iter()
            .map(|r| KutLine {
                name: r.test.to_string(),
                cycles: r.this_host.median,
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        let spec = HBars {
            title: "Cost relative to a hypercall".to_string(),
            x_desc: "cycles ÷ the hypercall's (hvc on ARM)".to_string(),
            categories: self
                .rows
                .iter()
                .map(|r| format!("{} / {}", r.test, r.scenario))
                .collect(),
            series: vec![
                Series {
                    name: "ARM with vgic".to_string(),
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
            ],
        };
        vec![Chart {
            title: "ARM vmexit and this host".to_string(),
            caption: format!("Published: {SOURCE}. Missing bars are not measured."),
            svg: hbars(&spec),
            callout: Vec::new(),
        }]
    }
}
