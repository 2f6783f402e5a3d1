//! CSV per RFC 4180: a header row, CRLF line ends, fields holding a comma,
//! quote or line break are quoted with quotes doubled. A column whose
//! numbers all share one unit says it in its header (`median_cycles`,
//! `rtt_us`), unless the header names a unit already.

use super::grid::{Cell, Grid, Mode};
use crate::unit::Unit;

/// Header words that already name a unit (`ns_per_iter`, `iops`, `ratio`).
const UNIT_WORDS: &[&str] = &[
    "cycles", "cyc", "ratio", "x", "s", "ms", "us", "ns", "iops", "per_s", "mib", "kib", "bytes",
    "seconds", "percent", "pct", "share", "cpu_ms", "unit",
];

/// The one unit of column `i`'s numbers, if they have one.
fn column_unit(g: &Grid, i: usize) -> Option<Unit> {
    let mut unit = None;
    for row in &g.rows {
        if let Some(Cell::Num(_, u)) = row.cells.get(i) {
            match unit {
                None => unit = Some(*u),
                Some(seen) if seen != *u => return None,
                Some(_) => {}
            }
        }
    }
    unit
}

/// Column `i`'s CSV header, with its unit when it has one and does not
/// say it yet.
fn header(g: &Grid, i: usize) -> String {
    let title = g.columns[i].title(Mode::Csv);
    let named = title
        .split('_')
        .any(|w| UNIT_WORDS.contains(&w.to_ascii_lowercase().as_str()))
        || UNIT_WORDS
            .iter()
            .any(|w| w.contains('_') && title.ends_with(w));
    match column_unit(g, i).and_then(Unit::csv_suffix) {
        Some(suffix) if !named => format!("{title}_{suffix}"),
        _ => title.to_string(),
    }
}

/// Quotes one field if it needs it.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The grid as CSV; a spanning text fills the first free cell.
pub fn grid(g: &Grid) -> String {
    let n = g.columns.len();
    let mut out = String::new();
    let header: Vec<String> = (0..n).map(|i| field(&header(g, i))).collect();
    out.push_str(&header.join(","));
    out.push_str("\r\n");
    for row in &g.rows {
        let cells: Vec<String> = row.padded(n, Mode::Csv).iter().map(|c| field(c)).collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}
