//! The one table type: what a view shows, before a renderer lays it out as
//! aligned text, markdown, HTML (for people) or CSV (for machines). Cells
//! that hold numbers keep their [`Unit`], so people get grouped digits and
//! `–` while CSV gets raw numbers and empty fields, from the same grid.

use crate::fmt;
use crate::unit::Unit;

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// Who a grid is laid out for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Terminal, markdown, HTML: display titles, formatted numbers.
    Display,
    /// CSV: snake_case titles, raw numbers, empty when absent.
    Csv,
}

/// A column header.
#[derive(Clone, Debug)]
pub struct Column {
    /// Header text for people.
    pub title: String,
    /// Header text in CSV.
    pub csv_title: String,
    /// How cells line up.
    pub align: Align,
}

impl Column {
    /// The header for `mode`.
    pub fn title(&self, mode: Mode) -> &str {
        match mode {
            Mode::Display => &self.title,
            Mode::Csv => &self.csv_title,
        }
    }
}

/// One cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Text, the same everywhere.
    Text(String),
    /// A number, `–` (display) or empty (CSV) when absent or not finite.
    Num(Option<f64>, Unit),
}

impl Cell {
    /// A text cell.
    pub fn text(s: impl Into<String>) -> Self {
        Cell::Text(s.into())
    }

    /// The cell as `mode` shows it.
    pub fn show(&self, mode: Mode) -> String {
        match (self, mode) {
            (Cell::Text(s), _) => s.clone(),
            (Cell::Num(v, unit), Mode::Display) => match v.filter(|v| v.is_finite()) {
                None => "–".to_string(),
                Some(v) => fmt::cell(v, *unit),
            },
            (Cell::Num(v, _), Mode::Csv) => v.map(fmt::raw).unwrap_or_default(),
        }
    }
}

/// One row: leading cells, then optionally a free text spanning every
/// remaining column (e.g. why a scenario was not measured).
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// Cells from the first column on; may be fewer than the columns.
    pub cells: Vec<Cell>,
    /// Text spanning the columns after `cells`.
    pub span: Option<String>,
}

impl Row {
    /// A full row of text cells.
    pub fn cells(cells: Vec<String>) -> Self {
        Self {
            cells: cells.into_iter().map(Cell::Text).collect(),
            span: None,
        }
    }

    /// Leading text cells and a spanning text.
    pub fn spanned(cells: Vec<String>, span: String) -> Self {
        Self {
            span: Some(span),
            ..Self::cells(cells)
        }
    }

    /// The cells as `mode` shows them.
    pub fn texts(&self, mode: Mode) -> Vec<String> {
        self.cells.iter().map(|c| c.show(mode)).collect()
    }

    /// The row as exactly `n` cells: the span goes in the first free cell.
    pub fn padded(&self, n: usize, mode: Mode) -> Vec<String> {
        let mut out = self.texts(mode);
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
    /// Columns a narrow terminal may leave out, the first to go first
    /// (indices); the others are always shown (see `render::fit`).
    pub droppable: Vec<usize>,
}

impl Grid {
    /// A grid with these `(title, align)` columns, titled the same in CSV,
    /// and no rows.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        let cols: Vec<(&str, &str, Align)> = columns.iter().map(|&(t, a)| (t, t, a)).collect();
        Self::titled(&cols)
    }

    /// A grid with these `(display title, CSV title, align)` columns and no
    /// rows.
    pub fn titled(columns: &[(&str, &str, Align)]) -> Self {
        Self {
            columns: columns
                .iter()
                .map(|&(title, csv_title, align)| Column {
                    title: title.to_string(),
                    csv_title: csv_title.to_string(),
                    align,
                })
                .collect(),
            rows: Vec::new(),
            droppable: Vec::new(),
        }
    }

    /// Lets a narrow terminal leave out the columns titled `titles`, in
    /// that order (a title not in the grid is skipped).
    pub fn droppable(&mut self, titles: &[&str]) {
        for t in titles {
            if let Some(i) = self.columns.iter().position(|c| c.title == *t) {
                if !self.droppable.contains(&i) {
                    self.droppable.push(i);
                }
            }
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// Appends a row of cells, padded or cut to the column count.
    pub fn push_cells(&mut self, mut cells: Vec<Cell>) {
        cells.resize(self.columns.len(), Cell::text(""));
        self.rows.push(Row { cells, span: None });
    }
}

/// A titled list of lines shown after a table (derived values, notes).
#[derive(Clone, Debug, Default)]
pub struct Section {
    /// Heading.
    pub heading: String,
    /// One entry per line.
    pub items: Vec<String>,
    /// Folded away until opened where the format can (HTML `<details>`):
    /// lines a reader seldom needs, such as passing checks.
    pub fold: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_show_per_mode() {
        let mut g = Grid::titled(&[
            ("a", "a", Align::Left),
            ("b cyc", "b_cycles", Align::Right),
            ("r", "ratio", Align::Right),
        ]);
        g.push_cells(vec![
            Cell::text("x"),
            Cell::Num(Some(1234.0), Unit::Cycles),
            Cell::Num(None, Unit::Ratio),
        ]);
        g.push_cells(vec![Cell::text("short")]);
        assert_eq!(g.columns[1].title(Mode::Display), "b cyc");
        assert_eq!(g.columns[1].title(Mode::Csv), "b_cycles");
        assert_eq!(g.rows[0].texts(Mode::Display), ["x", "1,234", "–"]);
        assert_eq!(g.rows[0].texts(Mode::Csv), ["x", "1234", ""]);
        assert_eq!(g.rows[1].texts(Mode::Csv), ["short", "", ""]);
    }

    #[test]
    fn span_fills_the_first_free_cell() {
        let r = Row::spanned(vec!["k".into()], "why".into());
        assert_eq!(r.padded(3, Mode::Display), ["k", "why", ""]);
        assert_eq!(r.padded(1, Mode::Display), ["k — why"]);
    }
}
