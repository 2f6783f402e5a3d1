//! Renders a [`Comparison`].

use super::grid::{Align, Grid, Row};
use super::kut::KutLine;
use super::{bmf, csv, fit, html, kut, markdown, table, tap, Format};
use crate::compare::{Comparison, SIGNIFICANCE_RULE};
use crate::fmt::{cycles, opt};

/// How much of a comparison people's formats show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompareDetail {
    /// Every scenario only one run has, one row each (else one line
    /// counting them).
    pub verbose: bool,
    /// The terminal's width for the table format (`None`: every line
    /// whole, for a pipe or a file).
    pub width: Option<usize>,
}

/// The lines before the table: what was compared, and how the two runs
/// differ (a warning that the ratios may reflect that, not the code).
fn preamble(c: &Comparison) -> String {
    let mut out = format!("new: {}\nold: {}\n", c.new_label, c.old_label);
    if !c.differences.is_empty() {
        out.push_str(&format!(
            "warning: the two runs differ ({}): a change may come from that, not from trapline\n",
            c.differences.join("; ")
        ));
    }
    out
}

/// One line counting the scenarios only one run has (`None`: none).
fn only_line(c: &Comparison) -> Option<String> {
    let part = |n: usize, which: &str| {
        (n > 0).then(|| {
            format!(
                "{n} scenario{} only in the {which} run",
                if n == 1 { "" } else { "s" }
            )
        })
    };
    let parts: Vec<String> = [part(c.only_old.len(), "old"), part(c.only_new.len(), "new")]
        .into_iter()
        .flatten()
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Not compared: {} (each one: --verbose, or --format csv or json).",
            parts.join(", ")
        )
    })
}

fn comparison_grid(c: &Comparison) -> Grid {
    comparison_grid_with(
        c,
        CompareDetail {
            verbose: true,
            width: None,
        },
    )
}

fn comparison_grid_with(c: &Comparison, detail: CompareDetail) -> Grid {
    use Align::{Left, Right};
    let mut g = Grid::new(&[
        ("scenario", Left),
        ("old median", Right),
        ("new median", Right),
        ("new/old", Right),
        ("delta", Right),
        ("±MAD old/new", Right),
        ("significant", Left),
    ]);
    for e in &c.entries {
        g.push(Row::cells(vec![
            e.scenario.clone(),
            cycles(e.old_median),
            cycles(e.new_median),
            opt(e.ratio, |r| format!("{r:.2}x")),
            format!(
                "{}{}",
                if e.delta > 0.0 { "+" } else { "" },
                cycles(e.delta)
            ),
            format!("{}/{}", cycles(e.old_mad), cycles(e.new_mad)),
            if e.significant {
                "yes".to_string()
            } else {
                "no".to_string()
            },
        ]));
    }
    for u in &c.unmeasured {
        g.push(Row::spanned(
            vec![u.scenario.clone()],
            format!("not comparable: old {}, new {}", u.old_status, u.new_status),
        ));
    }
    if detail.verbose {
        for k in &c.only_old {
            g.push(Row::spanned(vec![k.clone()], "only in old".to_string()));
        }
        for k in &c.only_new {
            g.push(Row::spanned(vec![k.clone()], "only in new".to_string()));
        }
    }
    g
}

/// Renders `c` in `format`. Table, markdown, CSV and JSON are the natural
/// ones; HTML is a small self-contained page with the table; kut prints the
/// new side's medians (`(skipped)` for scenarios without one); BMF gives
/// each scenario's new/old `ratio` measure; TAP is a regression gate, a
/// significant slowdown being `not ok`.
/// Renders `c` in `format`, every scenario only one run has in a row of
/// its own (see [`render_comparison_with`]).
pub fn render_comparison(c: &Comparison, format: Format) -> String {
    render_comparison_with(
        c,
        format,
        CompareDetail {
            verbose: true,
            width: None,
        },
    )
}

/// Renders `c` in `format`; in the table and markdown formats, without
/// `detail.verbose`, the scenarios only one run has are one line counting
/// them. Runs whose settings or hosts differ get a warning line naming the
/// differences first (table, markdown, HTML).
pub fn render_comparison_with(c: &Comparison, format: Format, detail: CompareDetail) -> String {
    let header = preamble(c);
    let only = if detail.verbose { None } else { only_line(c) };
    let only = only.map_or_else(String::new, |l| format!("{l}\n"));
    match format {
        Format::Table => {
            let g = comparison_grid_with(c, detail);
            let text = format!(
                "{header}\n{}{only}\nSignificant: {SIGNIFICANCE_RULE}.\n{}\n",
                match detail.width {
                    None => table::grid(&g),
                    Some(w) => fit::grid(&g, w).lines.join("\n") + "\n",
                },
                c.verdict()
            );
            match detail.width {
                None => text,
                Some(w) => crate::summary::layout::fit_text(&text, Some(w)),
            }
        }
        Format::Markdown => format!(
            "## trapline comparison\n\n- new: {}\n- old: {}\n{}\n{}{only}\nSignificant: {SIGNIFICANCE_RULE}.\n\n**{}**\n",
            c.new_label,
            c.old_label,
            if c.differences.is_empty() {
                String::new()
            } else {
                format!("\n**Warning**: the two runs differ ({}): a change may come from that, not from trapline.\n", c.differences.join("; "))
            },
            markdown::grid(&comparison_grid_with(c, detail)),
            c.verdict()
        ),
        Format::Csv => csv::grid(&comparison_grid(c)),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(c)
                .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
            s.push('\n');
            s
        }
        Format::Kut => {
            let mut lines: Vec<KutLine> = c
                .entries
                .iter()
                .map(|e| KutLine {
                    name: e.scenario.clone(),
                    cycles: Some(e.new_median),
                })
                .collect();
            lines.extend(c.unmeasured.iter().map(|u| KutLine {
                name: u.scenario.clone(),
                cycles: None,
            }));
            lines.extend(c.only_new.iter().map(|k| KutLine {
                name: k.clone(),
                cycles: None,
            }));
            kut::lines(&lines)
        }
        Format::Html => {
            let warning = if c.differences.is_empty() {
                String::new()
            } else {
                format!(
                    "<p><strong>Warning</strong>: the two runs differ ({}): a change may come \
                     from that, not from trapline.</p>\n",
                    crate::fmt::html_escape(&c.differences.join("; "))
                )
            };
            let body = format!(
                "<h1>trapline comparison</h1>\n<p class=\"sub\">new: {}<br>old: {}</p>\n{warning}{}\n\
                 <p>Significant: {}.</p>\n<p><strong>{}</strong></p>\n",
                crate::fmt::html_escape(&c.new_label),
                crate::fmt::html_escape(&c.old_label),
                html::grid(&comparison_grid(c)),
                crate::fmt::html_escape(SIGNIFICANCE_RULE),
                crate::fmt::html_escape(&c.verdict().to_string())
            );
            html::document("trapline comparison", &body)
        }
        Format::Bmf => bmf::comparison(c),
        Format::Tap => tap::comparison(c),
    }
}
