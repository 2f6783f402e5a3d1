//! The one seed-table view: a published table ([`SeedTable`], read from
//! its seed file) rendered the same way whatever the seed. Each row shows
//! the published values and (when the table compares rows) their ratio to
//! the reference row, this host's quantities (per unit the seed counts,
//! e.g. per config read) and their ratio, and a peer VMM's when the report
//! has it. Ratios carry over between hosts; cycles and seconds do not.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::super::common::{self, host_caption, ratio, Finding, Measured};
use super::table::{
    Bars, Callout, Joined, PublishedSeries, Quantity, SeedRow, SeedTable, TextSeries,
};
use crate::fmt::derived_value;
use crate::model::{Derived, Report, TRAPLINE_VMM};
use crate::render::charts::{hbars, HBars, Series, Swatch};
use crate::render::grid::{Align, Cell, Grid, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::unit::Unit;

/// One row as shown.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRowView {
    /// The published row.
    pub row: &'static SeedRow,
    /// The scenario measuring it here (the row's arm64 one on arm64).
    pub scenario: Option<&'static str>,
    /// Published value ÷ the `per` row's.
    pub published_ratio: Option<f64>,
    /// The scenario on this host.
    pub this_host: Measured,
    /// One per [`SeedTable::measures`].
    pub values: Vec<Option<f64>>,
    /// This host's compared measure ÷ the `per` row's.
    pub ratio: Option<f64>,
    /// The peer's scenario, when the report has any peer row.
    pub peer: Option<Measured>,
    /// The peer's compared measure ÷ its `per` row's.
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
    /// Its verdict in words and this host's.
    pub conclusion: Option<Vec<String>>,
    /// The table's derived value, when it has one and it was computed.
    pub derived: Option<Derived>,
    /// The seed's [`report_notes`](super::Hooks::report_notes) for this
    /// report.
    pub report_notes: Vec<String>,
    /// Why this host's ratios divide by another scenario than the seed's
    /// (see [`SeedTable::fallback_per`]), when they do.
    pub fallback_note: Option<String>,
    /// Measured on arm64: the rows' arm64 scenarios, and the table's arm64
    /// caption and notes where it has them.
    pub arm64: bool,
}

impl PartialEq for SeedView {
    fn eq(&self, o: &Self) -> bool {
        self.table.view == o.table.view
            && self.caption == o.caption
            && self.rows == o.rows
            && self.findings == o.findings
            && self.conclusion == o.conclusion
            && self.derived == o.derived
            && self.report_notes == o.report_notes
            && self.fallback_note == o.fallback_note
            && self.arm64 == o.arm64
    }
}

/// This host's denominator when the `per` row is not measured: the
/// fallback scenario's value, and why.
struct Fallback {
    scenario: &'static str,
    base: f64,
    why: String,
    per: &'static str,
}

/// A table's rows looked up in a report.
struct Lookup<'r> {
    report: &'r Report,
    table: &'static SeedTable,
    arm64: bool,
    /// The compared measure's quantity.
    quantity: Option<Quantity>,
}

impl<'r> Lookup<'r> {
    fn new(report: &'r Report, table: &'static SeedTable) -> Self {
        Lookup {
            report,
            table,
            arm64: report.host.is_arm64(),
            quantity: table
                .measures
                .get(table.compare_measure)
                .map(|m| m.quantity),
        }
    }

    /// Whether the report measured any of the table's rows on `peer`.
    fn has_peer(&self, peer: &str) -> bool {
        self.report.scenarios.iter().any(|s| {
            s.vmm == peer
                && self
                    .table
                    .rows
                    .iter()
                    .any(|r| r.scenario_on(self.arm64) == Some(&s.name))
        })
    }

    /// The compared measure of `m`.
    fn compared(&self, m: &Measured, row: &SeedRow) -> Option<f64> {
        self.quantity.and_then(|q| q.of(m, row.per_iter))
    }

