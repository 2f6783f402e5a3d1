//! The one seed-table view: a published table described as constant data
//! ([`SeedTable`]: its rows, their published values, the scenario each maps
//! to, the row each is divided by, and which measured [`Quantity`] columns
//! it compares) and rendered the same way whatever the seed. Each row shows
//! the published values and (when the table compares rows) their ratio to
//! the reference row, this host's quantities (per unit the seed counts,
//! e.g. per config read) and their ratio, and a peer VMM's when the report
//! has it. Ratios carry over between hosts; cycles and seconds do not.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::common::{self, caption, ratio, Finding, Measured};
use crate::derive::findings::micros_from_ns;
use crate::fmt::derived_value;
use crate::model::{Derived, Report, TRAPLINE_VMM};
use crate::render::charts::{hbars, HBars, Series, Swatch};
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

impl Field {
    /// The column with JSON key `key`, header `title` and CSV header `csv`.
    pub const fn new(key: &'static str, title: &'static str, csv: &'static str) -> Self {
        Self { key, title, csv }
    }
}

/// Which measured quantity a column shows, per unit the seed counts: a
/// row's quantities are divided by its [`SeedRow::per_iter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Median cycles.
    Median,
    /// Median cycles net of the noop loop.
    Net,
    /// Median nanoseconds.
    Nanos,
    /// Seconds for this many units (nanoseconds × n ÷ 1e9).
    SecondsFor(u32),
    /// Units per second (1e9 ÷ nanoseconds).
    PerSecond,
    /// Median microseconds.
    Micros,
    /// Median cycles net of the noop loop where that baseline exists,
    /// else the median.
    NetElseMedian,
}

impl Quantity {
    /// This quantity of `m`, per unit of a row counting `per_iter` units
    /// per iteration.
    pub fn of(self, m: &Measured, per_iter: u32) -> Option<f64> {
        let per = f64::from(per_iter);
        match self {
            Quantity::Median => m.median.map(|v| v / per),
            Quantity::Net => m.net.map(|v| v / per),
            Quantity::Nanos => m.ns_per_iter.map(|v| v / per),
            Quantity::SecondsFor(n) => m
                .ns_per_iter
                .map(|v| v / per)
                .and_then(|ns| common::finite(ns * f64::from(n) / 1e9)),
            Quantity::PerSecond => ratio(Some(1e9), m.ns_per_iter.map(|v| v / per)),
            Quantity::Micros => micros_from_ns(m.ns_per_iter.map(|v| v / per)),
            Quantity::NetElseMedian => m.net.or(m.median).map(|v| v / per),
        }
    }

    /// The unit of its values.
    pub fn unit(self) -> Unit {
        match self {
            Quantity::Median | Quantity::Net | Quantity::NetElseMedian => Unit::Cycles,
            Quantity::Nanos => Unit::Nanos,
            Quantity::SecondsFor(_) => Unit::Seconds,
            Quantity::PerSecond => Unit::PerSecond,
            Quantity::Micros => Unit::Micros,
        }
    }
}

/// A column of this host's values. The first one of a table is what its
/// ratios divide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measure {
    /// Its names.
    pub field: Field,
    /// What it shows.
    pub quantity: Quantity,
    /// Whether the JSON rows carry it (beside `this_host`, which has the
    /// raw median, net and nanoseconds).
    pub json: bool,
    /// Whether the table for people shows it (CSV always does: those
    /// only in CSV come after the ratio).
    pub table: bool,
}

impl Measure {
    /// `quantity` in column `field`, in the JSON rows and both tables.
    pub const fn new(field: Field, quantity: Quantity) -> Self {
        Self {
            field,
            quantity,
            json: true,
            table: true,
        }
    }
}

/// Median and net cycles, shown but left out of the JSON (they are in
/// `this_host`): the measures of a table comparing cycles per iteration.
pub const MEDIAN_NET: &[Measure] = &[
    Measure {
        json: false,
        ..Measure::new(
            Field::new("median", "median cyc", "median_cycles"),
            Quantity::Median,
        )
    },
    Measure {
        json: false,
        ..Measure::new(Field::new("net", "net cyc", "net_cycles"), Quantity::Net)
    },
];

