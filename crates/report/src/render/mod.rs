//! Output formats. A view decides *what* is shown (a [`Page`]); a
//! [`Format`] decides *how*.

pub(crate) mod bmf;
pub(crate) mod charts;
pub(crate) mod compare;
pub(crate) mod csv;
pub(crate) mod fit;
pub(crate) mod grid;
pub(crate) mod html;
pub(crate) mod kut;
pub(crate) mod markdown;
pub(crate) mod table;
pub(crate) mod tails_chart;
pub(crate) mod tap;

use crate::model::Report;
use grid::{Grid, Section};
use kut::KutLine;

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// Pretty JSON.
    Json,
    /// GitHub-flavoured markdown.
    Markdown,
    /// RFC 4180 CSV.
    Csv,
    /// kvm-unit-tests `vmexit` style lines.
    Kut,
    /// One self-contained HTML file with inline SVG charts.
    Html,
    /// Bencher Metric Format JSON: every measured scenario's median, min
    /// and max cycles, whatever the view.
    Bmf,
    /// TAP version 13: one test point per scenario, whatever the view.
    Tap,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 8] = [
        Format::Table,
        Format::Json,
        Format::Markdown,
        Format::Csv,
        Format::Kut,
        Format::Html,
        Format::Bmf,
        Format::Tap,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Csv => "csv",
            Format::Kut => "kut",
            Format::Html => "html",
            Format::Bmf => "bmf",
            Format::Tap => "tap",
        }
    }

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Table => "txt",
            Format::Json => "json",
            Format::Markdown => "md",
            Format::Csv => "csv",
            Format::Kut => "kut",
            Format::Html => "html",
            Format::Bmf => "json",
            Format::Tap => "tap",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    /// A format's name, or `text` (table) or `md` (markdown).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.to_ascii_lowercase();
        let name = match s.as_str() {
            "text" => "table",
            "md" => "markdown",
            name => name,
        };
        Format::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown format {s:?} (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// A chart for the HTML page, already drawn.
pub(crate) struct Chart {
    /// Heading above it.
    pub title: String,
    /// One or two sentences under it.
    pub caption: String,
    /// The SVG, or why there is none.
    pub svg: Result<String, String>,
    /// Key numbers shown in a box beside the chart.
    pub callout: Vec<String>,
}

/// One page of a composite view (see [`Page::parts`]).
pub(crate) struct Part<'a> {
    /// The view's command-line name (`pci-testdev`, …): HTML anchors, CSV
    /// and kut prefixes.
    pub name: &'static str,
    /// The page itself.
    pub page: &'a dyn Page,
}

/// What a view shows, independent of format. New views implement this.
pub(crate) trait Page {
    /// Heading.
    fn title(&self) -> String;
    /// One sentence under the heading: what is comparable and what is not.
    fn caption(&self) -> Option<String> {
        None
    }
    /// The main table for people.
    fn grid(&self) -> Grid;
    /// Further titled tables for people, shown after the main one (before
    /// the sections). CSV has only [`Page::csv_grid`], which must then hold
    /// them too.
    fn extra_grids(&self) -> Vec<(String, Grid)> {
        Vec::new()
    }
    /// The main table for machines (CSV); the display grid by default.
    fn csv_grid(&self) -> Grid {
        self.grid()
    }
    /// Lists shown after the table.
    fn sections(&self) -> Vec<Section>;
    /// kut lines.
    fn kut(&self) -> Vec<KutLine>;
    /// Pretty JSON of the view.
    fn json(&self) -> String;
    /// Charts for HTML.
    fn charts(&self) -> Vec<Chart>;
    /// Pages shown one after another, each with its own heading, caption,
    /// table, sections and charts (the `seeds` view). Empty for a simple
    /// page; when not empty, `grid` is an overview shown before them and
    /// `sections` come after them.
    fn parts(&self) -> Vec<Part<'_>> {
        Vec::new()
    }
}

/// Renders `page`, a view of `report`, in `format` (BMF and TAP list every
/// scenario whatever the page); the table format fits `width` columns when
/// given (see [`table::render_fit`]).
pub(crate) fn render_page(
    report: &Report,
    page: &dyn Page,
    format: Format,
    width: Option<usize>,
) -> String {
    match format {
        Format::Table => table::render_fit(report, page, width),
        Format::Json => format!("{}\n", page.json()),
        Format::Markdown => markdown::render(report, page),
        Format::Csv => csv::grid(&page.csv_grid()),
        Format::Kut => kut::lines(&page.kut()),
        Format::Html => html::render(report, page),
        // Machine formats keyed by scenario: the whole run, not the page.
        Format::Bmf => bmf::render(report),
        Format::Tap => tap::render(report),
    }
}