    /// `row`'s scenario on `vmm`, or why the row has none here.
    fn measured(&self, vmm: &str, row: &SeedRow) -> Measured {
        match row.scenario_on(self.arm64) {
            Some(scenario) => Measured::lookup(self.report, vmm, scenario),
            None => Measured {
                reason: row.missing_on(self.arm64).cloned(),
                ..Measured::absent(String::new())
            },
        }
    }

    /// The compared measure of the row labelled `label` on `vmm`.
    fn lookup(&self, vmm: &str, label: &str) -> Option<f64> {
        let row = self.table.rows.iter().find(|r| r.label == label)?;
        self.compared(&self.measured(vmm, row), row)
    }

    /// This host's denominator: the `per` row's, else the fallback
    /// scenario's (say which, and why).
    fn fallback(&self) -> Option<Fallback> {
        let table = self.table;
        let scenario = table.fallback_per.as_deref()?;
        let per = &table.rows.first()?.per;
        let per_row = table.rows.iter().find(|r| r.label == *per)?;
        if self.lookup(TRAPLINE_VMM, per).is_some() {
            return None;
        }
        let base = self.quantity.and_then(|q| {
            q.of(
                &Measured::lookup(self.report, TRAPLINE_VMM, scenario),
                per_row.per_iter,
            )
        })?;
        let why = self.measured(TRAPLINE_VMM, per_row).status_text();
        Some(Fallback {
            scenario,
            base,
            why,
            per: per.as_str(),
        })
    }

    /// `row` beside this host and (`shown_peer`) the peer; ratios over the
    /// `per` row's (this host's over the fallback when there is one).
    fn row_view(
        &self,
        row: &'static SeedRow,
        peer: Option<&str>,
        shown_peer: Option<&str>,
        fallback: Option<&Fallback>,
    ) -> SeedRowView {
        let table = self.table;
        let this_host = self.measured(TRAPLINE_VMM, row);
        let peer_row = shown_peer.map(|p| self.measured(p, row));
        let own_base = match fallback {
            Some(f) => Some(f.base),
            None => self.lookup(TRAPLINE_VMM, &row.per),
        };
        SeedRowView {
            row,
            scenario: row.scenario_on(self.arm64),
            published_ratio: ratio(table.published(&row.label), table.published(&row.per)),
            values: table
                .measures
                .iter()
                .map(|m| m.quantity.of(&this_host, row.per_iter))
                .collect(),
            ratio: ratio(self.compared(&this_host, row), own_base),
            peer_ratio: peer.and_then(|p| {
                ratio(
                    peer_row.as_ref().and_then(|m| self.compared(m, row)),
                    self.lookup(p, &row.per),
                )
            }),
            this_host,
            peer: peer_row,
        }
    }
}