/// One published row and what it maps to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeedRow {
    /// The seed's name for the row.
    pub label: &'static str,
    /// The trapline scenario measuring it.
    pub scenario: &'static str,
    /// Why the lab has no scenario for it (then `scenario` is unused).
    pub missing: Option<&'static str>,
    /// The seed's mark on the row ([`SeedTable::flag`]).
    pub flag: bool,
    /// Further text, one per [`SeedTable::texts`] column: (JSON, shown).
    pub texts: &'static [(&'static str, &'static str)],
    /// Units the seed counts (reads, say) per iteration of the scenario.
    pub per_iter: u32,
    /// Published values, one per [`SeedTable::published`] column (in its
    /// unit); `None` where the seed did not run it.
    pub published: &'static [Option<f64>],
    /// The label of the row this one is divided by (itself for a
    /// reference row).
    pub per: &'static str,
    /// Its name in kut lines, when not [`SeedTable::kut_scenario`]'s.
    pub slug: Option<&'static str>,
}

impl SeedRow {
    /// The row `label` measured by `scenario`, with its `published`
    /// values and divided by the row labelled `per`, as most rows are: a
    /// scenario exists, no flag or texts, one unit per iteration, kut lines
    /// named as the table says. A row that differs writes only that and
    /// takes the rest with `..SeedRow::new(..)`.
    pub const fn new(
        label: &'static str,
        scenario: &'static str,
        published: &'static [Option<f64>],
        per: &'static str,
    ) -> Self {
        Self {
            label,
            scenario,
            missing: None,
            flag: false,
            texts: &[],
            per_iter: 1,
            published,
            per,
            slug: None,
        }
    }
}

/// How the chart draws the rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bars {
    /// One bar group per row: its published ratio, this host's and the
    /// peer's.
    Ratios,
    /// One bar group per row: published columns' values and this host's
    /// measure.
    Values {
        /// Series drawn before this host's, in order: (index into
        /// [`SeedTable::published`], legend, colour).
        published: &'static [(usize, &'static str, Swatch)],
        /// Index into [`SeedTable::measures`].
        measure: usize,
    },
    /// One bar group per value of the first text column: the published
    /// value, then one series per `(name, per_iter, colour)` with the
    /// measure `measure` of the row with that `per_iter`.
    ByText {
        /// Index into [`SeedTable::measures`].
        measure: usize,
        /// This host's series.
        series: &'static [(&'static str, u32, Swatch)],
    },
}

/// The chart of a seed table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeedChart {
    /// Heading above the chart.
    pub heading: &'static str,
    /// Title inside it.
    pub title: &'static str,
    /// What the x axis measures.
    pub x_desc: &'static str,
    /// Legend of the published series ([`Bars::Values`] names its own).
    pub published: &'static str,
    /// The caption after "Published: <source>. ".
    pub caption: &'static str,
    /// What it draws.
    pub bars: Bars,
    /// What the chart repeats beside it.
    pub callout: Callout,
    /// Said of the source in the caption, in brackets.
    pub source_note: Option<&'static str>,
}

/// What a chart repeats beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callout {
    /// Nothing.
    None,
    /// The findings whose names end so.
    Findings(&'static str),
    /// The conclusion.
    Conclusion,
}

/// A table for people showing its published values, and this host's, in
/// one cell each.
#[derive(Clone, Copy, Debug)]
pub struct Joined {
    /// Title of the published cell.
    pub published: &'static str,
    /// Title of this host's cell.
    pub this_host: &'static str,
    /// Writes the values (published columns, or the measures in the
    /// table); `None` shows `–`.
    pub format: fn(&[Option<f64>]) -> Option<String>,
}

