//! GitHub-flavoured markdown: a pipe table and bullet lists.

use super::grid::{Align, Grid, Mode};
use super::Page;
use crate::describe::{host_line, peer_line};
use crate::model::Report;

/// Escapes a cell: backslashes and pipes, `<`/`>` (GitHub would take them
/// for HTML), line breaks become spaces.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace(['\r', '\n'], " ")
}

/// A pipe table; a spanning text fills the first free cell.
pub fn grid(g: &Grid) -> String {
    let n = g.columns.len();
    let mut out = String::new();
    let header: Vec<String> = g.columns.iter().map(|c| cell(&c.title)).collect();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    let rule: Vec<&str> = g
        .columns
        .iter()
        .map(|c| match c.align {
            Align::Left => "---",
            Align::Right => "---:",
        })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in &g.rows {
        let cells: Vec<String> = row
            .padded(n, Mode::Display)
            .iter()
            .map(|c| cell(c))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// A page's caption and tables; headings at `level`.
fn head(out: &mut String, page: &dyn Page, level: &str) {
    if let Some(caption) = page.caption() {
        out.push_str(&format!("_{}_\n\n", cell(&caption)));
    }
    out.push_str(&grid(&page.grid()));
    for (title, g) in page.extra_grids() {
        out.push_str(&format!("\n{level} {}\n\n", cell(&title)));
        out.push_str(&grid(&g));
    }
}

fn sections(out: &mut String, page: &dyn Page, level: &str) {
    for section in page.sections() {
        if section.items.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{level} {}\n\n", cell(&section.heading)));
        for item in &section.items {
            out.push_str(&format!("- {}\n", cell(item)));
        }
    }
}

/// A whole page as markdown.
pub fn render(report: &Report, page: &dyn Page) -> String {
    let mut out = format!("## {}\n\n", cell(&page.title()));
    out.push_str(&format!("_Host: {}_\n\n", cell(&host_line(report))));
    if let Some(peer) = peer_line(report) {
        out.push_str(&format!("_Peer: {}_\n\n", cell(&peer)));
    }
    if let Some(note) = &report.host.nested_note {
        let title = if report.host.emulated {
            "Emulated host"
        } else {
            "Nested virtualization"
        };
        out.push_str(&format!("> **{title}:** {}\n\n", cell(note)));
    }
    if let Some(p) = &report.partial {
        out.push_str(&format!("> **Partial run:** {}\n\n", cell(&p.detail())));
    }
    // A composite page's parts come between its own tables and sections.
    head(&mut out, page, "###");
    for part in &page.parts() {
        out.push_str(&format!(
            "\n### {} (`{}`)\n\n",
            cell(&part.page.title()),
            part.name
        ));
        head(&mut out, part.page, "####");
        sections(&mut out, part.page, "####");
    }
    sections(&mut out, page, "###");
    out
}
