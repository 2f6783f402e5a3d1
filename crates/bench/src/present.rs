//! What `trapline bench` and `trapline report` print from a report: the
//! one-screen summary for the default table and view, the full table with
//! `--verbose`, any other format or view as rendered, and a comparison
//! with an older run.

use trapline_report::{
    compare, render, render_comparison, summary, summary_header, Format, Report, SummaryOptions,
    View,
};

/// How to show a report on standard output.
#[derive(Clone, Copy, Debug)]
pub struct Presentation {
    /// The format.
    pub format: Format,
    /// The view.
    pub view: View,
    /// The full table instead of the summary (table format, default view).
    pub verbose: bool,
    /// The command, as messages begin (`trapline bench`).
    pub command: &'static str,
}

/// Prints `report` as `how` says; `files` are the results folder's files,
/// named in the summary (or on stderr, out of a machine-readable output).
pub fn print(report: &Report, how: Presentation, files: &[String]) {
    if how.format != Format::Table || how.view != View::All {
        out!("{}", render(report, how.format, how.view));
        for f in files {
            eprintln!("{}: wrote {f}", how.command);
        }
        return;
    }
    let width = crate::terminal::stdout_columns();
    if how.verbose {
        out!("{}", summary_header(report, width));
        outln!();
        out!("{}", render(report, Format::Table, View::All));
        if !files.is_empty() {
            outln!("\nFull report: {}", files.join(", "));
        }
        return;
    }
    out!(
        "{}",
        summary(
            report,
            &SummaryOptions {
                width,
                files: files.to_vec(),
            }
        )
    );
}

/// Prints the comparison of `report` with `old` in `format` (its
/// significance rule and a verdict line last, for people's formats).
pub fn print_comparison(report: &Report, old: &Report, format: Format) {
    outln!();
    out!("{}", render_comparison(&compare(report, old), format));
}
