//! One self-contained HTML file: inline CSS and SVG, no scripts run, no
//! network references; the report's JSON rides along in a data block.

use std::fmt::Write as _;

use super::grid::{Align, Grid, Mode, Section};
use super::{Chart, Page, Part};
use crate::describe::{host_line, peer_line};
use crate::fmt::{grouped, html_escape as esc};
use crate::model::Report;

/// The id of the `<script type="application/json">` block holding the raw
/// report.
pub const DATA_ID: &str = "trapline-data";

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.2em auto;max-width:1240px;padding:0 1em;color:#222;line-height:1.45}
h1{margin:0 0 .2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
.sub{color:#666;margin-top:0}
code{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;font-size:.92em;background:#f3f3f3;border-radius:3px;padding:0 .2em}
dl.host{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2em 1.2em}
dl.host dt{font-weight:600}dl.host dd{margin:0;overflow-wrap:break-word}
div.grid{overflow-x:auto;max-width:100%}
table.grid{border-collapse:collapse;font-size:.85em}
table.grid .nw,table.grid .w{white-space:nowrap}
table.grid th,table.grid td{border-bottom:1px solid #e4e4e4;padding:.2em .45em;text-align:left;vertical-align:top}
table.grid th{background:#f4f6f8}
table.grid td.r,table.grid th.r{text-align:right;font-variant-numeric:tabular-nums}
table.grid td.span{color:#8a4b00;font-style:italic;min-width:16em}
table.grid td.prose{min-width:12em}
details.table{margin:.6em 0}details.table>summary{cursor:pointer;color:#1f4e80}
details.table div.grid{max-height:85vh;overflow:auto;border-bottom:1px solid #ccc}
table.grid thead th{position:sticky;top:0;z-index:1}
table.grid tr>:first-child{position:sticky;left:0;background:#fff}
table.grid thead th:first-child{z-index:2;background:#f4f6f8}
.caveat{background:#fff4e0;border-left:4px solid #e69a2e;padding:.6em 1em}
figure{margin:1.2em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#555;font-size:.92em}
.callout{background:#eef4fb;border-left:4px solid #3b6ea8;padding:.4em 1em;margin:.4em 0}
.callout p{margin:.2em 0}
.missing{color:#777;font-style:italic}
p.caption{color:#444;font-style:italic;margin:.3em 0 .8em}
section.view{margin-top:2.5em}
details{margin:.5em 0}
nav.toc{background:#f7f7f7;border:1px solid #e4e4e4;padding:.3em 1em;margin:.8em 0;font-size:.92em}
nav.toc ul{display:inline;margin:0;padding:0}nav.toc li{display:inline}
nav.toc>ul>li:not(:last-child)::after{content:' · '}
nav.toc li ul::before{content:' ('}nav.toc li ul::after{content:')'}
nav.toc li li:not(:last-child)::after{content:', '}
.noise{background:#fdecea;border-left:4px solid #c0392b;padding:.4em 1em}
.noise p{margin:.3em 0}.noise li{margin:.2em 0}
details.fold summary{cursor:pointer;font-weight:600}
@media print{div.grid,details.table div.grid{overflow:visible;max-height:none}table.grid{font-size:.75em}nav.toc{display:none}figure{break-inside:avoid}}
";

/// Cells of at most this many characters count as short (see
/// [`column_classes`]).
const SHORT_CELL: usize = 24;

/// Tables with more rows than this are folded (see [`table`]): a page's
/// charts and headline come first, and a reader opens the long table when
/// they want it.
pub const FOLD_ROWS: usize = 15;

/// The `class` attribute of each column's cells: `r` for numbers, which
/// never wrap (`≤ 20,428 cyc`, `5,880..6,120 cyc`) unless they come with
/// phrases (`153139 iops, 6.53us rtt (extrapolated)`); `nw` when every
/// cell is one token (a name, `pio-write=1.00`); `prose` for columns of
/// longer phrases, which wrap between words but keep a readable width.
/// Other columns wrap between words only when the table is tight.
fn column_classes(g: &Grid) -> Vec<&'static str> {
    let n = g.columns.len();
    let mut one_token = vec![true; n];
    let mut prose = vec![false; n];
    for row in &g.rows {
        for (i, cell) in row.texts(Mode::Display).iter().enumerate().take(n) {
            let words = cell.split_whitespace().count();
            one_token[i] &= words <= 1;
            prose[i] |= words > 1 && cell.chars().count() > SHORT_CELL;
        }
    }
    g.columns
        .iter()
        .enumerate()
        .map(|(i, c)| match c.align {
            Align::Right if prose[i] => " class=\"r\"",
            Align::Right => " class=\"r nw\"",
            Align::Left if one_token[i] => " class=\"nw\"",
            Align::Left if prose[i] => " class=\"prose\"",
            Align::Left => "",
        })
        .collect()
}

/// `s` escaped for HTML, with each word a browser could break inside (at
/// a hyphen, a slash, `=`, a dash) kept whole in a `w` span: a table cell
/// then wraps only between words, so `pio-write=1.00 mmio-read=0.02` may
/// take two lines but never splits `pio-` from `write=1.00`. A word may
/// also wrap after a colon inside it (`<wbr>`): a scenario's key
/// `raw-kvm+idmap:pio-kernel-wildcard` is its VMM and its name.
fn whole_words(s: &str) -> String {
    /// Characters a line never breaks after inside a word.
    fn holds(c: char) -> bool {
        c.is_alphanumeric() || matches!(c, '.' | ',' | ':' | ';' | '\'' | '"')
    }
    fn piece(out: &mut String, p: &str) {
        if p.chars().count() > 1 && !p.chars().all(holds) {
            let _ = write!(out, "<span class=\"w\">{}</span>", esc(p));
        } else {
            out.push_str(&esc(p));
        }
    }
    let flush = |word: &mut String, out: &mut String| {
        let mut pieces = word.split_inclusive(':').peekable();
        while let Some(p) = pieces.next() {
            piece(out, p);
            if pieces.peek().is_some() {
                out.push_str("<wbr>");
            }
        }
        word.clear();
    };
    let mut out = String::with_capacity(s.len() + s.len() / 4);
    let mut word = String::new();
    for c in s.chars() {
        if c.is_whitespace() {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `s` as HTML: escaped by `text`, and what lies between a pair of
/// backticks as `<code>` (the views' texts write commands and flags as
/// `` `trapline run` ``); a backtick without its pair stays as it is.
fn markup_with(s: &str, text: impl Fn(&str) -> String) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    let ticks = parts.len() - 1;
    let mut out = String::with_capacity(s.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        // Odd parts follow an opening backtick; `i < ticks` when a
        // closing one follows them.
        if i % 2 == 0 {
            out.push_str(&text(part));
        } else if i < ticks && !part.is_empty() {
            let _ = write!(out, "<code>{}</code>", text(part));
        } else {
            out.push('`');
            out.push_str(&text(part));
            if i < ticks {
                out.push('`');
            }
        }
    }
    out
}

/// Prose as HTML: escaped, backtick spans as `<code>`.
pub fn markup(s: &str) -> String {
    markup_with(s, esc)
}

/// A table cell as HTML: [`markup`] with its words kept whole.
fn cell(s: &str) -> String {
    markup_with(s, whole_words)
}

/// The grid as an HTML table (in a box that scrolls sideways when the
/// table is wider than the page); a spanning text gets one cell across the
/// remaining columns.
pub fn grid(g: &Grid) -> String {
    let classes = column_classes(g);
    let mut out = String::from("<div class=\"grid\"><table class=\"grid\">\n<thead><tr>");
    // Headers may wrap between words (`median` / `cyc`): a column is as
    // wide as its values need.
    for c in &g.columns {
        let class = if c.align == Align::Right {
            " class=\"r\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", cell(&c.title));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let n = g.columns.len();
    for row in &g.rows {
        out.push_str("<tr>");
        for (text, class) in row.texts(Mode::Display).iter().zip(&classes) {
            let _ = write!(out, "<td{class}>{}</td>", cell(text));
        }
        let used = row.cells.len().min(n);
        if let Some(span) = &row.span {
            let cols = n.saturating_sub(used).max(1);
            let _ = write!(
                out,
                "<td class=\"span\" colspan=\"{cols}\">{}</td>",
                cell(span)
            );
        } else if used < n {
            let _ = write!(out, "<td colspan=\"{}\"></td>", n - used);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    out
}

/// The grid as [`grid`] does, folded into a `<details>` when it has more
/// than [`FOLD_ROWS`] rows; the fold's summary line names it (`what`), its
/// row count and its columns. Opened, it scrolls in a box of most of the
/// window's height, its header row and first column kept in view.
fn table(out: &mut String, g: &Grid, what: &str) {
    if g.rows.len() <= FOLD_ROWS {
        out.push_str(&grid(g));
        return;
    }
    let columns: Vec<&str> = g
        .columns
        .iter()
        .map(|c| c.title.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    let _ = writeln!(
        out,
        "<details class=\"table\"><summary><strong>{}</strong>: {} rows ({})</summary>",
        markup(what),
        g.rows.len(),
        markup(&columns.join(", "))
    );
    out.push_str(&grid(g));
    out.push_str("</details>\n");
}

/// Lists longer than this are folded like a long table.
const FOLD_ITEMS: usize = 10;

fn sections(out: &mut String, sections: &[Section]) {
    for s in sections.iter().filter(|s| !s.items.is_empty()) {
        let fold = s.fold || s.items.len() > FOLD_ITEMS;
        if fold {
            // Folded: lines a reader seldom needs (passing checks), or
            // more of them than a page should show at once.
            let _ = writeln!(
                out,
                "<details class=\"fold\"><summary>{} ({})</summary>\n<ul>",
                markup(&s.heading),
                s.items.len()
            );
        } else {
            let _ = writeln!(out, "<h3>{}</h3>\n<ul>", markup(&s.heading));
        }
        for item in &s.items {
            let _ = writeln!(out, "<li>{}</li>", markup(item));
        }
        out.push_str(if fold { "</ul></details>\n" } else { "</ul>\n" });
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
        markup(&c.title)
    );
    match &c.svg {
        Ok(svg) => out.push_str(&inline_svg(svg)),
        Err(why) => {
            let _ = write!(out, "<p class=\"missing\">No chart: {}</p>", markup(why));
        }
    }
    let _ = writeln!(out, "\n<figcaption>{}</figcaption>", markup(&c.caption));
    // The key numbers after the chart, which comes first on the page.
    if !c.callout.is_empty() {
        out.push_str("<div class=\"callout\">\n");
        for line in &c.callout {
            let _ = writeln!(out, "<p>{}</p>", markup(line));
        }
        out.push_str("</div>\n");
    }
    out.push_str("</figure>\n");
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
                (k, Some(m)) => format!(
                    "{} kHz (measured {} kHz)",
                    grouped(k as f64),
                    grouped(m as f64)
                ),
                (k, None) => format!("{} kHz", grouped(k as f64)),
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
                grouped(c.goal_cycles as f64),
                grouped(c.min_iters as f64),
                grouped(c.max_iters as f64),
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
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), markup(&v));
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
        grouped(c.min_iters as f64),
        grouped(c.goal_cycles as f64),
        grouped(c.max_iters as f64),
        c.warmup,
        c.repeat
    );
    if report.host.tsc_khz > 0 {
        let _ = write!(
            p,
            " Nanoseconds convert cycles at the host TSC frequency of {} kHz.",
            grouped(report.host.tsc_khz as f64)
        );
    }
    if c.quick {
        p.push_str(" This was a quick run: fewer repeats and shorter loops, so spreads are wider.");
    }
    contents.h2(out, "Method");
    let _ = writeln!(out, "<p>{}</p>", markup(&p));
}

/// The nested-virtualization (or emulated-host) caveat, under the page's
/// heading: it bears on every number below it.
fn caveat(out: &mut String, report: &Report) {
    if let Some(note) = &report.host.nested_note {
        let title = if report.host.emulated {
            "Emulated host."
        } else {
            "Nested virtualization."
        };
        let _ = writeln!(
            out,
            "<p class=\"caveat\"><strong>{title}</strong> {}</p>",
            markup(&sentence(note))
        );
    }
    if let Some(p) = &report.partial {
        let _ = writeln!(
            out,
            "<p class=\"caveat\"><strong>Partial run.</strong> {}</p>",
            markup(&sentence(&p.detail()))
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
        let _ = writeln!(out, "<p class=\"caption\">{}</p>", markup(&c));
    }
}

/// The page's charts, then its main table and its further titled tables
/// (folded when long: the charts sum them up), then its lists.
fn body(out: &mut String, page: &dyn Page, charts: &[Chart], what: &str) {
    for c in charts {
        chart(out, c);
    }
    table(out, &page.grid(), what);
    for (title, g) in page.extra_grids() {
        // A folded table's summary line names it.
        if g.rows.len() <= FOLD_ROWS {
            let _ = writeln!(out, "<h3>{}</h3>", markup(&title));
        }
        table(out, &g, &title);
    }
    sections(out, &page.sections());
}

/// One part of a composite page: its own section, charts, tables and lists.
fn part(out: &mut String, p: &Part<'_>) {
    let title = p.page.title();
    let _ = writeln!(
        out,
        "<section class=\"view\" id=\"view-{}\">\n<h2>{} <small><code>{}</code></small></h2>",
        esc(p.name),
        markup(&title),
        esc(p.name)
    );
    caption(out, p.page);
    body(out, p.page, &p.page.charts(), &title);
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
        let _ = writeln!(out, "<h2 id=\"{id}\">{}</h2>", markup(title));
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

    /// One line of links (a list styled inline): each heading, with its
    /// charts in brackets.
    fn html(&self) -> String {
        let mut out = String::from("<nav class=\"toc\"><strong>Contents:</strong>\n<ul>\n");
        for (id, title, charts) in &self.entries {
            let _ = write!(out, "<li><a href=\"#{id}\">{}</a>", markup(title));
            if !charts.is_empty() {
                out.push_str("<ul>");
                for (cid, ctitle) in charts {
                    let _ = write!(out, "<li><a href=\"#{cid}\">{}</a></li>", markup(ctitle));
                }
                out.push_str("</ul>");
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul></nav>\n");
        out
    }
}

/// More noisy scenarios than this fold the box's list.
const NOISE_SHOWN: usize = 3;

/// A red box listing the scenarios whose repeats were noisy, with what to
/// do; nothing when none were. The list is folded when long: the box sits
/// above the charts and must not push them off the first screens.
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
         medians may be off, and charts clip what lies past a robust maximum.</p>",
        noisy.len(),
        report.scenarios.len()
    );
    if noisy.len() > NOISE_SHOWN {
        let _ = writeln!(
            out,
            "<details><summary>Which, and what their repeats showed ({})</summary>",
            noisy.len()
        );
    }
    out.push_str("<ul>\n");
    let mut advice: Vec<&str> = Vec::new();
    for s in &noisy {
        let flags: Vec<String> = s.noise.iter().map(crate::noise::NoiseFlag::text).collect();
        let _ = writeln!(
            out,
            "<li><code>{}</code>: {}</li>",
            esc(&s.key()),
            markup(&flags.join("; "))
        );
        for f in &s.noise {
            if !advice.contains(&f.kind.advice()) {
                advice.push(f.kind.advice());
            }
        }
    }
    out.push_str("</ul>\n");
    if noisy.len() > NOISE_SHOWN {
        out.push_str("</details>\n");
    }
    for a in advice {
        let _ = writeln!(out, "<p>What to do: {}.</p>", markup(a));
    }
    out.push_str("</div>\n");
}

/// A whole page: the heading, the caveat and caption that bear on every
/// number, the contents, the noise box; then the results, charts first
/// (within the first two screens) and long tables folded; the host and
/// the method last.
pub fn render(report: &Report, page: &dyn Page) -> String {
    let title = page.title();
    let mut out = String::new();
    let mut contents = Contents::default();
    noise(&mut out, report, &mut contents);
    let parts = page.parts();
    if parts.is_empty() {
        let charts = page.charts();
        if !charts.is_empty() {
            contents.h2(&mut out, "Charts");
            contents.charts(&charts);
            for c in &charts {
                chart(&mut out, c);
            }
        }
        contents.h2(&mut out, "Results");
        body(&mut out, page, &[], "The results table");
    } else {
        contents.h2(&mut out, "Overview");
        table(&mut out, &page.grid(), "The overview");
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
    contents.h2(&mut out, "Host");
    host(&mut out, report);
    method(&mut out, report, &mut contents);
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"{DATA_ID}\">\n{}\n</script>",
        script_json(report)
    );
    let mut head = format!(
        "<h1>{}</h1>\n<p class=\"sub\">{} {} · {}</p>\n",
        markup(&title),
        esc(&report.tool.name),
        esc(&report.tool.version),
        markup(&host_line(report)),
    );
    caveat(&mut head, report);
    caption(&mut head, page);
    head.push_str(&contents.html());
    document(&title, &(head + &out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backtick_pairs_become_code() {
        assert_eq!(
            markup("run `trapline run` <now>"),
            "run <code>trapline run</code> &lt;now&gt;"
        );
        assert_eq!(markup("a `b` c `d"), "a <code>b</code> c `d");
        assert_eq!(markup("``"), "``");
        assert_eq!(markup("`<x>`"), "<code>&lt;x&gt;</code>");
        assert_eq!(markup("no ticks"), "no ticks");
    }

    #[test]
    fn cells_keep_breakable_words_whole() {
        assert_eq!(
            cell("pio-write=1.00 mmio-read=0.02"),
            "<span class=\"w\">pio-write=1.00</span> <span class=\"w\">mmio-read=0.02</span>"
        );
        // Words a browser would not break inside stay bare.
        assert_eq!(cell("ok, 1,234 cycles"), "ok, 1,234 cycles");
        assert_eq!(
            cell("needs `--peer qemu`"),
            "needs <code><span class=\"w\">--peer</span> qemu</code>"
        );
        assert_eq!(cell("a<b-c"), "<span class=\"w\">a&lt;b-c</span>");
        // A key may wrap after its VMM; a colon ending a word is no break.
        assert_eq!(
            cell("raw-kvm:pio-kernel-wildcard unsupported:"),
            "<span class=\"w\">raw-kvm:</span><wbr><span class=\"w\">pio-kernel-wildcard</span> \
             unsupported:"
        );
    }

    fn long_grid(rows: usize) -> Grid {
        let mut g = Grid::new(&[("name", Align::Left), ("cyc", Align::Right)]);
        for i in 0..rows {
            g.push(super::super::grid::Row::cells(vec![
                format!("s{i}"),
                i.to_string(),
            ]));
        }
        g
    }

    #[test]
    fn long_tables_fold() {
        let mut out = String::new();
        table(&mut out, &long_grid(FOLD_ROWS), "Short");
        assert!(!out.contains("<details"), "{out}");
        let mut out = String::new();
        table(&mut out, &long_grid(FOLD_ROWS + 1), "Long");
        assert!(
            out.starts_with(&format!(
                "<details class=\"table\"><summary><strong>Long</strong>: {} rows (name, cyc)</summary>",
                FOLD_ROWS + 1
            )),
            "{out}"
        );
        assert!(out.ends_with("</details>\n"));
    }
}