/// A value derived from the report that a seed table shows after its
/// findings.
#[derive(Clone, Copy, Debug)]
pub struct DerivedLine {
    /// Key in the view's JSON (`null` when not computed).
    pub key: &'static str,
    /// Heading of its section.
    pub heading: &'static str,
    /// What it compares, in words.
    pub what: &'static str,
    /// Computes it.
    pub value: fn(&Report) -> Option<Derived>,
}

/// Writes a seed's verdict and this host's from the report and the
/// findings.
pub type Conclusion = fn(&Report, &[Finding]) -> Vec<String>;

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
    /// Whether kut lines name rows by scenario (else by label), unless
    /// the row has a [`SeedRow::slug`].
    pub kut_scenario: bool,
    /// What kut lines report of this host (per iteration).
    pub kut: Quantity,
    /// Text columns after the label ([`SeedRow::texts`]).
    pub texts: &'static [Field],
    /// The column of [`SeedRow::per_iter`], when shown.
    pub per_iter: Option<Field>,
    /// The published columns with their units.
    pub published: &'static [(Field, Unit)],
    /// The seed's mark on some rows: JSON bool, CSV column, and the title
    /// appended to the joined published cell.
    pub flag: Option<Field>,
    /// The published ratio column (compared published column ÷ the `per`
    /// row's), when the table compares rows.
    pub published_ratio: Option<Field>,
    /// This host's columns.
    pub measures: &'static [Measure],
    /// Which published column and which measure the ratios divide.
    pub compare: usize,
    /// This host's ratio column (compared measure ÷ the `per` row's),
    /// when the table compares rows.
    pub ratio: Option<Field>,
    /// Joins the published and this host's values into one cell each in
    /// the table for people (CSV keeps them apart).
    pub joined: Option<Joined>,
    /// Whether the published columns come after this host's (else before).
    pub published_last: bool,
    /// The peer VMM whose rows get columns when the report has any.
    pub peer: Option<&'static str>,
    /// The rows, in the seed's order.
    pub rows: &'static [SeedRow],
    /// Further single numbers the seed publishes, cited in the notes.
    pub also: &'static [(&'static str, u32)],
    /// The seed's own conclusions, computed for the seed and this host.
    pub findings: Option<fn(&Report) -> Vec<Finding>>,
    /// The seed's verdict in words and this host's, from the findings.
    pub conclusion: Option<Conclusion>,
    /// The heading they are shown under.
    pub findings_heading: &'static str,
    /// A derived value shown after them.
    pub derived: Option<DerivedLine>,
    /// Notes after the citation.
    pub notes: &'static [&'static str],
    /// Notes after those that depend on the report.
    pub report_notes: Option<fn(&Report) -> Vec<String>>,
    /// What the status column says of a measured row instead of its status
    /// (which of its values the table shows); titles it "basis / status".
    pub basis: Option<fn(&Measured) -> Option<&'static str>>,
    /// The chart.
    pub chart: SeedChart,
}

impl SeedTable {
    /// What a table leaves as most tables have it: no text, flag, ratio,
    /// joined or per-iteration columns, no peer, findings, conclusion,
    /// derived line or notes, medians on kut lines. A table writes its own
    /// title, source, caption, label, published columns, measures, rows and
    /// chart (BASE's are empty placeholders) and whatever else differs, and
    /// takes the rest with `..SeedTable::BASE`.
    pub const BASE: SeedTable = SeedTable {
        view: "",
        title: "",
        source: "",
        caption: "",
        label: Field::new("", "", ""),
        scenario_column: false,
        kut_scenario: false,
        kut: Quantity::Median,
        texts: &[],
        per_iter: None,
        published: &[],
        flag: None,
        published_ratio: None,
        measures: &[],
        compare: 0,
        ratio: None,
        joined: None,
        published_last: false,
        peer: None,
        rows: &[],
        also: &[],
        findings: None,
        conclusion: None,
        findings_heading: "",
        derived: None,
        notes: &[],
        report_notes: None,
        basis: None,
        chart: SeedChart {
            heading: "",
            title: "",
            x_desc: "",
            published: "",
            caption: "",
            bars: Bars::Ratios,
            callout: Callout::None,
            source_note: None,
        },
    };

