//! CSV per RFC 4180: a header row, CRLF line ends, fields holding a comma,
//! quote or line break are quoted with quotes doubled.

use super::grid::{Grid, Mode};

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
    let header: Vec<String> = g
        .columns
        .iter()
        .map(|c| field(c.title(Mode::Csv)))
        .collect();
    out.push_str(&header.join(","));
    out.push_str("\r\n");
    for row in &g.rows {
        let cells: Vec<String> = row.padded(n, Mode::Csv).iter().map(|c| field(c)).collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}
