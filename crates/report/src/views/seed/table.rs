//! A seed table as the generic view reads it: what one seed file
//! (`seeds/<name>.toml`, read by [`super::file`]) describes, resolved and
//! checked, plus the seed's code ([`Hooks`]) for what data cannot say.

use serde::Deserialize;

use super::super::common::{self, ratio, Finding, Measured};
use crate::derive::findings::{micros_from_ns, Lookup};
use crate::model::{Derived, Report};
use crate::render::charts::Swatch;
use crate::unit::Unit;

/// A column: its JSON key, display title and CSV title.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// Key in the view's JSON.
    pub key: String,
    /// Header for people.
    pub title: String,
    /// Header in CSV.
    pub csv: String,
}

/// Which measured quantity a column shows, per unit the seed counts: a
/// row's quantities are divided by its [`SeedRow::per_iter`]. In a seed
/// file: `"median"`, `"net"`, `"nanos"`, `{ seconds_for = N }`,
/// `"per_second"`, `"micros"` or `"net_else_median"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// A column of this host's values. The table's compared one
/// ([`SeedTable::compare_measure`]) is what its ratios divide.
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// A row's text in one of [`SeedTable::texts`]' columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    /// In the JSON.
    pub json: String,
    /// In the tables and charts.
    pub shown: String,
}

/// One published row and what it maps to.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRow {
    /// The seed's name for the row.
    pub label: String,
    /// The trapline scenario measuring it; `None` when the lab has none
    /// ([`SeedRow::missing`] says why).
    pub scenario: Option<String>,
    /// The scenario measuring it on an arm64 host, where that differs.
    pub arm64: Option<String>,
    /// Why an arm64 host has no scenario for it (the row is x86's).
    pub arm64_missing: Option<String>,
    /// Why the lab has no scenario for it.
    pub missing: Option<String>,
    /// The seed's mark on the row ([`SeedTable::flag`]).
    pub flag: bool,
    /// Further text, one per [`SeedTable::texts`] column.
    pub texts: Vec<Text>,
    /// Units the seed counts (reads, say) per iteration of the scenario.
    pub per_iter: u32,
    /// Published values, one per [`SeedTable::published`] column (in its
    /// unit); `None` where the seed did not run it.
    pub published: Vec<Option<f64>>,
    /// The label of the row this one is divided by (itself for a
    /// reference row).
    pub per: String,
    /// Its name in kut lines, when not [`SeedTable::kut_scenario`]'s.
    pub slug: Option<String>,
}

impl SeedRow {
    /// The scenario measuring it, when the lab has one.
    pub fn scenario(&self) -> Option<&str> {
        self.scenario.as_deref()
    }

    /// The scenario measuring it on a host of this architecture: its
    /// `arm64` one on arm64 where it has one, else its own.
    pub fn scenario_on(&self, arm64: bool) -> Option<&str> {
        match (&self.arm64, &self.arm64_missing, arm64) {
            (Some(a), _, true) => Some(a),
            (None, Some(_), true) => None,
            _ => self.scenario(),
        }
    }

    /// Why a host of this architecture has no scenario for it.
    pub fn missing_on(&self, arm64: bool) -> Option<&String> {
        match (&self.arm64_missing, arm64) {
            (Some(why), true) => Some(why),
            _ => self.missing.as_ref(),
        }
    }

    /// Whether the row says anything about arm64 hosts.
    pub fn has_arm64_mapping(&self) -> bool {
        self.arm64.is_some() || self.arm64_missing.is_some()
    }
}

/// A series of a [`Bars::Values`] chart drawn from a published column.
#[derive(Clone, Debug, PartialEq)]
pub struct PublishedSeries {
    /// Index into [`SeedTable::published`].
    pub column: usize,
    /// Legend.
    pub legend: String,
    /// Colour.
    pub colour: Swatch,
}

/// A series of a [`Bars::ByText`] chart: this host's rows counting
/// `per_iter` units per iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct TextSeries {
    /// Legend.
    pub legend: String,
    /// The rows it takes, by their [`SeedRow::per_iter`].
    pub per_iter: u32,
    /// Colour.
    pub colour: Swatch,
}

