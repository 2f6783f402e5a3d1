//! One self-contained HTML file: inline CSS and SVG, no scripts run, no
//! network references; the report's JSON rides along in a data block.

use std::fmt::Write as _;

use super::grid::{Align, Grid, Mode, Section};
use super::{Chart, Page, Part};
use crate::describe::{host_line, peer_line};
use crate::fmt::html_escape as esc;
use crate::model::Report;

/// The id of the `<script type="application/json">` block holding the raw
/// report.
pub const DATA_ID: &str = "trapline-data";

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1240px;padding:0 1em;color:#222;line-height:1.45}
h1{margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}
.sub{color:#666;margin-top:0}
dl.host{display:grid;grid-template-columns:max-content auto;gap:.2em 1.2em}
dl.host dt{font-weight:600}dl.host dd{margin:0}
div.grid{overflow-x:auto}
table.grid{border-collapse:collapse;font-size:.92em;width:100%}
table.grid .nw{white-space:nowrap}
table.grid th,table.grid td{border-bottom:1px solid #e4e4e4;padding:.25em .6em;text-align:left;vertical-align:top}
table.grid th{background:#f4f6f8}
table.grid td.r,table.grid th.r{text-align:right;font-variant-numeric:tabular-nums}
table.grid td.span{color:#8a4b00;font-style:italic}
.caveat{background:#fff4e0;border-left:4px solid #e69a2e;padding:.6em 1em}
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#555;font-size:.92em}
.callout{background:#eef4fb;border-left:4px solid #3b6ea8;padding:.6em 1em;margin:.6em 0}
.callout p{margin:.2em 0}
.missing{color:#777;font-style:italic}
p.caption{color:#444;font-style:italic;margin:.3em 0 .8em}
section.view{margin-top:2.5em}
details{margin:.5em 0}
";

/// Cells of at most this many characters count as short (see
/// [`column_classes`]).
const SHORT_CELL: usize = 24;

/// The `class` attribute of each column's cells: `r` for numbers, `nw` (no
/// wrapping) when every cell is one token (a name, a number,
/// `pio-write=1.00`) or short. A browser would otherwise break such a cell
/// at its hyphens (`pio-` / `write=1.00`) when the table is tight; columns
/// of phrases still wrap, between words.
fn column_classes(g: &Grid) -> Vec<String> {
    let n = g.columns.len();
    let mut nowrap = vec![true; n];
    for row in &g.rows {
        for (i, cell) in row.texts(Mode::Display).iter().enumerate().take(n) {
            let one_token = !cell.contains(char::is_whitespace);
            nowrap[i] &= one_token || cell.chars().count() <= SHORT_CELL;
        }
    }
    g.columns
        .iter()
        .zip(nowrap)
        .map(|(c, nowrap)| {
            let mut classes = Vec::new();
            if c.align == Align::Right {
                classes.push("r");
            }
            if nowrap {
                classes.push("nw");
            }
            if classes.is_empty() {
                String::new()
            } else {
                format!(" class=\"{}\"", classes.join(" "))
            }
        })
        .collect()
}

/// The grid as an HTML table (in a box that scrolls sideways when the
/// table is wider than the page); a spanning text gets one cell across the
/// remaining columns.
pub fn grid(g: &Grid) -> String {
    let classes = column_classes(g);
    let mut out = String::from("<div class=\"grid\"><table class=\"grid\">\n<thead><tr>");
    for (c, class) in g.columns.iter().zip(&classes) {
        let _ = write!(out, "<th{class}>{}</th>", esc(&c.title));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let n = g.columns.len();
    for row in &g.rows {
        out.push_str("<tr>");
        for (cell, class) in row.texts(Mode::Display).iter().zip(&classes) {
            let _ = write!(out, "<td{class}>{}</td>", esc(cell));
        }
        let used = row.cells.len().min(n);
        if let Some(span) = &row.span {
            let cols = n.saturating_sub(used).max(1);
            let _ = write!(
                out,
                "<td class=\"span\" colspan=\"{cols}\">{}</td>",
                esc(span)
            );
        } else if used < n {
            let _ = write!(out, "<td colspan=\"{}\"></td>", n - used);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    out
}

fn sections(out: &mut String, sections: &[Section]) {
    for s in sections.iter().filter(|s| !s.items.is_empty()) {
        let _ = writeln!(out, "<h3>{}</h3>\n<ul>", esc(&s.heading));
        for item in &s.items {
            let _ = writeln!(out, "<li>{}</li>", esc(item));
        }
        out.push_str("</ul>\n");
    }
}

/// An SVG from plotters made fit for inlining: the namespace attribute is
/// implied in HTML, so it is dropped (the page then names no URL at all).
pub fn inline_svg(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen("<svg ", "<svg role=\"img\" ", 1)
}

fn chart(out: &mut String, c: &Chart) {
    let _ = writeln!(out, "<figure>\n<h3>{}</h3>", esc(&c.title));
    if !c.callout.is_empty() {
        out.push_str("<div class=\"callout\">\n");
        for line in &c.callout {
            let _ = writeln!(out, "<p>{}</p>", esc(line));
        }
        out.push_str("</div>\n");
    }
    match &c.svg {
        Ok(svg) => out.push_str(&inline_svg(svg)),
        Err(why) => {
            let _ = write!(out, "<p class=\"missing\">No chart: {}</p>", esc(why));
        }
    }
    let _ = writeln!(
        out,
        "\n<figcaption>{}</figcaption>\n</figure>",
        esc(&c.caption)
    );
}

fn host(out: &mut String, report: &Report) {
    let h = &report.host;
    let c = &report.config;
    let mut rows: Vec<(&str, String)> = vec![
        ("CPU", format!("{} ({})", h.cpu_model, h.cpu_vendor)),
        ("Kernel", h.kernel.clone()),
        ("KVM API", h.kvm_api_version.to_string()),
        ("CPUs", h.nproc.to_string()),
        (
            "TSC",
            match (h.tsc_khz, h.tsc_khz_crosscheck) {
                (0, _) => "frequency unknown".to_string(),
                (k, Some(m)) => format!("{k} kHz (measured {m} kHz)"),
                (k, None) => format!("{k} kHz"),
            },
        ),
        (
            "Load average",
            format!(
                "{:.2} {:.2} {:.2}",
                h.load_avg[0], h.load_avg[1], h.load_avg[2]
            ),
        ),
        (
            "Run",
            format!(
                "{} repeats after {} warm-up, loops grown to ≥ {} cycles within {}–{} iterations{}",
                c.repeat,
                c.warmup,
                c.goal_cycles,
                c.min_iters,
                c.max_iters,
                if c.quick { ", quick mode" } else { "" }
            ),
        ),
    ];
    if let Some(only) = &c.only {
        rows.push(("Only", only.clone()));
    }
    if let Some(peer) = peer_line(report) {
        rows.push(("Peer VMM", peer));
    }
    rows.push((
        "Started",
        format!("{} ({:.1} s wall)", report.started_at, report.wall_seconds),
    ));
    out.push_str("<dl class=\"host\">\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(&v));
    }
    out.push_str("</dl>\n");
    if !h.kvm_caps.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>KVM capabilities ({})</summary>\n<ul>",
            h.kvm_caps.len()
        );
        for (k, v) in &h.kvm_caps {
            let _ = writeln!(out, "<li><code>{}</code> = {}</li>", esc(k), v);
        }
        out.push_str("</ul></details>\n");
    }
}

fn method(out: &mut String, report: &Report) {
    let c = &report.config;
    let mut p = format!(
        "Each scenario runs a loop of one guest operation. The guest reads the time-stamp counter \
         (RDTSC) before and after the whole loop, so one sample is total cycles over iterations. \
         The loop starts at {} iterations and is grown until it lasts at least {} cycles (at most \
         {} iterations). After {} untimed warm-up run(s), each scenario is timed {} times; tables \
         show the median cycles per iteration with the median absolute deviation (MAD) and the \
         min–max range across repeats. Net cost subtracts the median of the same VMM's noop loop \
         (the loop and timing overhead) from every repeat. Exits per iteration are host-side \
         counts taken during the timed loops.",
        c.min_iters, c.goal_cycles, c.max_iters, c.warmup, c.repeat
    );
    if report.host.tsc_khz > 0 {
        let _ = write!(
            p,
            " Nanoseconds convert cycles at the host TSC frequency of {} kHz.",
            report.host.tsc_khz
        );
    }
    if c.quick {
        p.push_str(" This was a quick run: fewer repeats and shorter loops, so spreads are wider.");
    }
    let _ = writeln!(out, "<h2>Method</h2>\n<p>{}</p>", esc(&p));
    if let Some(note) = &report.host.nested_note {
        let title = if report.host.emulated {
            "Emulated host."
        } else {
            "Nested virtualization."
        };
        let _ = writeln!(
            out,
            "<p class=\"caveat\"><strong>{title}</strong> {}</p>",
            esc(&sentence(note))
        );
    }
}

/// `note` as a sentence: capital first letter, full stop at the end.
fn sentence(note: &str) -> String {
    let note = note.trim();
    let mut chars = note.chars();
    let mut s: String = match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => return String::new(),
    };
    if !s.ends_with(['.', '!', '?']) {
        s.push('.');
    }
    s
}

/// The report's JSON made safe inside a `<script>` element: every `<`
/// (so every `</` and `<!--`) becomes the JSON escape `\u003c`, which
/// parses back to the same text.
pub fn script_json(report: &Report) -> String {
    report.to_json().replace('<', "\\u003c")
}

/// Wraps `body` in a complete document with the inline style sheet.
pub fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        esc(title)
    )
}

fn caption(out: &mut String, page: &dyn Page) {
    if let Some(c) = page.caption() {
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", esc(&c));
    }
}

/// The page's main table, then its further titled tables.
fn tables(out: &mut String, page: &dyn Page) {
    out.push_str(&grid(&page.grid()));
    for (title, g) in page.extra_grids() {
        let _ = writeln!(out, "<h3>{}</h3>", esc(&title));
        out.push_str(&grid(&g));
    }
}

/// One part of a composite page: its own section, table, lists and charts.
fn part(out: &mut String, p: &Part<'_>) {
    let _ = writeln!(
        out,
        "<section class=\"view\" id=\"view-{}\">\n<h2>{} <small><code>{}</code></small></h2>",
        esc(p.name),
        esc(&p.page.title()),
        esc(p.name)
    );
    caption(out, p.page);
    tables(out, p.page);
    sections(out, &p.page.sections());
    for c in &p.page.charts() {
        chart(out, c);
    }
    out.push_str("</section>\n");
}

/// A whole page.
pub fn render(report: &Report, page: &dyn Page) -> String {
    let title = page.title();
    let mut out = String::new();
    let _ = writeln!(out, "<h1>{}</h1>", esc(&title));
    let _ = writeln!(
        out,
        "<p class=\"sub\">{} {} · {}</p>",
        esc(&report.tool.name),
        esc(&report.tool.version),
        esc(&host_line(report))
    );
    out.push_str("<h2>Host</h2>\n");
    host(&mut out, report);
    method(&mut out, report);
    let parts = page.parts();
    if parts.is_empty() {
        out.push_str("<h2>Results</h2>\n");
        caption(&mut out, page);
        tables(&mut out, page);
        sections(&mut out, &page.sections());
        let charts = page.charts();
        if !charts.is_empty() {
            out.push_str("<h2>Charts</h2>\n");
            for c in &charts {
                chart(&mut out, c);
            }
        }
    } else {
        out.push_str("<h2>Contents</h2>\n");
        caption(&mut out, page);
        out.push_str(&grid(&page.grid()));
        for p in &parts {
            part(&mut out, p);
        }
        sections(&mut out, &page.sections());
        for c in &page.charts() {
            chart(&mut out, c);
        }
    }
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"{DATA_ID}\">\n{}\n</script>",
        script_json(report)
    );
    document(&title, &out)
}
