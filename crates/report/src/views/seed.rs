//! The one seed-table view: a published table described as constant data
//! ([`SeedTable`]: its rows, their published cycles, the scenario each maps
//! to and the row each is divided by) and rendered the same way whatever
//! the seed. Each row shows the published cycles and their ratio to the
//! reference row, then this host's median, net and ratio, and a peer VMM's
//! when the report has it. Ratios carry over between hosts; cycles do not.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::common::{self, caption, ratio, Finding, Measured};
use crate::model::{Report, TRAPLINE_VMM};
use crate::render::charts::{hbars, BarValue, HBars, Series, Swatch};
use crate::render::grid::{Align, Cell, Grid, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::unit::Unit;

/// A column: its JSON key, display title and CSV title.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Key in the view's JSON.
    pub key: &'static str,
    /// Header for people.
    pub title: &'static str,
    /// Header in CSV.
    pub csv: &'static str,
}

/// One published row and what it maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRow {
    /// The seed's name for the row.
    pub label: &'static str,
    /// The trapline scenario measuring it.
    pub scenario: &'static str,
    /// Published values in [`SeedTable::unit`], one per
    /// [`SeedTable::published`] column; `None` where the seed did not run it.
    pub published: &'static [Option<u32>],
    /// The label of the row this one is divided by (itself for a
    /// reference row).
    pub per: &'static str,
}

/// The chart of a seed table: every row's ratio, published and here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedChart {
    /// Heading above the chart.
    pub heading: &'static str,
    /// Title inside it.
    pub title: &'static str,
    /// What the x axis measures.
    pub x_desc: &'static str,
    /// Legend of the published series.
    pub published: &'static str,
    /// The caption after "Published: <source>. ".
    pub caption: &'static str,
}

/// Everything a seed publishes and how this host's results map onto it.
#[derive(Clone, Copy, Debug)]
pub struct SeedTable {
    /// The view's command-line name.
    pub view: &'static str,
    /// Heading.
    pub title: &'static str,
    /// Citation.
    pub source: &'static str,
    /// What carries over from the seed and what does not.
    pub caption: &'static str,
    /// The row label column.
    pub label: Field,
    /// Whether the scenario gets its own column (when it is not the label).
    pub scenario_column: bool,
    /// The published columns; the first one gives the ratios.
    pub published: &'static [Field],
    /// The unit of every published column (and of this host's medians).
    pub unit: Unit,
    /// The published ratio column (first published column ÷ the `per` row's).
    pub published_ratio: Field,
    /// This host's ratio column (median ÷ the `per` row's median).
    pub ratio: Field,
    /// The peer VMM whose rows get columns when the report has any.
    pub peer: Option<&'static str>,
    /// The rows, in the seed's order.
    pub rows: &'static [SeedRow],
    /// Further single numbers the seed publishes, cited in the notes.
    pub also: &'static [(&'static str, u32)],
    /// The seed's own conclusions, computed for the seed and this host.
    pub findings: Option<fn(&Report) -> Vec<Finding>>,
    /// Notes after the citation.
    pub notes: &'static [&'static str],
    /// The chart.
    pub chart: SeedChart,
}

impl SeedTable {
    /// The further published number called `name`.
    pub fn also(&self, name: &str) -> Option<f64> {
        self.also
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| f64::from(*v))
    }

    /// Published cycles (first column) of the row labelled `label`.
    pub fn published(&self, label: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.label == label)
            .and_then(|r| r.published.first().copied().flatten())
            .map(f64::from)
    }
}

/// One row as shown.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRowView {
    /// The published row.
    pub row: &'static SeedRow,
    /// Published cycles ÷ the `per` row's.
    pub published_ratio: Option<f64>,
    /// The scenario on this host.
    pub this_host: Measured,
    /// This host's median ÷ the `per` row's.
    pub ratio: Option<f64>,
    /// The peer's scenario, when the report has any peer row.
    pub peer: Option<Measured>,
    /// The peer's median ÷ its `per` row's.
    pub peer_ratio: Option<f64>,
}