/// How the chart draws the rows.
#[derive(Clone, Debug, PartialEq)]
pub enum Bars {
    /// One bar group per row: its published ratio, this host's and the
    /// peer's.
    Ratios,
    /// One bar group per row: published columns' values and this host's
    /// measure.
    Values {
        /// Series drawn before this host's, in order.
        published: Vec<PublishedSeries>,
        /// Index into [`SeedTable::measures`].
        measure: usize,
    },
    /// One bar group per value of the first text column: the published
    /// value, then one series per [`TextSeries`] with the measure
    /// `measure` of the row with that `per_iter`.
    ByText {
        /// Index into [`SeedTable::measures`].
        measure: usize,
        /// This host's series.
        series: Vec<TextSeries>,
    },
}

/// What a chart repeats beside it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Callout {
    /// Nothing.
    None,
    /// The findings whose names end so.
    Findings(String),
    /// The conclusion.
    Conclusion,
}

/// The chart of a seed table.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedChart {
    /// Heading above the chart.
    pub heading: String,
    /// Title inside it.
    pub title: String,
    /// What the x axis measures.
    pub x_desc: String,
    /// Legend of the published series (empty for [`Bars::Values`], whose
    /// series name their own).
    pub published: String,
    /// The caption after "Published: <source>. ".
    pub caption: String,
    /// What it draws.
    pub bars: Bars,
    /// What the chart repeats beside it.
    pub callout: Callout,
    /// Said of the source in the caption, in brackets.
    pub source_note: Option<String>,
}

/// A table for people showing its published values, and this host's, in
/// one cell each.
#[derive(Clone, Debug)]
pub struct Joined {
    /// Title of the published cell.
    pub published: String,
    /// Title of this host's cell.
    pub this_host: String,
    /// Writes the values (published columns, or the measures in the
    /// table); `None` shows `–`.
    pub format: JoinedFormat,
}

/// Writes a joined cell's values.
pub type JoinedFormat = fn(&[Option<f64>]) -> Option<String>;

/// A value derived from the report that a seed table shows after its
/// findings.
#[derive(Clone, Debug)]
pub struct DerivedLine {
    /// Key in the view's JSON (`null` when not computed).
    pub key: String,
    /// Heading of its section.
    pub heading: String,
    /// What it compares, in words.
    pub what: String,
    /// Computes it.
    pub value: fn(&Report) -> Option<Derived>,
}

/// A seed's own conclusions: formulas over scenario names, run once on
/// the seed's published values and once on this host's, so both are
/// computed by the same arithmetic.
#[derive(Clone, Copy, Debug)]
pub struct Findings {
    /// The formulas (in [`crate::derive::findings`]), given the published
    /// lookup and this host's, each by scenario name. The published one
    /// is [`SeedTable::published_for`].
    pub formula: fn(Lookup, Lookup) -> Vec<Finding>,
    /// This host's value of a scenario, as the formulas compare it.
    pub this_host: fn(&Report, &SeedTable, &str) -> Option<f64>,
}

impl Findings {
    /// The scenario names the formulas read.
    pub fn reads(&self) -> Vec<String> {
        let names = std::cell::RefCell::new(Vec::<String>::new());
        let record = |n: &str| {
            let mut names = names.borrow_mut();
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
            None
        };
        (self.formula)(&record, &record);
        names.into_inner()
    }
}

/// A further number the seed publishes, cited in the notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Also {
    /// The seed's name for it.
    pub name: String,
    /// Its value.
    pub value: u32,
    /// The scenario it stands for in the findings, if any.
    pub scenario: Option<String>,
}

/// Writes a seed's verdict and this host's from the report, its table and
/// the findings.
pub type Conclusion = fn(&Report, &SeedTable, &[Finding]) -> Vec<String>;

/// A seed's code: what its data file cannot say (computations and
/// formats). Each hook a file relies on is named in its list entry
/// ([`super::list::SEEDS`]); the file's sections that need one (`joined`,
/// `derived`, `findings_heading`, `seed_conclusion`, a `findings` or
/// `conclusion` callout) are checked against these when it is loaded.
#[derive(Clone, Copy, Debug)]
pub struct Hooks {
    /// The seed's own conclusions, computed for the seed and this host.
    pub findings: Option<Findings>,
    /// The seed's verdict in words and this host's, from the findings.
    pub conclusion: Option<Conclusion>,
    /// Notes after the file's that depend on the report.
    pub report_notes: Option<fn(&Report) -> Vec<String>>,
    /// What the status column says of a measured row instead of its status
    /// (which of its values the table shows); titles it "basis / status".
    pub basis: Option<fn(&Measured) -> Option<&'static str>>,
    /// Computes the file's `derived` line.
    pub derived: Option<fn(&Report) -> Option<Derived>>,
    /// Writes the file's `joined` cells.
    pub joined: Option<JoinedFormat>,
}

