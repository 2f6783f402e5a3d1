//! Terminal output: aligned columns, then footer sections and the host line.

use super::grid::{Align, Grid, Mode};
use super::Page;
use crate::describe::{host_line, peer_line};
use crate::model::Report;

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

fn sections(out: &mut String, page: &dyn Page) {
    for section in page.sections() {
        if section.items.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{}:\n", section.heading));
        for item in &section.items {
            out.push_str(&format!("  {item}\n"));
        }
    }
}

/// A page's caption and tables (no title).
fn head(out: &mut String, page: &dyn Page) {
    if let Some(caption) = page.caption() {
        out.push_str(&format!("{caption}\n\n"));
    }
    out.push_str(&grid(&page.grid()));
    for (title, g) in page.extra_grids() {
        out.push_str(&format!("\n{title}:\n\n"));
        out.push_str(&grid(&g));
    }
}

/// A whole page for the terminal.
pub fn render(report: &Report, page: &dyn Page) -> String {
    let mut out = format!("{}\n\n", page.title());
    // A composite page's parts come between its own tables and sections.
    head(&mut out, page);
    for part in &page.parts() {
        let title = part.page.title();
        out.push_str(&format!("\n\n== {title} [{}] ==\n\n", part.name));
        head(&mut out, part.page);
        sections(&mut out, part.page);
    }
    sections(&mut out, page);
    out.push_str(&format!("\nhost: {}\n", host_line(report)));
    if let Some(peer) = peer_line(report) {
        out.push_str(&format!("peer: {peer}\n"));
    }
    if let (Some(note), Some(title)) = (&report.host.nested_note, report.host.caveat_title()) {
        out.push_str(&format!("caveat: {title}: {note}\n"));
    }
    if let Some(p) = &report.partial {
        out.push_str(&format!("{}\n", p.note()));
    }
    out
}