/// A seed table beside this host.
#[derive(Clone, Debug)]
pub struct SeedView {
    /// What it shows.
    pub table: &'static SeedTable,
    /// What is comparable (with the nested clause when it applies).
    pub caption: String,
    /// In the seed's order.
    pub rows: Vec<SeedRowView>,
    /// The seed's conclusions, when it draws any.
    pub findings: Option<Vec<Finding>>,
}

impl PartialEq for SeedView {
    fn eq(&self, o: &Self) -> bool {
        self.table.view == o.table.view
            && self.caption == o.caption
            && self.rows == o.rows
            && self.findings == o.findings
    }
}

impl SeedView {
    /// Maps `report` onto `table`.
    pub fn build(report: &Report, table: &'static SeedTable) -> Self {
        let has_peer = table.peer.is_some_and(|peer| {
            report
                .scenarios
                .iter()
                .any(|s| s.vmm == peer && table.rows.iter().any(|r| r.scenario == s.name.as_str()))
        });
        let lookup = |vmm: &str, label: &str| {
            table
                .rows
                .iter()
                .find(|r| r.label == label)
                .map(|r| Measured::lookup(report, vmm, r.scenario))
                .and_then(|m| m.median)
        };
        let rows = table
            .rows
            .iter()
            .map(|row| {
                let this_host = Measured::lookup(report, TRAPLINE_VMM, row.scenario);
                let peer = table
                    .peer
                    .filter(|_| has_peer)
                    .map(|p| Measured::lookup(report, p, row.scenario));
                SeedRowView {
                    row,
                    published_ratio: ratio(table.published(row.label), table.published(row.per)),
                    ratio: ratio(this_host.median, lookup(TRAPLINE_VMM, row.per)),
                    peer_ratio: table.peer.and_then(|p| {
                        ratio(peer.as_ref().and_then(|m| m.median), lookup(p, row.per))
                    }),
                    this_host,
                    peer,
                }
            })
            .collect();
        Self {
            table,
            caption: caption(table.caption, report.host.nested_note.is_some()),
            rows,
            findings: table.findings.map(|f| f(report)),
        }
    }

    /// This host's median of the row labelled `label`.
    pub fn median(&self, label: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.row.label == label)
            .and_then(|r| r.this_host.median)
    }

    /// (measured rows, rows).
    pub fn coverage(&self) -> (usize, usize) {
        let measured = self.rows.iter().filter(|r| r.this_host.is_measured());
        (measured.count(), self.rows.len())
    }

    fn has_peer(&self) -> bool {
        self.rows.iter().any(|r| r.peer.is_some())
    }
}

/// One row in the JSON, keyed as its table says.
struct RowJson<'a>(&'a SeedTable, &'a SeedRowView);

impl Serialize for RowJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let RowJson(t, r) = self;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(t.label.key, r.row.label)?;
        if t.scenario_column {
            m.serialize_entry("scenario", r.row.scenario)?;
        }
        for (f, v) in t.published.iter().zip(r.row.published) {
            m.serialize_entry(f.key, v)?;
        }
        m.serialize_entry(t.published_ratio.key, &r.published_ratio)?;
        m.serialize_entry("this_host", &r.this_host)?;
        m.serialize_entry(t.ratio.key, &r.ratio)?;
        if let Some(peer) = t.peer {
            m.serialize_entry(peer, &r.peer)?;
            m.serialize_entry(&format!("{peer}_{}", t.ratio.key), &r.peer_ratio)?;
        }
        m.end()
    }
}

impl Serialize for SeedView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("view", self.table.view)?;
        m.serialize_entry("source", self.table.source)?;
        m.serialize_entry("caption", &self.caption)?;
        let rows: Vec<RowJson> = self.rows.iter().map(|r| RowJson(self.table, r)).collect();
        m.serialize_entry("rows", &rows)?;
        if let Some(f) = &self.findings {
            m.serialize_entry("findings", f)?;
        }
        m.end()
    }
}