impl SeedView {
    /// Maps `report` onto `table`.
    pub fn build(report: &Report, table: &'static SeedTable) -> Self {
        let look = Lookup::new(report, table);
        let fallback = look.fallback();
        let peer = table.peer.as_deref();
        let shown_peer = peer.filter(|p| look.has_peer(p));
        let rows = table
            .rows
            .iter()
            .map(|row| look.row_view(row, peer, shown_peer, fallback.as_ref()))
            .collect();
        let hooks = &table.hooks;
        let findings = hooks.findings.map(|f| {
            (f.formula)(&|n| table.published_for(n), &|n| {
                (f.this_host)(report, table, n)
            })
        });
        Self {
            table,
            caption: host_caption(
                match (&table.arm64_caption, look.arm64) {
                    (Some(c), true) => c,
                    _ => &table.caption,
                },
                &report.host,
            ),
            rows,
            conclusion: hooks
                .conclusion
                .map(|c| c(report, table, findings.as_deref().unwrap_or_default())),
            findings,
            derived: table.derived.as_ref().and_then(|d| (d.value)(report)),
            fallback_note: fallback.map(|f| {
                let (scenario, why, per) = (f.scenario, f.why, f.per);
                format!(
                    "{per} is not measured on this host ({why}), so this host's ratios divide by \
                     {scenario} instead, a trap served in the kernel; the published ratios still \
                     divide by {per}."
                )
            }),
            report_notes: hooks.report_notes.map(|f| f(report)).unwrap_or_default(),
            arm64: look.arm64,
        }
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

/// A published value in the JSON: counts (cycles, events per second) as
/// integers when they are, so the published tables read as the seeds
/// print them; anything else as a number with a fraction.
struct Published(Option<f64>, Unit);

impl Serialize for Published {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Below 2^53 an integral f64 converts to i64 exactly.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        let count = matches!(self.1, Unit::Cycles | Unit::PerSecond | Unit::Count);
        match self.0 {
            Some(v) if count && v.fract() == 0.0 && v.abs() < EXACT => s.serialize_i64(v as i64),
            Some(v) => s.serialize_f64(v),
            None => s.serialize_none(),
        }
    }
}

/// One row in the JSON, keyed as its table says.
struct RowJson<'a>(&'a SeedTable, &'a SeedRowView);

impl Serialize for RowJson<'_> {
    /// Keys in column order, except the scenario right after the label
    /// and `this_host` before this host's values.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let RowJson(t, r) = self;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(&t.label.key, &r.row.label)?;
        if let Some(slug) = &r.row.slug {
            m.serialize_entry("slug", slug)?;
        }
        if t.scenario_column {
            m.serialize_entry("scenario", &r.scenario)?;
        }
        for (f, text) in t.texts.iter().zip(&r.row.texts) {
            m.serialize_entry(&f.key, &text.json)?;
        }
        if let Some(f) = &t.per_iter {
            m.serialize_entry(&f.key, &r.row.per_iter)?;
        }
        let published = |m: &mut S::SerializeMap| {
            for ((f, unit), v) in t.published.iter().zip(&r.row.published) {
                m.serialize_entry(&f.key, &Published(*v, *unit))?;
            }
            if let Some(f) = &t.flag {
                m.serialize_entry(&f.key, &r.row.flag)?;
            }
            match &t.published_ratio {
                Some(f) => m.serialize_entry(&f.key, &r.published_ratio),
                None => Ok(()),
            }
        };
        if !t.published_last {
            published(&mut m)?;
        }
        m.serialize_entry("this_host", &r.this_host)?;
        for (f, v) in t.measures.iter().zip(&r.values).filter(|(f, _)| f.json) {
            m.serialize_entry(&f.field.key, v)?;
        }
        if let Some(f) = &t.ratio {
            m.serialize_entry(&f.key, &r.ratio)?;
        }
        if t.published_last {
            published(&mut m)?;
        }
        if let Some(peer) = &t.peer {
            m.serialize_entry(peer, &r.peer)?;
            if let Some(f) = &t.ratio {
                m.serialize_entry(&format!("{peer}_{}", f.key), &r.peer_ratio)?;
            }
        }
        m.end()
    }
}

