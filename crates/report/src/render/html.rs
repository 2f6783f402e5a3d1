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
table.grid{border-collapse:collapse;font-size:.85em;width:100%}
table.grid .nw{white-space:nowrap}
table.grid th,table.grid td{border-bottom:1px solid #e4e4e4;padding:.2em .45em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
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
nav.toc{background:#f7f7f7;border:1px solid #e4e4e4;padding:.4em 1.2em;margin:1em 0}
nav.toc ul{margin:.2em 0;padding-left:1.2em}nav.toc li{margin:.1em 0}
.noise{background:#fdecea;border-left:4px solid #c0392b;padding:.6em 1em}
.noise li{margin:.2em 0}
details.fold summary{cursor:pointer;font-weight:600}
@media print{div.grid{overflow:visible}table.grid{font-size:.75em}nav.toc{display:none}figure{break-inside:avoid}}
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
        if s.fold {
            // Folded: lines a reader seldom needs (passing checks).
            let _ = writeln!(
                out,
                "<details class=\"fold\"><summary>{} ({})</summary>\n<ul>",
                esc(&s.heading),
                s.items.len()
            );
        } else {
            let _ = writeln!(out, "<h3>{}</h3>\n<ul>", esc(&s.heading));
        }
        for item in &s.items {
            let _ = writeln!(out, "<li>{}</li>", esc(item));
        }
        out.push_str(if s.fold {
            "</ul></details>\n"
        } else {
            "</ul>\n"
        });
    }
}

/// An SVG from plotters made fit for inlining: the namespace attribute is
/// implied in HTML, so it is dropped (the page then names no URL at all).
pub fn inline_svg(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen("<svg ", "<svg role=\"img\" ", 1)
}

/// An `id` from a title: lower case letters and digits, words joined by
/// `-`.
fn anchor(title: &str) -> String {
    let mut id = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.ends_with('-') && !id.is_empty() {
            id.push('-');
        }
    }
    id.trim_end_matches('-').to_string()
}

fn chart(out: &mut String, c: &Chart) {
    let _ = writeln!(
        out,
        "<figure>\n<h3 id=\"chart-{}\">{}</h3>",
        anchor(&c.title),
        esc(&c.title)
    );
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

fn method(out: &mut String, report: &Report, contents: &mut Contents) {
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
    contents.h2(out, "Method");
    let _ = writeln!(out, "<p>{}</p>", esc(&p));
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
    if let Some(p) = &report.partial {
        let _ = writeln!(
            out,
            "<p class=\"caveat\"><strong>Partial run.</strong> {}</p>",
            esc(&sentence(&p.detail()))
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
    let charts = p.page.charts();
    for c in &charts {
        chart(out, c);
    }
    out.push_str("</section>\n");
}

/// An anchor's id and its title.
type Link = (String, String);

/// The page's second-level headings, for the contents: each `<h2>`
/// gets an `id` and a link.
#[derive(Default)]
struct Contents {
    /// (id, title, the charts under it).
    entries: Vec<(String, String, Vec<Link>)>,
}

impl Contents {
    /// Writes an `<h2>` with an id and notes it.
    fn h2(&mut self, out: &mut String, title: &str) {
        let id = anchor(title);
        let _ = writeln!(out, "<h2 id=\"{id}\">{}</h2>", esc(title));
        self.entries.push((id, title.to_string(), Vec::new()));
    }

    /// Notes the charts under the last heading.
    fn charts(&mut self, charts: &[Chart]) {
        if let Some(last) = self.entries.last_mut() {
            last.2.extend(
                charts
                    .iter()
                    .map(|c| (format!("chart-{}", anchor(&c.title)), c.title.clone())),
            );
        }
    }

    fn html(&self) -> String {
        let mut out = String::from("<nav class=\"toc\"><strong>Contents</strong>\n<ul>\n");
        for (id, title, charts) in &self.entries {
            let _ = write!(out, "<li><a href=\"#{id}\">{}</a>", esc(title));
            if !charts.is_empty() {
                out.push_str("<ul>");
                for (cid, ctitle) in charts {
                    let _ = write!(out, "<li><a href=\"#{cid}\">{}</a></li>", esc(ctitle));
                }
                out.push_str("</ul>");
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul></nav>\n");
        out
    }
}

/// A red box listing the scenarios whose repeats were noisy, with what to
/// do; nothing when none were.
fn noise(out: &mut String, report: &Report, contents: &mut Contents) {
    let noisy: Vec<_> = report
        .scenarios
        .iter()
        .filter(|s| !s.noise.is_empty())
        .collect();
    if noisy.is_empty() {
        return;
    }
    contents.h2(out, "Noise");
    let _ = writeln!(
        out,
        "<div class=\"noise\"><p><strong>{} of {} scenarios had noisy repeats</strong>: their \
         medians may be off, and charts clip what lies past a robust maximum.</p>\n<ul>",
        noisy.len(),
        report.scenarios.len()
    );
    let mut advice: Vec<&str> = Vec::new();
    for s in &noisy {
        let flags: Vec<String> = s.noise.iter().map(crate::noise::NoiseFlag::text).collect();
        let _ = writeln!(
            out,
            "<li><code>{}</code>: {}</li>",
            esc(&s.key()),
            esc(&flags.join("; "))
        );
        for f in &s.noise {
            if !advice.contains(&f.kind.advice()) {
                advice.push(f.kind.advice());
            }
        }
    }
    out.push_str("</ul>\n");
    for a in advice {
        let _ = writeln!(out, "<p>What to do: {}.</p>", esc(a));
    }
    out.push_str("</div>\n");
}

/// A whole page.
pub fn render(report: &Report, page: &dyn Page) -> String {
    let title = page.title();
    let mut out = String::new();
    let mut contents = Contents::default();
    contents.h2(&mut out, "Host");
    host(&mut out, report);
    method(&mut out, report, &mut contents);
    noise(&mut out, report, &mut contents);
    let parts = page.parts();
    if parts.is_empty() {
        contents.h2(&mut out, "Results");
        caption(&mut out, page);
        tables(&mut out, page);
        sections(&mut out, &page.sections());
        let charts = page.charts();
        if !charts.is_empty() {
            contents.h2(&mut out, "Charts");
            contents.charts(&charts);
            for c in &charts {
                chart(&mut out, c);
            }
        }
    } else {
        contents.h2(&mut out, "Overview");
        caption(&mut out, page);
        out.push_str(&grid(&page.grid()));
        for p in &parts {
            contents.entries.push((
                format!("view-{}", anchor(p.name)),
                p.page.title(),
                Vec::new(),
            ));
            contents.charts(&p.page.charts());
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
    let head = format!(
        "<h1>{}</h1>\n<p class=\"sub\">{} {} · {}</p>\n{}",
        esc(&title),
        esc(&report.tool.name),
        esc(&report.tool.version),
        esc(&host_line(report)),
        contents.html()
    );
    document(&title, &(head + &out))
}