impl Page for SeedView {
    fn title(&self) -> String {
        self.table.title.to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    fn grid(&self) -> Grid {
        use Align::{Left, Right};
        let t = self.table;
        let peer = t.peer.filter(|_| self.has_peer());
        let mut cols = vec![(t.label.title.to_string(), t.label.csv.to_string(), Left)];
        let mut col = |f: &Field, align| cols.push((f.title.to_string(), f.csv.to_string(), align));
        for f in t.published {
            col(f, Right);
        }
        col(&t.published_ratio, Right);
        if t.scenario_column {
            col(
                &Field {
                    key: "scenario",
                    title: "scenario",
                    csv: "scenario",
                },
                Left,
            );
        }
        col(
            &Field {
                key: "median",
                title: "median cyc",
                csv: "median_cycles",
            },
            Right,
        );
        col(
            &Field {
                key: "net",
                title: "net cyc",
                csv: "net_cycles",
            },
            Right,
        );
        col(&t.ratio, Right);
        if let Some(p) = peer {
            cols.push((format!("{p} median"), format!("{p}_median_cycles"), Right));
            cols.push((
                format!("{p} {}", t.ratio.title),
                format!("{p}_{}", t.ratio.csv),
                Right,
            ));
        }
        cols.push(("status".into(), "status".into(), Left));
        let cols: Vec<(&str, &str, Align)> = cols
            .iter()
            .map(|(a, b, al)| (a.as_str(), b.as_str(), *al))
            .collect();
        let mut g = Grid::titled(&cols);
        for r in &self.rows {
            let mut cells = vec![Cell::text(r.row.label)];
            for v in r.row.published {
                cells.push(Cell::Num(v.map(f64::from), t.unit));
            }
            cells.push(Cell::Num(r.published_ratio, Unit::Ratio));
            if t.scenario_column {
                cells.push(Cell::text(r.row.scenario));
            }
            cells.push(Cell::Num(r.this_host.median, Unit::Cycles));
            cells.push(Cell::Num(r.this_host.net, Unit::Cycles));
            cells.push(Cell::Num(r.ratio, Unit::Ratio));
            let mut status = r.this_host.status_text();
            if let Some(p) = peer {
                let q = r.peer.as_ref();
                cells.push(Cell::Num(q.and_then(|q| q.median), Unit::Cycles));
                cells.push(Cell::Num(r.peer_ratio, Unit::Ratio));
                if let Some(q) = q.filter(|q| !q.is_measured()) {
                    status.push_str(&format!("; {p} {}", q.status_text()));
                }
            }
            cells.push(Cell::Text(status));
            g.push_cells(cells);
        }
        g
    }

    fn sections(&self) -> Vec<Section> {
        let t = self.table;
        let mut out = Vec::new();
        if let Some(f) = &self.findings {
            out.push(Section {
                heading: "Seed conclusions".to_string(),
                items: f.iter().map(Finding::line).collect(),
            });
        }
        let also: Vec<String> = t.also.iter().map(|(n, v)| format!("{n} {v}")).collect();
        let also = if also.is_empty() {
            String::new()
        } else {
            format!(" ({})", also.join(", "))
        };
        let mut notes = vec![format!("Published: {}{also}.", t.source)];
        notes.extend(t.notes.iter().map(|n| n.to_string()));
        out.push(Section {
            heading: "Notes".to_string(),
            items: notes,
        });
        out
    }

    fn kut(&self) -> Vec<KutLine> {
        self.rows
            .iter()
            .map(|r| KutLine {
                name: r.row.label.to_string(),
                cycles: r.this_host.median,
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        let t = self.table;
        let bars = |f: fn(&SeedRowView) -> Option<f64>| -> Vec<Option<BarValue>> {
            self.rows
                .iter()
                .map(|r| f(r).map(BarValue::plain))
                .collect()
        };
        let mut series = vec![
            Series {
                name: t.chart.published.to_string(),
                color: Swatch::Blue,
                values: bars(|r| r.published_ratio),
            },
            Series {
                name: "this host".to_string(),
                color: Swatch::Red,
                values: bars(|r| r.ratio),
            },
        ];
        if let Some(p) = t.peer.filter(|_| self.has_peer()) {
            series.push(Series {
                name: p.to_string(),
                color: Swatch::Orange,
                values: bars(|r| r.peer_ratio),
            });
        }
        let spec = HBars {
            title: t.chart.title.to_string(),
            x_desc: t.chart.x_desc.to_string(),
            categories: self
                .rows
                .iter()
                .map(|r| {
                    if t.scenario_column {
                        format!("{} / {}", r.row.label, r.row.scenario)
                    } else {
                        r.row.label.to_string()
                    }
                })
                .collect(),
            series,
        };
        vec![Chart {
            title: t.chart.heading.to_string(),
            caption: format!("Published: {}. {}", t.source, t.chart.caption),
            svg: hbars(&spec),
            callout: Vec::new(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostInfo, RunConfig, Sample, ScenarioResult, ToolInfo};

    const TINY: SeedTable = SeedTable {
        view: "tiny",
        title: "tiny",
        source: "a test",
        caption: "ratios only",
        label: Field {
            key: "name",
            title: "row",
            csv: "row",
        },
        scenario_column: true,
        published: &[Field {
            key: "cycles",
            title: "seed cyc",
            csv: "seed_cycles",
        }],
        unit: Unit::Cycles,
        published_ratio: Field {
            key: "published_ratio",
            title: "seed ÷ref",
            csv: "seed_ratio",
        },
        ratio: Field {
            key: "ratio",
            title: "÷ref",
            csv: "ratio",
        },
        peer: Some("peer"),
        rows: &[
            SeedRow {
                label: "ref",
                scenario: "a",
                published: &[Some(100)],
                per: "ref",
            },
            SeedRow {
                label: "other",
                scenario: "b",
                published: &[Some(300)],
                per: "ref",
            },
        ],
        also: &[("extra", 7)],
        findings: None,
        notes: &[],
        chart: SeedChart {
            heading: "h",
            title: "t",
            x_desc: "x",
            published: "seed",
            caption: "c",
        },
    };

    fn report() -> Report {
        let mut r = Report::new(
            ToolInfo::new("t", "0"),
            HostInfo::default(),
            RunConfig::default(),
        );
        for (name, cycles) in [("a", 200), ("b", 1000)] {
            r.push(ScenarioResult::new(name, "g", "p").with_samples(vec![
                Sample::new(
                    10,
                    cycles * 10
                );
                3
            ]));
        }
        r.finish();
        r
    }

    #[test]
    fn rows_divide_by_their_reference_row() {
        let v = SeedView::build(&report(), &TINY);
        assert_eq!(v.rows[1].published_ratio, Some(3.0));
        assert_eq!(v.rows[1].ratio, Some(5.0));
        assert_eq!(v.coverage(), (2, 2));
        assert!(v.rows.iter().all(|r| r.peer.is_none()), "no peer rows");
        assert_eq!(TINY.also("extra"), Some(7.0));
        let j: serde_json::Value = serde_json::from_str(&v.json()).expect("JSON parses");
        assert_eq!(j["rows"][1]["name"], "other");
        assert_eq!(j["rows"][1]["cycles"], 300);
        assert!(j["rows"][1]["peer"].is_null());
        let g = v.grid();
        let titles: Vec<&str> = g.columns.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "row",
                "seed cyc",
                "seed ÷ref",
                "scenario",
                "median cyc",
                "net cyc",
                "÷ref",
                "status"
            ]
        );
    }

    #[test]
    fn an_absent_scenario_has_no_ratio() {
        let mut r = report();
        r.scenarios.retain(|s| s.name != "a");
        let v = SeedView::build(&r, &TINY);
        assert_eq!(v.rows[1].ratio, None);
        assert_eq!(v.rows[0].this_host.status, "not measured");
        assert_eq!(v.coverage(), (1, 2));
    }
}