impl Serialize for SeedView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("view", self.table.view)?;
        m.serialize_entry("source", &self.table.source)?;
        m.serialize_entry("caption", &self.caption)?;
        let rows: Vec<RowJson> = self.rows.iter().map(|r| RowJson(self.table, r)).collect();
        m.serialize_entry("rows", &rows)?;
        if let Some(c) = &self.conclusion {
            m.serialize_entry("conclusion", c)?;
        }
        if let Some(f) = &self.findings {
            m.serialize_entry("findings", f)?;
        }
        if let Some(d) = &self.table.derived {
            m.serialize_entry(&d.key, &self.derived)?;
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
        self.table_grid(self.table.joined.as_ref())
    }

    fn csv_grid(&self) -> Grid {
        self.table_grid(None)
    }

    fn sections(&self) -> Vec<Section> {
        let t = self.table;
        let mut out = Vec::new();
        if let Some(c) = &self.conclusion {
            out.push(Section {
                heading: "Conclusion".to_string(),
                items: c.clone(),
                fold: false,
            });
        }
        if let Some(f) = &self.findings {
            out.push(Section {
                heading: t.findings_heading.to_string(),
                items: f.iter().map(Finding::line).collect(),
                fold: false,
            });
        }
        if let Some(line) = &t.derived {
            out.push(Section {
                heading: line.heading.to_string(),
                items: self
                    .derived
                    .iter()
                    .map(|d| {
                        format!(
                            "{}: {} = {}  [{}] — {}",
                            line.what,
                            d.name,
                            derived_value(d.value, &d.unit),
                            d.formula,
                            d.note.as_deref().unwrap_or_default()
                        )
                    })
                    .collect(),
                fold: false,
            });
        }
        let also: Vec<String> = t
            .also
            .iter()
            .map(|a| format!("{} {}", a.name, a.value))
            .collect();
        let also = if also.is_empty() {
            String::new()
        } else {
            format!(" ({})", also.join(", "))
        };
        let mut notes = vec![format!("Published: {}{also}.", t.source)];
        if self.arm64 && !t.arm64_notes.is_empty() {
            notes.extend(t.arm64_notes.iter().cloned());
        } else {
            notes.extend(t.notes.iter().cloned());
        }
        notes.extend(self.report_notes.iter().cloned());
        notes.extend(self.fallback_note.iter().cloned());
        out.push(Section {
            heading: "Notes".to_string(),
            items: notes,
            fold: false,
        });
        out
    }

    fn kut(&self) -> Vec<KutLine> {
        self.rows
            .iter()
            .filter_map(|r| {
                let scenario = r.scenario?;
                let name = match &r.row.slug {
                    Some(slug) => slug,
                    None if self.table.kut_scenario => scenario,
                    None => &r.row.label,
                };
                Some(KutLine {
                    name: name.to_string(),
                    cycles: self.table.kut.of(&r.this_host, 1),
                })
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        let t = self.table;
        let (categories, series) = match &t.chart.bars {
            Bars::Ratios => self.ratio_bars(),
            Bars::Values { published, measure } => self.value_bars(published, *measure),
            Bars::ByText { measure, series } => self.text_bars(*measure, series),
        };
        let spec = HBars {
            title: t.chart.title.to_string(),
            x_desc: t.chart.x_desc.to_string(),
            categories,
            series,
            tsc_khz: 0,
            cut_outliers: true,
        };
        let callout = match (&t.chart.callout, &self.findings, &self.conclusion) {
            (Callout::Findings(suffix), Some(f), _) => f
                .iter()
                .filter(|f| f.name.ends_with(suffix.as_str()))
                .map(Finding::line)
                .collect(),
            (Callout::Conclusion, _, Some(c)) => c.clone(),
            _ => Vec::new(),
        };
        let note = t
            .chart
            .source_note
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        vec![Chart {
            title: t.chart.heading.to_string(),
            caption: match &self.fallback_note {
                Some(f) => format!("Published: {}{note}. {} {f}", t.source, t.chart.caption),
                None => format!("Published: {}{note}. {}", t.source, t.chart.caption),
            },
            svg: hbars(&spec),
            callout,
        }]
    }
}

impl SeedView {
    /// The table, with the published and this host's values joined into
    /// one cell each when `joined` (for people) or apart (CSV).
    fn table_grid(&self, joined: Option<&'static Joined>) -> Grid {
        let t = self.table;
        let peer = t.peer.as_deref().filter(|_| self.has_peer());
        let mut cols = row_columns(t);
        let mut published = published_columns(t, joined);
        // A narrow terminal leaves the published columns out before this
        // host's, in the seed's order, then the scenario names.
        let published_titles: Vec<String> = published.iter().map(|c| c.title.clone()).collect();
        if !t.published_last {
            cols.append(&mut published);
        }
        if t.scenario_column {
            cols.push(scenario_column(joined));
        }
        cols.extend(this_host_columns(t, joined));
        cols.append(&mut published);
        if let Some(p) = peer {
            cols.extend(peer_columns(t, p));
        }
        cols.push(status_column(t, peer));
        let titles: Vec<(&str, &str, Align)> = cols
            .iter()
            .map(|c| (c.title.as_str(), c.csv.as_str(), c.align))
            .collect();
        let mut g = Grid::titled(&titles);
        for r in &self.rows {
            g.push_cells(cols.iter().map(|c| (c.cell)(r)).collect());
        }
        // Then the scenario names (the notes map rows to scenarios).
        let droppable: Vec<&str> = published_titles
            .iter()
            .map(String::as_str)
            .chain(["scenario"])
            .collect();
        g.droppable(&droppable);
        g
    }

    /// A series with one bar per row: `value` of it.
    fn series(
        &self,
        name: &str,
        color: Swatch,
        value: impl Fn(&SeedRowView) -> Option<f64>,
    ) -> Series {
        Series::plain(name, color, self.rows.iter().map(value))
    }

    /// [`Bars::Ratios`]: categories and series.
    fn ratio_bars(&self) -> (Vec<String>, Vec<Series>) {
        let t = self.table;
        let mut series = vec![
            self.series(&t.chart.published, Swatch::Blue, |r| r.published_ratio),
            self.series("this host", Swatch::Red, |r| r.ratio),
        ];
        if let Some(p) = t.peer.as_deref().filter(|_| self.has_peer()) {
            series.push(self.series(p, Swatch::Orange, |r| r.peer_ratio));
        }
        let categories = self
            .rows
            .iter()
            .map(|r| {
                if t.scenario_column {
                    // A row without a scenario shows "label / ".
                    let scenario = r.scenario.unwrap_or_default();
                    format!("{} / {scenario}", r.row.label)
                } else {
                    r.row.label.to_string()
                }
            })
            .collect();
        (categories, series)
    }

    /// [`Bars::Values`]: categories and series.
    fn value_bars(
        &self,
        published: &[PublishedSeries],
        measure: usize,
    ) -> (Vec<String>, Vec<Series>) {
        let mut series: Vec<Series> = published
            .iter()
            .map(|s| {
                self.series(&s.legend, s.colour, |r| {
                    r.row.published.get(s.column).copied().flatten()
                })
            })
            .collect();
        series.push(self.series("this host", Swatch::Red, |r| {
            r.values.get(measure).copied().flatten()
        }));
        let categories = self.rows.iter().map(|r| r.row.label.to_string()).collect();
        (categories, series)
    }

    /// [`Bars::ByText`]: categories and series.
    fn text_bars(&self, measure: usize, groups: &[TextSeries]) -> (Vec<String>, Vec<Series>) {
        let text = |r: &SeedRowView| r.row.texts.first().map_or("", |t| t.shown.as_str());
        let mut categories: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !categories.contains(&text(r)) {
                categories.push(text(r));
            }
        }
        let first = |c: &str, per_iter: Option<u32>| {
            self.rows
                .iter()
                .find(|r| text(r) == c && per_iter.is_none_or(|p| r.row.per_iter == p))
        };
        let published = categories
            .iter()
            .map(|c| first(c, None).and_then(|r| r.row.published.first().copied().flatten()));
        let mut series = vec![Series::plain(
            &self.table.chart.published,
            Swatch::Blue,
            published,
        )];
        series.extend(groups.iter().map(|g| {
            let values = categories.iter().map(|c| {
                first(c, Some(g.per_iter)).and_then(|r| r.values.get(measure).copied().flatten())
            });
            Series::plain(&g.legend, g.colour, values)
        }));
        (categories.iter().map(|c| c.to_string()).collect(), series)
    }
}

