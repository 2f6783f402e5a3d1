//! Renders a [`Comparison`].

use super::grid::{Align, Grid, Row};
use super::kut::KutLine;
use super::{bmf, csv, html, kut, markdown, table, tap, Format};
use crate::compare::{Comparison, SIGNIFICANCE_RULE};
use crate::fmt::{cycles, opt};

fn comparison_grid(c: &Comparison) -> Grid {
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
    for k in &c.only_old {
        g.push(Row::spanned(vec![k.clone()], "only in old".to_string()));
    }
    for k in &c.only_new {
        g.push(Row::spanned(vec![k.clone()], "only in new".to_string()));
    }
    g
}

/// Renders `c` in `format`. Table, markdown, CSV and JSON are the natural
/// ones; HTML is a small self-contained page with the table; kut prints the
/// new side's medians (`(skipped)` for scenarios without one); BMF gives
/// each scenario's new/old `ratio` measure; TAP is a regression gate, a
/// significant slowdown being `not ok`.
pub fn render_comparison(c: &Comparison, format: Format) -> String {
    let header = format!("new: {}\nold: {}\n", c.new_label, c.old_label);
    match format {
        Format::Table => format!(
            "{header}\n{}\nSignificant: {SIGNIFICANCE_RULE}.\n{}\n",
            table::grid(&comparison_grid(c)),
            c.verdict()
        ),
        Format::Markdown => format!(
            "## trapline comparison\n\n- new: {}\n- old: {}\n\n{}\nSignificant: {SIGNIFICANCE_RULE}.\n\n**{}**\n",
            c.new_label,
            c.old_label,
            markdown::grid(&comparison_grid(c)),
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
            let body = format!(
                "<h1>trapline comparison</h1>\n<p class=\"sub\">new: {}<br>old: {}</p>\n{}\n\
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
