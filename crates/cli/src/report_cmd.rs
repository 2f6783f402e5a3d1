//! `trapline report RUN.json`: renders a saved run (a results folder's
//! `report.json`, or `bench --save`) in any view and format, writes more
//! files from it, or compares it with an older run — without measuring
//! and without /dev/kvm.

use std::path::PathBuf;

use trapline_report::{Format, Report, View};

use crate::outputs::{parse_export, Export, FormatArg, Outputs};
use crate::present::{self, Presentation};

/// The command's name, as its messages begin.
const COMMAND: &str = "trapline report";

/// Exit statuses of `trapline report`.
pub mod status {
    /// Rendered and written.
    pub const OK: i32 = 0;
    /// Bad command line, unreadable or empty report, or unwritable output.
    pub const USAGE: i32 = 2;
    /// `--fail-on-regression`: the comparison's verdict is "regressed"
    /// (`trapline bench` uses it too).
    pub const REGRESSED: i32 = 9;
}

/// `--view`: one of the report's views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewName(pub View);

static VIEWS: std::sync::LazyLock<Vec<ViewName>> =
    std::sync::LazyLock::new(|| View::all().map(ViewName).collect());

impl clap::ValueEnum for ViewName {
    fn value_variants<'a>() -> &'a [Self] {
        &VIEWS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).help(self.0.about()))
    }
}

/// `trapline report` arguments.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// A saved run: its `report.json` (from a results folder or `bench
    /// --save`), or the folder holding it (`trapline-results/latest`).
    #[arg(value_name = "RUN.json")]
    pub run: PathBuf,
    /// Which rows and published numbers to show.
    #[arg(long, value_enum, default_value = "all")]
    pub view: ViewName,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// With the table format and the default view: the full table instead
    /// of the summary.
    #[arg(long)]
    pub verbose: bool,
    /// Also write the view as a self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the whole report as JSON to FILE (whatever the view).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Also write the view in FORMAT to FILE (repeatable: `--export
    /// csv:r.csv --export md:r.md`).
    #[arg(long, value_name = "FORMAT:FILE", value_parser = parse_export)]
    pub export: Vec<Export>,
    /// Compare with an older saved run (its report.json, or the results
    /// folder holding it): each scenario's ratio, changes beyond the spread
    /// flagged, a warning when the runs' settings or hosts differ, and a
    /// verdict.
    #[arg(long, value_name = "OLD.json")]
    pub compare: Option<PathBuf>,
    /// With --compare: exit with status 9 when the verdict is "regressed"
    /// (for CI).
    #[arg(long, requires = "compare")]
    pub fail_on_regression: bool,
    /// With `--view paper`: a saved run of the other architecture, shown as
    /// Table 3's other side (one x86_64 run and one arm64 run, either
    /// order; table, md, csv or json).
    #[arg(long, value_name = "OTHER.json", conflicts_with_all = ["compare", "html", "save", "export", "verbose"])]
    pub beside: Option<PathBuf>,
}

pub use trapline_report::saved::load;

/// Runs `trapline report`; returns the exit status.
pub fn main(args: ReportArgs) -> i32 {
    let report = match load(&args.run) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{COMMAND}: error: {}: {e}", args.run.display());
            return status::USAGE;
        }
    };
    let old = match &args.compare {
        Some(p) => match load(p) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("{COMMAND}: error: --compare {}: {e}", p.display());
                return status::USAGE;
            }
        },
        None => None,
    };
    if let Some(other) = &args.beside {
        return beside(&report, other, &args);
    }
    let outputs = Outputs {
        save: args.save.clone(),
        html: args.html.clone(),
        exports: args.export.clone(),
    };
    if let Err(e) = outputs.check() {
        eprintln!("{COMMAND}: error: {e}");
        return status::USAGE;
    }
    let view = args.view.0;
    // CSV, kvm-unit-tests', BMF and TAP lines have no place for it.
    if let (Some(p), Format::Csv | Format::Kut | Format::Bmf | Format::Tap) =
        (&report.partial, args.format.format())
    {
        eprintln!("{COMMAND}: note: {}", p.note());
    }
    present::print(
        &report,
        Presentation {
            format: args.format.format(),
            view,
            verbose: args.verbose,
            command: COMMAND,
        },
        &[],
    );
    match outputs.write(&report, view) {
        Ok(files) => {
            for f in files {
                eprintln!("{COMMAND}: wrote {}", f.display());
            }
        }
        Err(e) => {
            eprintln!("{COMMAND}: error: {e}");
            return status::USAGE;
        }
    }
    let regressed = old.is_some_and(|old| {
        present::print_comparison(&report, &old, args.format.format(), args.verbose, COMMAND)
    });
    if regressed && args.fail_on_regression {
        eprintln!("{COMMAND}: the comparison's verdict is regressed (--fail-on-regression)");
        return status::REGRESSED;
    }
    status::OK
}

/// `--beside OTHER.json`: Table 3 with this project's x86 and arm64 runs.
fn beside(report: &Report, other: &std::path::Path, args: &ReportArgs) -> i32 {
    if args.view.0.name() != "paper" {
        eprintln!(
            "{COMMAND}: error: {}",
            trapline_report::PairError::View(args.view.0.name().to_string())
        );
        return status::USAGE;
    }
    let other = match load(other) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{COMMAND}: error: --beside {}: {e}", other.display());
            return status::USAGE;
        }
    };
    match trapline_report::render_pair(report, &other, args.format.format()) {
        Ok(text) => {
            out!("{text}");
            status::OK
        }
        Err(e) => {
            eprintln!("{COMMAND}: error: {e}");
            status::USAGE
        }
    }
}