/// The row's own columns: its label, its texts, its iterations.
fn row_columns(t: &'static SeedTable) -> Vec<Column> {
    use Align::{Left, Right};
    let mut cols = vec![column(&t.label.title, &t.label.csv, Left, |r| {
        Cell::text(&r.row.label)
    })];
    for (i, f) in t.texts.iter().enumerate() {
        cols.push(column(&f.title, &f.csv, Left, move |r| {
            Cell::text(r.row.texts.get(i).map_or("", |text| text.shown.as_str()))
        }));
    }
    if let Some(f) = &t.per_iter {
        cols.push(column(&f.title, &f.csv, Right, |r| {
            Cell::Text(r.row.per_iter.to_string())
        }));
    }
    cols
}

/// The published values (one joined cell, or a column each and the flag),
/// and their ratio.
fn published_columns(t: &'static SeedTable, joined: Option<&'static Joined>) -> Vec<Column> {
    use Align::{Left, Right};
    let mut published = Vec::new();
    match joined {
        Some(j) => published.push(column(&j.published, "", Right, move |r| {
            let mut text = (j.format)(&r.row.published).unwrap_or_else(|| "–".into());
            if let Some(f) = t.flag.as_ref().filter(|_| r.row.flag) {
                text = format!("{text} {}", f.title);
            }
            Cell::Text(text)
        })),
        None => {
            for (i, (f, unit)) in t.published.iter().enumerate() {
                published.push(column(&f.title, &f.csv, Right, move |r| {
                    Cell::Num(r.row.published.get(i).copied().flatten(), *unit)
                }));
            }
            if let Some(f) = &t.flag {
                published.push(column(&f.csv, &f.csv, Left, |r| {
                    Cell::Text(r.row.flag.to_string())
                }));
            }
        }
    }
    if let Some(f) = &t.published_ratio {
        published.push(column(&f.title, &f.csv, Right, |r| {
            Cell::Num(r.published_ratio, Unit::Ratio)
        }));
    }
    published
}