impl Hooks {
    /// No code: a seed that is all data.
    pub const NONE: Hooks = Hooks {
        findings: None,
        conclusion: None,
        report_notes: None,
        basis: None,
        derived: None,
        joined: None,
    };
}

/// Everything a seed publishes and how this host's results map onto it.
#[derive(Clone, Debug)]
pub struct SeedTable {
    /// The view's command-line name (its file is `seeds/<view>.toml`).
    pub view: &'static str,
    /// The seed file's number (`000`).
    pub seed: String,
    /// Heading.
    pub title: String,
    /// Citation.
    pub source: String,
    /// What carries over from the seed and what does not.
    pub caption: String,
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
    pub texts: Vec<Field>,
    /// The column of [`SeedRow::per_iter`], when shown.
    pub per_iter: Option<Field>,
    /// The published columns with their units.
    pub published: Vec<(Field, Unit)>,
    /// The seed's mark on some rows: JSON bool, CSV column, and the title
    /// appended to the joined published cell.
    pub flag: Option<Field>,
    /// The published ratio column (compared published column ÷ the `per`
    /// row's), when the table compares rows.
    pub published_ratio: Option<Field>,
    /// This host's columns.
    pub measures: Vec<Measure>,
    /// Which published column the ratios divide.
    pub compare_published: usize,
    /// Which measure the ratios divide.
    pub compare_measure: usize,
    /// This host's ratio column (compared measure ÷ the `per` row's),
    /// when the table compares rows.
    pub ratio: Option<Field>,
    /// A scenario this host's ratios divide by instead when the `per`
    /// row's is not measured here (the hypercall on a nested AMD host),
    /// said in the view's notes and chart caption.
    pub fallback_per: Option<String>,
    /// Joins the published and this host's values into one cell each in
    /// the table for people (CSV keeps them apart).
    pub joined: Option<Joined>,
    /// Whether the published columns come after this host's (else before).
    pub published_last: bool,
    /// The peer VMM whose rows get columns when the report has any.
    pub peer: Option<String>,
    /// The rows, in the seed's order.
    pub rows: Vec<SeedRow>,
    /// Further single numbers the seed publishes, cited in the notes.
    pub also: Vec<Also>,
    /// The seed's own conclusion, verbatim, for [`Hooks::conclusion`].
    pub seed_conclusion: Option<String>,
    /// The heading the findings are shown under.
    pub findings_heading: String,
    /// A derived value shown after them.
    pub derived: Option<DerivedLine>,
    /// Notes after the citation.
    pub notes: Vec<String>,
    /// The caption for a report measured on arm64 (the rows' `arm64`
    /// scenarios), when it differs from [`SeedTable::caption`].
    pub arm64_caption: Option<String>,
    /// The notes for a report measured on arm64, when they differ.
    pub arm64_notes: Vec<String>,
    /// The chart.
    pub chart: SeedChart,
    /// The seed's code.
    pub hooks: Hooks,
}

impl SeedTable {
    /// The further published number called `name`.
    pub fn also(&self, name: &str) -> Option<f64> {
        self.also
            .iter()
            .find(|a| a.name == name)
            .map(|a| f64::from(a.value))
    }

    /// The published value the findings compare for `scenario`: its row's
    /// compared column, else the [`Also`] number standing for it.
    pub fn published_for(&self, scenario: &str) -> Option<f64> {
        let row = self.row_for(scenario);
        row.and_then(|r| self.published(&r.label)).or_else(|| {
            self.also
                .iter()
                .find(|a| a.scenario.as_deref() == Some(scenario))
                .map(|a| f64::from(a.value))
        })
    }

    /// Published value (the compared column) of the row labelled `label`.
    pub fn published(&self, label: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.label == label)
            .and_then(|r| r.published.get(self.compare_published).copied().flatten())
    }

    /// The row measured by `scenario`: the first with that scenario, of
    /// those the lab has one for.
    pub fn row_for(&self, scenario: &str) -> Option<&SeedRow> {
        self.rows.iter().find(|r| r.scenario() == Some(scenario))
    }

    /// Every scenario its rows name, in row order (arm64 ones not
    /// included).
    pub fn scenarios(&self) -> impl Iterator<Item = &str> {
        self.rows.iter().filter_map(SeedRow::scenario)
    }
}
