//! What `trapline bench` and `trapline report` print from a report: the
//! one-screen summary for the default table and view, the full table with
//! `--verbose`, any other format or view as rendered, and a comparison
//! with an older run.

use trapline_report::{
    compare, render_comparison_with, render_width, summary, summary_header, CompareDetail,
    CompareVerdict, Format, Report, SummaryOptions, View,
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
    // A view in the table format fits a terminal; a pipe or a file gets
    // every column (see `terminal::view_columns`).
    let fit = crate::terminal::view_columns();
    if how.format != Format::Table || how.view != View::All {
        out!("{}", render_width(report, how.format, how.view, fit));
        for f in files {
            eprintln!("{}: wrote {f}", how.command);
        }
        return;
    }
    let width = crate::terminal::stdout_columns();
    if how.verbose {
        out!("{}", summary_header(report, width));
        outln!();
        out!("{}", render_width(report, Format::Table, View::All, fit));
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
/// significance rule and a verdict line last, for people's formats; the
/// scenarios only one run has, one per row with `verbose`, else counted);
/// a warning on stderr when the runs' settings or hosts differ. Returns
/// whether the verdict is "regressed".
pub fn print_comparison(
    report: &Report,
    old: &Report,
    format: Format,
    verbose: bool,
    command: &str,
) -> bool {
    let c = compare(report, old);
    if !c.differences.is_empty() && !matches!(format, Format::Table | Format::Markdown) {
        // People's formats carry it in their text; machines' on stderr.
        eprintln!(
            "{command}: warning: the compared runs differ ({})",
            c.differences.join("; ")
        );
    }
    outln!();
    out!(
        "{}",
        render_comparison_with(
            &c,
            format,
            CompareDetail {
                verbose,
                width: crate::terminal::view_columns(),
            }
        )
    );
    matches!(c.verdict(), CompareVerdict::Regressed { .. })
}
