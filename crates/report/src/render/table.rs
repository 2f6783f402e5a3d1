//! Terminal output: aligned columns, then footer sections and the host line.

use super::grid::{Align, Grid, Mode};
use super::Page;
use crate::describe::{host_line, peer_line};
use crate::model::Report;
use crate::summary::layout::{unbreak, wrap};

/// Lays a grid out as space-aligned text with a dashed rule under the
/// header. Spanning texts start at their column and are not padded.
pub fn grid(g: &Grid) -> String {
    let n = g.columns.len();
    let mut widths: Vec<usize> = g.columns.iter().map(|c| c.title.chars().count()).collect();
    let rows: Vec<Vec<String>> = g.rows.iter().map(|r| r.texts(Mode::Display)).collect();
    for cells in &rows {
        for (i, cell) in cells.iter().enumerate().take(n) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = g.columns.iter().map(|c| c.title.clone()).collect();
    push_line(&mut out, g, &widths, &header, None);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    push_line(&mut out, g, &widths, &rule, None);
    for (row, cells) in g.rows.iter().zip(&rows) {
        push_line(&mut out, g, &widths, cells, row.span.as_deref());
    }
    out
}

fn push_line(out: &mut String, g: &Grid, widths: &[usize], cells: &[String], span: Option<&str>) {
    let mut line = String::new();
    for (i, cell) in cells.iter().enumerate().take(widths.len()) {
        if i > 0 {
            line.push_str("  ");
        }
        let pad = widths[i].saturating_sub(cell.chars().count());
        match g.columns.get(i).map(|c| c.align) {
            Some(Align::Right) => {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            _ => {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
    }
    if let Some(span) = span {
        if !cells.is_empty() {
            line.push_str("  ");
        }
        line.push_str(span);
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// Text for a terminal `width` columns wide (`None`: no limit, every line
/// as long as it is).
#[derive(Clone, Copy)]
struct Fit {
    width: Option<usize>,
}

impl Fit {
    /// `text` wrapped at words, the first line after `first`, the others
    /// after `rest`.
    fn para(self, out: &mut String, text: &str, first: &str, rest: &str) {
        match self.width {
            None => out.push_str(&format!("{first}{text}\n")),
            Some(w) => {
                for line in wrap(text, w, first, rest) {
                    out.push_str(&unbreak(&line));
                    out.push('\n');
                }
            }
        }
    }

    /// A grid, and a line naming the columns left out.
    fn grid(self, out: &mut String, g: &Grid, dropped: &mut Vec<String>) {
        match self.width {
            None => out.push_str(&grid(g)),
            Some(w) => {
                let f = super::fit::grid(g, w);
                for line in f.lines {
                    out.push_str(&line);
                    out.push('\n');
                }
                if !f.dropped.is_empty() {
                    self.para(
                        out,
                        &format!("(not shown at this width: {})", f.dropped.join(", ")),
                        "",
                        " ",
                    );
                    dropped.extend(f.dropped);
                }
            }
        }
    }
}

fn sections(out: &mut String, page: &dyn Page, fit: Fit) {
    for section in page.sections() {
        if section.items.is_empty() {
            continue;
        }
        out.push('\n');
        fit.para(out, &format!("{}:", section.heading), "", "  ");
        for item in &section.items {
            fit.para(out, item, "  ", "    ");
        }
    }
}

/// A page's caption and tables (no title).
fn head(out: &mut String, page: &dyn Page, fit: Fit, dropped: &mut Vec<String>) {
    if let Some(caption) = page.caption() {
        fit.para(out, &caption, "", "");
        out.push('\n');
    }
    fit.grid(out, &page.grid(), dropped);
    for (title, g) in page.extra_grids() {
        out.push('\n');
        fit.para(out, &format!("{title}:"), "", "  ");
        out.push('\n');
        fit.grid(out, &g, dropped);
    }
}

/// A whole page for a terminal `width` columns wide (`None`: as wide as
/// its lines are, for files and pipes): long texts wrap at words, tables
/// wrap their last column or leave out columns (named under the table and
/// at the end, with how to see them).
pub fn render_fit(report: &Report, page: &dyn Page, width: Option<usize>) -> String {
    let fit = Fit { width };
    let mut dropped = Vec::new();
    let mut out = String::new();
    fit.para(&mut out, &page.title(), "", "  ");
    out.push('\n');
    // A composite page's parts come between its own tables and sections.
    head(&mut out, page, fit, &mut dropped);
    for part in &page.parts() {
        let title = part.page.title();
        out.push_str("\n\n");
        fit.para(
            &mut out,
            &format!("== {title} [{}] ==", part.name),
            "",
            "   ",
        );
        out.push('\n');
        head(&mut out, part.page, fit, &mut dropped);
        sections(&mut out, part.page, fit);
    }
    sections(&mut out, page, fit);
    out.push('\n');
    fit.para(&mut out, &host_line(report), "host: ", "      ");
    if let Some(peer) = peer_line(report) {
        fit.para(&mut out, &peer, "peer: ", "      ");
    }
    if let (Some(note), Some(title)) = (&report.host.nested_note, report.host.caveat_title()) {
        fit.para(
            &mut out,
            &format!("{title}: {note}"),
            "caveat: ",
            "        ",
        );
    }
    if !dropped.is_empty() {
        out.push('\n');
        fit.para(
            &mut out,
            &format!("{NARROWED} (left out: {})", dropped.join(", ")),
            "",
            "  ",
        );
    }
    if let Some(p) = &report.partial {
        out.push_str(&format!("{}\n", p.note()));
    }
    out
}

/// The note under a page that left columns out for the terminal's width.
pub const NARROWED: &str = "Some columns were left out to fit this terminal; every column: \
     --format csv or md, a wider terminal, or a pipe or file (`| less -S`), which keep the \
     full width";