/// The scenario measuring the row ("–" for none in the joined table).
fn scenario_column(joined: Option<&'static Joined>) -> Column {
    column("scenario", "scenario", Align::Left, move |r| {
        Cell::text(match (r.scenario, joined) {
            (Some(scenario), _) => scenario,
            (None, Some(_)) => "–",
            (None, None) => "",
        })
    })
}

/// This host's values: in the table for people (joined, before the
/// ratio) or in CSV only (after it); and the ratio.
fn this_host_columns(t: &'static SeedTable, joined: Option<&'static Joined>) -> Vec<Column> {
    let measures = |table: bool| {
        t.measures
            .iter()
            .enumerate()
            .filter(move |(_, m)| m.table == table)
            .map(|(i, m)| {
                column(&m.field.title, &m.field.csv, Align::Right, move |r| {
                    Cell::Num(r.values.get(i).copied().flatten(), m.quantity.unit())
                })
            })
    };
    let mut cols = Vec::new();
    match joined {
        Some(j) => cols.push(column(&j.this_host, "", Align::Right, move |r| {
            let shown = t.measures.iter().zip(&r.values).filter(|(m, _)| m.table);
            let v: Vec<Option<f64>> = shown.map(|(_, v)| *v).collect();
            Cell::Text((j.format)(&v).unwrap_or_else(|| "–".to_string()))
        })),
        None => cols.extend(measures(true)),
    }
    if let Some(f) = &t.ratio {
        cols.push(column(&f.title, &f.csv, Align::Right, |r| {
            Cell::Num(r.ratio, Unit::Ratio)
        }));
    }
    if joined.is_none() {
        cols.extend(measures(false));
    }
    cols
}

/// The peer's median and ratio.
fn peer_columns(t: &'static SeedTable, p: &str) -> Vec<Column> {
    let mut cols = vec![column(
        format!("{p} median"),
        format!("{p}_median_cycles"),
        Align::Right,
        |r| Cell::Num(r.peer.as_ref().and_then(|q| q.median), Unit::Cycles),
    )];
    if let Some(f) = &t.ratio {
        cols.push(column(
            format!("{p} {}", f.title),
            format!("{p}_{}", f.csv),
            Align::Right,
            |r| Cell::Num(r.peer_ratio, Unit::Ratio),
        ));
    }
    cols
}

