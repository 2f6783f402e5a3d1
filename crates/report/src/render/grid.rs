//! A format-neutral table: what a view shows, before a renderer lays it out
//! as aligned text, markdown, CSV or HTML.

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A column header.
#[derive(Clone, Debug)]
pub struct Column {
    /// Header text.
    pub title: String,
    /// How cells line up.
    pub align: Align,
}

/// One row: leading cells, then optionally a free text spanning every
/// remaining column (e.g. why a scenario was not measured).
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// Cells from the first column on; may be fewer than the columns.
    pub cells: Vec<String>,
    /// Text spanning the columns after `cells`.
    pub span: Option<String>,
}

impl Row {
    /// A full row.
    pub fn cells(cells: Vec<String>) -> Self {
        Self { cells, span: None }
    }

    /// Leading cells and a spanning text.
    pub fn spanned(cells: Vec<String>, span: String) -> Self {
        Self {
            cells,
            span: Some(span),
        }
    }

    /// The row as exactly `n` cells: the span goes in the first free cell.
    pub fn padded(&self, n: usize) -> Vec<String> {
        let mut out = self.cells.clone();
        out.truncate(n);
        if let Some(span) = &self.span {
            if out.len() < n {
                out.push(span.clone());
            } else if let Some(last) = out.last_mut() {
                last.push_str(" — ");
                last.push_str(span);
            }
        }
        out.resize(n, String::new());
        out
    }
}

/// Columns and rows.
#[derive(Clone, Debug, Default)]
pub struct Grid {
    /// Headers.
    pub columns: Vec<Column>,
    /// Body.
    pub rows: Vec<Row>,
}

impl Grid {
    /// A grid with these `(title, align)` columns and no rows.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            columns: columns
                .iter()
                .map(|(t, a)| Column {
                    title: (*t).to_string(),
                    align: *a,
                })
                .collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }
}

/// A titled list of lines shown after a table (derived values, notes).
#[derive(Clone, Debug, Default)]
pub struct Section {
    /// Heading.
    pub heading: String,
    /// One entry per line.
    pub items: Vec<String>,
}
