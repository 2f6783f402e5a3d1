//! The `seeds` view: every seed view one after another, in seed order,
//! each with its caption on what is comparable.

use serde::Serialize;

use super::common::{self, caption};
use super::doorbell::DoorbellView;
use super::paper::PaperView;
use super::pci_config::PciConfigView;
use super::pci_testdev;
use super::seed::SeedView;
use super::vmexit_arm;
use crate::model::Report;
use crate::render::grid::{Align, Grid, Mode, Row, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page, Part};

/// What the whole page says about comparability.
pub const CAPTION: &str = "Each section sets this host beside one published source; none was \
measured on this host's CPU, kernel or VMM, so read each against its own caption and compare \
ratios within a section rather than cycles across them";

/// Every seed view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedsView {
    /// Seed 000.
    pub vmexit_arm: SeedView,
    /// Seed 001 (Table 3).
    pub paper: PaperView,
    /// Seed 002.
    pub doorbell: DoorbellView,
    /// Seed 003.
    pub pci_testdev: SeedView,
    /// Seed 004.
    pub pci_config: PciConfigView,
    /// The page's own caption.
    pub caption: String,
}

/// Seed file number and view name, in page order.
const ORDER: [(&str, &str); 5] = [
    ("000", "vmexit-arm"),
    ("001", "paper"),
    ("002", "doorbell"),
    ("003", "pci-testdev"),
    ("004", "pci-config"),
];

impl SeedsView {
    /// Builds every seed view from `report`.
    pub fn build(report: &Report) -> Self {
        Self {
            vmexit_arm: SeedView::build(report, &vmexit_arm::TABLE),
            paper: PaperView::build(report),
            doorbell: DoorbellView::build(report),
            pci_testdev: SeedView::build(report, &pci_testdev::TABLE),
            pci_config: PciConfigView::build(report),
            caption: caption(CAPTION, report.host.nested_note.is_some()),
        }
    }

    fn page(&self, name: &str) -> &dyn Page {
        match name {
            "vmexit-arm" => &self.vmexit_arm,
            "paper" => &self.paper,
            "doorbell" => &self.doorbell,
            "pci-testdev" => &self.pci_testdev,
            _ => &self.pci_config,
        }
    }

    /// (measured rows, rows) of the view called `name`.
    fn coverage(&self, name: &str) -> (usize, usize) {
        match name {
            "vmexit-arm" => self.vmexit_arm.coverage(),
            "paper" => count(self.paper.rows.iter().map(|r| r.this_host.is_some())),
            "doorbell" => count(self.doorbell.rows.iter().map(|r| r.this_host.is_measured())),
            "pci-testdev" => self.pci_testdev.coverage(),
            _ => count(
                self.pci_config
                    .rows
                    .iter()
                    .map(|r| r.this_host.is_measured()),
            ),
        }
    }
}

fn count(it: impl Iterator<Item = bool>) -> (usize, usize) {
    it.fold((0, 0), |(m, n), ok| (m + usize::from(ok), n + 1))
}

/// One view's data in the JSON, serialized as the view itself.
#[derive(Serialize)]
#[serde(untagged)]
enum PartData<'a> {
    VmexitArm(&'a SeedView),
    Paper(&'a PaperView),
    Doorbell(&'a DoorbellView),
    PciTestdev(&'a SeedView),
    PciConfig(&'a PciConfigView),
}

/// One view's entry in the JSON.
#[derive(Serialize)]
struct JsonPart<'a> {
    view: &'a str,
    seed: &'a str,
    title: String,
    caption: Option<String>,
    data: PartData<'a>,
}

/// The JSON of the whole view.
#[derive(Serialize)]
struct JsonSeeds<'a> {
    view: &'static str,
    caption: &'a str,
    parts: Vec<JsonPart<'a>>,
}

impl Page for SeedsView {
    fn title(&self) -> String {
        "This host beside the published seeds".to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    /// The overview shown before the parts.
    fn grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("seed", Left),
            ("view", Left),
            ("section", Left),
            ("rows measured", Right),
        ]);
        for (seed, name) in ORDER {
            let (m, n) = self.coverage(name);
            g.push(Row::cells(vec![
                seed.to_string(),
                name.to_string(),
                self.page(name).title(),
                format!("{m} of {n}"),
            ]));
        }
        g
    }

    /// Every part's CSV table in long form: one record per cell.
    fn csv_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("view", Left),
            ("row", Right),
            ("column", Left),
            ("value", Left),
        ]);
        for (_, name) in ORDER {
            let part = self.page(name).csv_grid();
            for (i, row) in part.rows.iter().enumerate() {
                let cells = row.padded(part.columns.len(), Mode::Csv);
                for (col, value) in part.columns.iter().zip(cells) {
                    g.push(Row::cells(vec![
                        name.to_string(),
                        (i + 1).to_string(),
                        col.csv_title.clone(),
                        value,
                    ]));
                }
            }
        }
        g
    }

    fn sections(&self) -> Vec<Section> {
        Vec::new()
    }

    fn kut(&self) -> Vec<KutLine> {
        ORDER
            .iter()
            .flat_map(|(_, name)| {
                self.page(name).kut().into_iter().map(move |l| KutLine {
                    name: format!("{name}:{}", l.name),
                    cycles: l.cycles,
                })
            })
            .collect()
    }

    fn json(&self) -> String {
        let parts = ORDER
            .iter()
            .map(|(seed, name)| {
                let page = self.page(name);
                JsonPart {
                    view: name,
                    seed,
                    title: page.title(),
                    caption: page.caption(),
                    data: match *name {
                        "vmexit-arm" => PartData::VmexitArm(&self.vmexit_arm),
                        "paper" => PartData::Paper(&self.paper),
                        "doorbell" => PartData::Doorbell(&self.doorbell),
                        "pci-testdev" => PartData::PciTestdev(&self.pci_testdev),
                        _ => PartData::PciConfig(&self.pci_config),
                    },
                }
            })
            .collect();
        common::json(&JsonSeeds {
            view: "seeds",
            caption: &self.caption,
            parts,
        })
    }

    fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }

    fn parts(&self) -> Vec<Part<'_>> {
        ORDER
            .iter()
            .map(|(_, name)| Part {
                name,
                page: self.page(name),
            })
            .collect()
    }
}
