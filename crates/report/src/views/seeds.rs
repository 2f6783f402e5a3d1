//! The `seeds` view: every seed view one after another, in seed order,
//! each with its caption on what is comparable.

use serde::Serialize;

use super::common::{self, host_caption};
use super::seed::{SeedId, SeedView};
use crate::model::Report;
use crate::render::grid::{Align, Grid, Mode, Row, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page, Part};

/// What the whole page says about comparability.
pub const CAPTION: &str = "Each section sets this host beside one published source; none was \
measured on this host's CPU, kernel or VMM, so read each against its own caption and compare \
ratios within a section rather than cycles across them";

/// Every seed view.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedsView {
    /// One per seed table, in seed order.
    pub parts: Vec<SeedView>,
    /// The page's own caption.
    pub caption: String,
}

impl SeedsView {
    /// Builds every seed view from `report`.
    pub fn build(report: &Report) -> Self {
        Self {
            parts: SeedId::all()
                .map(|s| SeedView::build(report, s.table()))
                .collect(),
            caption: host_caption(CAPTION, &report.host),
        }
    }

    /// The seed views in seed order, each with its seed file's number.
    fn numbered(&self) -> impl Iterator<Item = (&str, &SeedView)> {
        self.parts.iter().map(|v| (v.table.seed.as_str(), v))
    }
}

/// One view's entry in the JSON.
#[derive(Serialize)]
struct JsonPart<'a> {
    view: &'static str,
    seed: &'a str,
    title: String,
    caption: Option<String>,
    data: &'a SeedView,
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
        for (seed, v) in self.numbered() {
            let (m, n) = v.coverage();
            g.push(Row::cells(vec![
                seed.to_string(),
                v.table.view.to_string(),
                v.title(),
                format!("{m} of {n}"),
            ]));
        }
        // The view's name is in each part's heading below.
        g.droppable(&["view"]);
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
        for (_, v) in self.numbered() {
            let part = v.csv_grid();
            for (i, row) in part.rows.iter().enumerate() {
                let cells = row.padded(part.columns.len(), Mode::Csv);
                for (col, value) in part.columns.iter().zip(cells) {
                    g.push(Row::cells(vec![
                        v.table.view.to_string(),
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
        self.numbered()
            .flat_map(|(_, v)| {
                v.kut().into_iter().map(move |l| KutLine {
                    name: format!("{}:{}", v.table.view, l.name),
                    cycles: l.cycles,
                })
            })
            .collect()
    }

    fn json(&self) -> String {
        let parts = self
            .numbered()
            .map(|(seed, v)| JsonPart {
                view: v.table.view,
                seed,
                title: v.title(),
                caption: v.caption(),
                data: v,
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
        self.numbered()
            .map(|(_, v)| Part {
                name: v.table.view,
                page: v as &dyn Page,
            })
            .collect()
    }
}