/// Why a value is missing (or the basis it was taken on), and the peer's.
fn status_column(t: &'static SeedTable, peer: Option<&'static str>) -> Column {
    let basis = t.hooks.basis;
    let status = if basis.is_some() {
        "basis / status"
    } else {
        "status"
    };
    column(status, "status", Align::Left, move |r| {
        let mut status = basis
            .and_then(|b| b(&r.this_host))
            .map_or_else(|| r.this_host.status_text(), str::to_string);
        let peer_status = r.peer.as_ref().filter(|q| !q.is_measured());
        if let (Some(p), Some(q)) = (peer, peer_status) {
            status.push_str(&format!("; {p} {}", q.status_text()));
        }
        Cell::Text(status)
    })
}

/// A column of the seed table: its titles and how a row fills it.
struct Column {
    title: String,
    csv: String,
    align: Align,
    cell: Box<dyn Fn(&SeedRowView) -> Cell>,
}

fn column(
    title: impl Into<String>,
    csv: impl Into<String>,
    align: Align,
    cell: impl Fn(&SeedRowView) -> Cell + 'static,
) -> Column {
    Column {
        title: title.into(),
        csv: csv.into(),
        align,
        cell: Box::new(cell),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostInfo, RunConfig, Sample, ScenarioResult, ToolInfo};

    use super::super::file;
    use super::super::table::{Hooks, Quantity};

    /// A table comparing two rows, with a peer.
    const TINY: &str = r#"
        seed = "999"
        title = "tiny"
        source = "a test"
        caption = "ratios only"
        label = { key = "name", title = "row", csv = "row" }
        scenario_column = true
        per = "ref"
        peer = "peer"
        also = [{ name = "extra", value = 7 }]
        published = [{ key = "cycles", title = "seed cyc", csv = "seed_cycles", unit = "cycles" }]
        published_ratio = { key = "published_ratio", title = "seed ÷ref", csv = "seed_ratio" }
        measures = [
            { key = "median", title = "median cyc", csv = "median_cycles", quantity = "median", json = false },
            { key = "net", title = "net cyc", csv = "net_cycles", quantity = "net", json = false },
        ]
        ratio = { key = "ratio", title = "÷ref", csv = "ratio" }
        rows = [
            { label = "ref", scenario = "a", published = { cycles = 100 } },
            { label = "other", scenario = "b", published = { cycles = 300 } },
        ]
        chart = { heading = "h", title = "t", x_desc = "x", published = "seed", caption = "c", bars = "ratios" }
    "#;

    /// TINY with its values joined for people, a CSV-only measure and a
    /// row the lab cannot measure.
    const JOINED: &str = r#"
        seed = "999"
        title = "tiny"
        source = "a test"
        caption = "ratios only"
        label = { key = "name", title = "row", csv = "row" }
        scenario_column = true
        per = "ref"
        flag = { key = "guess", title = "(guess)", csv = "seed_guess" }
        joined = { published = "seed", this_host = "here" }
        published = [{ key = "cycles", title = "seed cyc", csv = "seed_cycles", unit = "cycles" }]
        published_ratio = { key = "published_ratio", title = "seed ÷ref", csv = "seed_ratio" }
        measures = [
            { key = "median", title = "median cyc", csv = "median_cycles", quantity = "median", json = false },
            { key = "net", title = "net cyc", csv = "net_cycles", quantity = "net", json = false, table = false },
        ]
        ratio = { key = "ratio", title = "÷ref", csv = "ratio" }
        rows = [
            { label = "ref", scenario = "a", published = { cycles = 100 } },
            { label = "other", missing = "no scenario", flag = true, published = { cycles = 300 } },
        ]
        chart = { heading = "h", title = "t", x_desc = "x", published = "seed", caption = "c", bars = "ratios" }
    "#;

    /// `text` as a table that lives as long as the test binary.
    fn table(text: &str, hooks: Hooks) -> &'static SeedTable {
        let t = file::load("tiny", text, hooks).unwrap_or_else(|e| panic!("{e}"));
        Box::leak(Box::new(t))
    }

    fn tiny() -> &'static SeedTable {
        table(TINY, Hooks::NONE)
    }

    fn joined() -> &'static SeedTable {
        let hooks = Hooks {
            joined: Some(|v| v.first().copied().flatten().map(|x| format!("{x:.0} cyc"))),
            ..Hooks::NONE
        };
        table(JOINED, hooks)
    }

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
    fn a_row_is_found_by_its_scenario_unless_the_lab_has_none() {
        let (tiny, joined) = (tiny(), joined());
        assert_eq!(tiny.row_for("b").map(|r| r.label.as_str()), Some("other"));
        assert_eq!(tiny.row_for("other"), None, "a label is not a scenario");
        assert_eq!(joined.row_for("a").map(|r| r.label.as_str()), Some("ref"));
        assert_eq!(joined.row_for("b"), None, "row b has no scenario there");
    }

    #[test]
    fn rows_divide_by_their_reference_row() {
        let v = SeedView::build(&report(), tiny());
        assert_eq!(v.rows[1].published_ratio, Some(3.0));
        assert_eq!(v.rows[1].ratio, Some(5.0));
        assert_eq!(v.coverage(), (2, 2));
        assert!(v.rows.iter().all(|r| r.peer.is_none()), "no peer rows");
        assert_eq!(tiny().also("extra"), Some(7.0));
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
    fn quantities_are_per_counted_unit_and_published_counts_stay_integers() {
        let m = Measured {
            median: Some(512.0),
            net: Some(256.0),
            ns_per_iter: Some(2560.0),
            ..Measured::absent("x".into())
        };
        assert_eq!(Quantity::Median.of(&m, 256), Some(2.0));
        assert_eq!(Quantity::Net.of(&m, 256), Some(1.0));
        assert_eq!(Quantity::Nanos.of(&m, 256), Some(10.0));
        assert_eq!(Quantity::SecondsFor(100_000).of(&m, 256), Some(0.001));
        assert_eq!(Quantity::PerSecond.of(&m, 256), Some(1e8));
        assert_eq!(Quantity::Micros.of(&m, 256), Some(0.01));
        assert_eq!(Quantity::Median.of(&Measured::absent("y".into()), 1), None);
        let j = serde_json::to_string(&[
            Published(Some(9075.0), Unit::Cycles),
            Published(Some(0.01), Unit::Seconds),
            Published(Some(5.0), Unit::Micros),
            Published(Some(110_000.0), Unit::PerSecond),
            Published(None, Unit::Cycles),
        ])
        .expect("serializes");
        assert_eq!(j, "[9075,0.01,5.0,110000,null]");
    }

    #[test]
    fn joined_cells_for_people_and_apart_in_csv() {
        let v = SeedView::build(&report(), joined());
        let titles =
            |g: Grid| -> Vec<String> { g.columns.iter().map(|c| c.title.clone()).collect() };
        assert_eq!(
            titles(v.grid()),
            [
                "row",
                "seed",
                "seed ÷ref",
                "scenario",
                "here",
                "÷ref",
                "status"
            ]
        );
        assert_eq!(
            titles(v.csv_grid()),
            [
                "row",
                "seed cyc",
                "seed_guess",
                "seed ÷ref",
                "scenario",
                "median cyc",
                "÷ref",
                "net cyc",
                "status"
            ],
            "the flag and CSV-only measures have columns of their own"
        );
        let missing = &v.rows[1];
        assert_eq!(missing.this_host.status_text(), "not measured: no scenario");
        assert_eq!(missing.ratio, None);
        let j: serde_json::Value = serde_json::from_str(&v.json()).expect("JSON parses");
        assert!(j["rows"][1]["scenario"].is_null());
        assert_eq!(j["rows"][1]["guess"], true);
        assert_eq!(v.kut().len(), 1, "no kut line without a scenario");
    }

    #[test]
    fn an_absent_scenario_has_no_ratio() {
        let mut r = report();
        r.scenarios.retain(|s| s.name != "a");
        let v = SeedView::build(&r, tiny());
        assert_eq!(v.rows[1].ratio, None);
        assert_eq!(v.rows[0].this_host.status, "not measured");
        assert_eq!(v.coverage(), (1, 2));
    }
}