    /// The further published number called `name`.
    pub fn also(&self, name: &str) -> Option<f64> {
        self.also
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| f64::from(*v))
    }

    /// Published value (the compared column) of the row labelled `label`.
    pub fn published(&self, label: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.label == label)
            .and_then(|r| r.published.get(self.compare).copied().flatten())
    }

    /// The row measured by `scenario`: the first with that scenario, of
    /// those the lab has one for (a row with [`SeedRow::missing`] names
    /// none).
    pub fn row_for(&self, scenario: &str) -> Option<&'static SeedRow> {
        self.rows
            .iter()
            .find(|r| r.missing.is_none() && r.scenario == scenario)
    }
}

/// One row as shown.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRowView {
    /// The published row.
    pub row: &'static SeedRow,
    /// Published value ÷ the `per` row's.
    pub published_ratio: Option<f64>,
    /// The scenario on this host.
    pub this_host: Measured,
    /// One per [`SeedTable::measures`].
    pub values: Vec<Option<f64>>,
    /// This host's first measure ÷ the `per` row's.
    pub ratio: Option<f64>,
    /// The peer's scenario, when the report has any peer row.
    pub peer: Option<Measured>,
    /// The peer's first measure ÷ its `per` row's.
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
    /// [`SeedTable::report_notes`] for this report.
    pub report_notes: Vec<String>,
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
        let quantity = table.measures.get(table.compare).map(|m| m.quantity);
        let compared = |m: &Measured, row: &SeedRow| quantity.and_then(|q| q.of(m, row.per_iter));
        let measured = |vmm: &str, row: &SeedRow| match row.missing {
            Some(why) => Measured {
                reason: Some(why.to_string()),
                ..Measured::absent(String::new())
            },
            None => Measured::lookup(report, vmm, row.scenario),
        };
        let lookup = |vmm: &str, label: &str| {
            let row = table.rows.iter().find(|r| r.label == label)?;
            compared(&measured(vmm, row), row)
        };
        let rows = table
            .rows
            .iter()
            .map(|row| {
                let this_host = measured(TRAPLINE_VMM, row);
                let peer = table.peer.filter(|_| has_peer).map(|p| measured(p, row));
                SeedRowView {
                    row,
                    published_ratio: ratio(table.published(row.label), table.published(row.per)),
                    values: table
                        .measures
                        .iter()
                        .map(|m| m.quantity.of(&this_host, row.per_iter))
                        .collect(),
                    ratio: ratio(compared(&this_host, row), lookup(TRAPLINE_VMM, row.per)),
                    peer_ratio: table.peer.and_then(|p| {
                        ratio(
                            peer.as_ref().and_then(|m| compared(m, row)),
                            lookup(p, row.per),
                        )
                    }),
                    this_host,
                    peer,
                }
            })
            .collect();
        let findings = table.findings.map(|f| f(report));
        Self {
            table,
            caption: caption(table.caption, report.host.nested_note.is_some()),
            rows,
            conclusion: table
                .conclusion
                .map(|c| c(report, findings.as_deref().unwrap_or_default())),
            findings,
            derived: table.derived.and_then(|d| (d.value)(report)),
            report_notes: table.report_notes.map(|f| f(report)).unwrap_or_default(),
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
        m.serialize_entry(t.label.key, r.row.label)?;
        if let Some(slug) = r.row.slug {
            m.serialize_entry("slug", slug)?;
        }
        if t.scenario_column {
            let scenario = r.row.missing.is_none().then_some(r.row.scenario);
            m.serialize_entry("scenario", &scenario)?;
        }
        for (f, (json, _)) in t.texts.iter().zip(r.row.texts) {
            m.serialize_entry(f.key, json)?;
        }
        if let Some(f) = t.per_iter {
            m.serialize_entry(f.key, &r.row.per_iter)?;
        }
        let published = |m: &mut S::SerializeMap| {
            for ((f, unit), v) in t.published.iter().zip(r.row.published) {
                m.serialize_entry(f.key, &Published(*v, *unit))?;
            }
            if let Some(f) = t.flag {
                m.serialize_entry(f.key, &r.row.flag)?;
            }
            match t.published_ratio {
                Some(f) => m.serialize_entry(f.key, &r.published_ratio),
                None => Ok(()),
            }
        };
        if !t.published_last {
            published(&mut m)?;
        }
        m.serialize_entry("this_host", &r.this_host)?;
        for (f, v) in t.measures.iter().zip(&r.values).filter(|(f, _)| f.json) {
            m.serialize_entry(f.field.key, v)?;
        }
        if let Some(f) = t.ratio {
            m.serialize_entry(f.key, &r.ratio)?;
        }
        if t.published_last {
            published(&mut m)?;
        }
        if let Some(peer) = t.peer {
            m.serialize_entry(peer, &r.peer)?;
            if let Some(f) = t.ratio {
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
        m.serialize_entry("source", self.table.source)?;
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
            m.serialize_entry(d.key, &self.derived)?;
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
        self.table_grid(self.table.joined)
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
            });
        }
        if let Some(f) = &self.findings {
            out.push(Section {
                heading: t.findings_heading.to_string(),
                items: f.iter().map(Finding::line).collect(),
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
        notes.extend(self.report_notes.iter().cloned());
        out.push(Section {
            heading: "Notes".to_string(),
            items: notes,
        });
        out
    }

    fn kut(&self) -> Vec<KutLine> {
        self.rows
            .iter()
            .filter(|r| r.row.missing.is_none())
            .map(|r| KutLine {
                name: match r.row.slug {
                    Some(slug) => slug,
                    None if self.table.kut_scenario => r.row.scenario,
                    None => r.row.label,
                }
                .to_string(),
                cycles: self.table.kut.of(&r.this_host, 1),
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        let t = self.table;
        let (categories, series) = match t.chart.bars {
            Bars::Ratios => self.ratio_bars(),
            Bars::Values { published, measure } => self.value_bars(published, measure),
            Bars::ByText { measure, series } => self.text_bars(measure, series),
        };
        let spec = HBars {
            title: t.chart.title.to_string(),
            x_desc: t.chart.x_desc.to_string(),
            categories,
            series,
        };
        let callout = match (t.chart.callout, &self.findings, &self.conclusion) {
            (Callout::Findings(suffix), Some(f), _) => f
                .iter()
                .filter(|f| f.name.ends_with(suffix))
                .map(Finding::line)
                .collect(),
            (Callout::Conclusion, _, Some(c)) => c.clone(),
            _ => Vec::new(),
        };
        let note = t
            .chart
            .source_note
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        vec![Chart {
            title: t.chart.heading.to_string(),
            caption: format!("Published: {}{note}. {}", t.source, t.chart.caption),
            svg: hbars(&spec),
            callout,
        }]
    }
}

impl SeedView {
    /// The table, with the published and this host's values joined into
    /// one cell each when `joined` (for people) or apart (CSV).
    fn table_grid(&self, joined: Option<Joined>) -> Grid {
        use Align::{Left, Right};
        let t = self.table;
        let peer = t.peer.filter(|_| self.has_peer());
        let mut cols = vec![column(t.label.title, t.label.csv, Left, |r| {
            Cell::text(r.row.label)
        })];
        for (i, f) in t.texts.iter().enumerate() {
            cols.push(column(f.title, f.csv, Left, move |r| {
                Cell::text(r.row.texts.get(i).map_or("", |(_, shown)| *shown))
            }));
        }
        if let Some(f) = &t.per_iter {
            cols.push(column(f.title, f.csv, Right, |r| {
                Cell::Text(r.row.per_iter.to_string())
            }));
        }
        let mut published = Vec::new();
        match joined {
            Some(j) => published.push(column(j.published, "", Right, move |r| {
                let mut text = (j.format)(r.row.published).unwrap_or_else(|| "–".into());
                if let Some(f) = t.flag.filter(|_| r.row.flag) {
                    text = format!("{text} {}", f.title);
                }
                Cell::Text(text)
            })),
            None => {
                for (i, (f, unit)) in t.published.iter().enumerate() {
                    published.push(column(f.title, f.csv, Right, move |r| {
                        Cell::Num(r.row.published.get(i).copied().flatten(), *unit)
                    }));
                }
                if let Some(f) = &t.flag {
                    published.push(column(f.csv, f.csv, Left, |r| {
                        Cell::Text(r.row.flag.to_string())
                    }));
                }
            }
        }
        if let Some(f) = &t.published_ratio {
            published.push(column(f.title, f.csv, Right, |r| {
                Cell::Num(r.published_ratio, Unit::Ratio)
            }));
        }
        if !t.published_last {
            cols.append(&mut published);
        }
        if t.scenario_column {
            cols.push(column("scenario", "scenario", Left, move |r| {
                Cell::text(match (r.row.missing, joined) {
                    (None, _) => r.row.scenario,
                    (Some(_), Some(_)) => "–",
                    (Some(_), None) => "",
                })
            }));
        }
        // This host's values: in the table for people (before the ratio)
        // or in CSV only (after it).
        let measures = |table: bool| {
            t.measures
                .iter()
                .enumerate()
                .filter(move |(_, m)| m.table == table)
                .map(|(i, m)| {
                    column(m.field.title, m.field.csv, Right, move |r| {
                        Cell::Num(r.values.get(i).copied().flatten(), m.quantity.unit())
                    })
                })
        };
        match joined {
            Some(j) => cols.push(column(j.this_host, "", Right, move |r| {
                let shown = t.measures.iter().zip(&r.values).filter(|(m, _)| m.table);
                let v: Vec<Option<f64>> = shown.map(|(_, v)| *v).collect();
                Cell::Text((j.format)(&v).unwrap_or_else(|| "–".to_string()))
            })),
            None => cols.extend(measures(true)),
        }
        if let Some(f) = &t.ratio {
            cols.push(column(f.title, f.csv, Right, |r| {
                Cell::Num(r.ratio, Unit::Ratio)
            }));
        }
        if joined.is_none() {
            cols.extend(measures(false));
        }
        cols.append(&mut published);
        if let Some(p) = peer {
            cols.push(column(
                format!("{p} median"),
                format!("{p}_median_cycles"),
                Right,
                |r| Cell::Num(r.peer.as_ref().and_then(|q| q.median), Unit::Cycles),
            ));
            if let Some(f) = &t.ratio {
                cols.push(column(
                    format!("{p} {}", f.title),
                    format!("{p}_{}", f.csv),
                    Right,
                    |r| Cell::Num(r.peer_ratio, Unit::Ratio),
                ));
            }
        }
        let status = if t.basis.is_some() {
            "basis / status"
        } else {
            "status"
        };
        cols.push(column(status, "status", Left, move |r| {
            let mut status = t
                .basis
                .and_then(|b| b(&r.this_host))
                .map_or_else(|| r.this_host.status_text(), str::to_string);
            let peer_status = r.peer.as_ref().filter(|q| !q.is_measured());
            if let (Some(p), Some(q)) = (peer, peer_status) {
                status.push_str(&format!("; {p} {}", q.status_text()));
            }
            Cell::Text(status)
        }));
        let titles: Vec<(&str, &str, Align)> = cols
            .iter()
            .map(|c| (c.title.as_str(), c.csv.as_str(), c.align))
            .collect();
        let mut g = Grid::titled(&titles);
        for r in &self.rows {
            g.push_cells(cols.iter().map(|c| (c.cell)(r)).collect());
        }
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
            self.series(t.chart.published, Swatch::Blue, |r| r.published_ratio),
            self.series("this host", Swatch::Red, |r| r.ratio),
        ];
        if let Some(p) = t.peer.filter(|_| self.has_peer()) {
            series.push(self.series(p, Swatch::Orange, |r| r.peer_ratio));
        }
        let categories = self
            .rows
            .iter()
            .map(|r| {
                if t.scenario_column {
                    format!("{} / {}", r.row.label, r.row.scenario)
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
        published: &[(usize, &'static str, Swatch)],
        measure: usize,
    ) -> (Vec<String>, Vec<Series>) {
        let mut series: Vec<Series> = published
            .iter()
            .map(|&(col, name, color)| {
                self.series(name, color, |r| r.row.published.get(col).copied().flatten())
            })
            .collect();
        series.push(self.series("this host", Swatch::Red, |r| {
            r.values.get(measure).copied().flatten()
        }));
        let categories = self.rows.iter().map(|r| r.row.label.to_string()).collect();
        (categories, series)
    }

    /// [`Bars::ByText`]: categories and series.
    fn text_bars(
        &self,
        measure: usize,
        groups: &[(&'static str, u32, Swatch)],
    ) -> (Vec<String>, Vec<Series>) {
        let text = |r: &SeedRowView| r.row.texts.first().map_or("", |(_, shown)| *shown);
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
            self.table.chart.published,
            Swatch::Blue,
            published,
        )];
        series.extend(groups.iter().map(|&(name, per_iter, color)| {
            let values = categories.iter().map(|c| {
                first(c, Some(per_iter)).and_then(|r| r.values.get(measure).copied().flatten())
            });
            Series::plain(name, color, values)
        }));
        (categories.iter().map(|c| c.to_string()).collect(), series)
    }
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

    const TINY: SeedTable = SeedTable {
        view: "tiny",
        title: "tiny",
        source: "a test",
        caption: "ratios only",
        label: Field::new("name", "row", "row"),
        scenario_column: true,
        published: &[(
            Field::new("cycles", "seed cyc", "seed_cycles"),
            Unit::Cycles,
        )],
        published_ratio: Some(Field::new("published_ratio", "seed ÷ref", "seed_ratio")),
        measures: MEDIAN_NET,
        ratio: Some(Field::new("ratio", "÷ref", "ratio")),
        peer: Some("peer"),
        rows: &[
            SeedRow::new("ref", "a", &[Some(100.0)], "ref"),
            SeedRow::new("other", "b", &[Some(300.0)], "ref"),
        ],
        also: &[("extra", 7)],
        findings_heading: "Seed conclusions",
        chart: SeedChart {
            heading: "h",
            title: "t",
            x_desc: "x",
            published: "seed",
            caption: "c",
            bars: Bars::Ratios,
            callout: Callout::None,
            source_note: None,
        },
        ..SeedTable::BASE
    };

    const ROWS_JOINED: &[SeedRow] = &[
        TINY.rows[0],
        SeedRow {
            missing: Some("no scenario"),
            flag: true,
            ..TINY.rows[1]
        },
    ];

    /// TINY with its values joined for people, a CSV-only measure and a
    /// row the lab cannot measure.
    const JOINED: SeedTable = SeedTable {
        measures: &[
            MEDIAN_NET[0],
            Measure {
                table: false,
                ..MEDIAN_NET[1]
            },
        ],
        flag: Some(Field::new("guess", "(guess)", "seed_guess")),
        joined: Some(Joined {
            published: "seed",
            this_host: "here",
            format: |v| v.first().copied().flatten().map(|x| format!("{x:.0} cyc")),
        }),
        peer: None,
        rows: ROWS_JOINED,
        ..TINY
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
    fn a_row_is_found_by_its_scenario_unless_the_lab_has_none() {
        assert_eq!(TINY.row_for("b").map(|r| r.label), Some("other"));
        assert_eq!(TINY.row_for("other"), None, "a label is not a scenario");
        assert_eq!(JOINED.row_for("a").map(|r| r.label), Some("ref"));
        assert_eq!(JOINED.row_for("b"), None, "row b has no scenario there");
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
        let v = SeedView::build(&report(), &JOINED);
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
        let v = SeedView::build(&r, &TINY);
        assert_eq!(v.rows[1].ratio, None);
        assert_eq!(v.rows[0].this_host.status, "not measured");
        assert_eq!(v.coverage(), (1, 2));
    }
}
