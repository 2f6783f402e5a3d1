//! A grid laid out for a terminal of a given width: its last text column
//! and its spanning texts wrap at word boundaries; when that is not
//! enough, the columns the view marked droppable ([`Grid::droppable`]) go,
//! first to last; when even that is not enough, the rows become a list
//! (every cell kept, each row a wrapped paragraph). No line is wider than
//! the width; the caller says what was left out and how to see it.

use super::grid::{Align, Grid, Mode};
use crate::summary::layout::{hang, hard_wrap, width_of, words, wrap};

/// Spaces between two columns (as the full-width table has).
const GAP: usize = 2;

/// The narrowest the wrapping last column may become (or its longest
/// word, if longer).
const MIN_LAST: usize = 12;

/// Words up to this long are never split in the wrapping column.
const LONG_WORD: usize = 20;

/// A grid laid out for a width.
pub(crate) struct Fitted {
    /// The lines, none wider than the width.
    pub lines: Vec<String>,
    /// Titles of the columns left out.
    pub dropped: Vec<String>,
}

/// `g` in at most `width` columns.
pub(crate) fn grid(g: &Grid, width: usize) -> Fitted {
    let cells: Vec<Vec<String>> = g.rows.iter().map(|r| r.texts(Mode::Display)).collect();
    let mut shown: Vec<usize> = (0..g.columns.len()).collect();
    let mut drops = g.droppable.iter().filter(|&&i| i < g.columns.len());
    loop {
        if let Some(lines) = layout(g, &cells, &shown, width) {
            let dropped = (0..g.columns.len())
                .filter(|i| !shown.contains(i))
                .map(|i| g.columns[i].title.clone())
                .collect();
            return Fitted { lines, dropped };
        }
        match drops.next() {
            Some(&i) if shown.len() > 1 => shown.retain(|&s| s != i),
            _ => break,
        }
    }
    Fitted {
        lines: stacked(g, &cells, width),
        dropped: Vec::new(),
    }
}

/// Width of column `i`: its widest cell or title.
fn natural(g: &Grid, cells: &[Vec<String>], i: usize) -> usize {
    cells
        .iter()
        .filter_map(|c| c.get(i))
        .map(|c| width_of(c))
        .chain([width_of(&g.columns[i].title)])
        .max()
        .unwrap_or(0)
}

/// The `shown` columns as a table whose last column (text) wraps; `None`
/// when they do not fit `width`.
fn layout(g: &Grid, cells: &[Vec<String>], shown: &[usize], width: usize) -> Option<Vec<String>> {
    let (&last, fixed) = shown.split_last()?;
    let widths: Vec<usize> = fixed.iter().map(|&i| natural(g, cells, i)).collect();
    let indent: usize = widths.iter().map(|w| w + GAP).sum();
    let last_natural = natural(g, cells, last);
    let last_width = if g.columns[last].align == Align::Left {
        let longest_word = cells
            .iter()
            .filter_map(|c| c.get(last))
            .flat_map(|c| words(c).map(width_of))
            .max()
            .unwrap_or(0);
        let title = width_of(&g.columns[last].title);
        // A word longer than LONG_WORD may be split rather than push the
        // table into a list.
        let least = MIN_LAST
            .max(longest_word.min(LONG_WORD))
            .min(last_natural)
            .max(title);
        if indent + least > width {
            return None;
        }
        last_natural.min(width - indent).max(1)
    } else {
        if indent + last_natural > width {
            return None;
        }
        last_natural
    };
    // Spanning texts start after their row's cells; they must fit too.
    for (row, texts) in g.rows.iter().zip(cells) {
        if row.span.is_some() {
            let start = span_start(shown, &widths, texts.len());
            if start + MIN_LAST > width {
                return None;
            }
        }
    }
    let line = |texts: &[String], span: Option<&str>| -> Vec<String> {
        let mut head = String::new();
        for (&i, w) in fixed.iter().zip(&widths) {
            let Some(text) = texts.get(i) else { break };
            let pad = " ".repeat(w.saturating_sub(width_of(text)));
            match g.columns[i].align {
                Align::Right => head.push_str(&format!("{pad}{text}")),
                Align::Left => head.push_str(&format!("{text}{pad}")),
            }
            head.push_str(&" ".repeat(GAP));
        }
        if let Some(span) = span {
            let start = span_start(shown, &widths, texts.len());
            let head = format!("{head:start$}");
            let room = width - start;
            return hang(&head, start, wrap(span, room, "", ""));
        }
        let tail = texts.get(last).map_or("", String::as_str);
        let pieces = if g.columns[last].align == Align::Left {
            wrap(tail, last_width, "", "")
        } else {
            vec![format!("{tail:>last_width$}")]
        };
        hang(&head, indent, pieces)
    };
    let titles: Vec<String> = g.columns.iter().map(|c| c.title.clone()).collect();
    let mut out = line(&titles, None);
    let rule: Vec<String> = (0..g.columns.len())
        .map(|i| {
            let w = if i == last {
                last_width
            } else {
                natural(g, cells, i)
            };
            "-".repeat(w)
        })
        .collect();
    out.extend(line(&rule, None));
    for (row, texts) in g.rows.iter().zip(cells) {
        out.extend(line(texts, row.span.as_deref()));
    }
    Some(out)
}

/// Where a span starts: after the shown columns among the row's first
/// `cells` cells.
fn span_start(shown: &[usize], widths: &[usize], cells: usize) -> usize {
    shown
        .iter()
        .zip(widths)
        .take_while(|(&i, _)| i < cells)
        .map(|(_, w)| w + GAP)
        .sum()
}

/// The grid as a list: each row's first cell, then every other cell with
/// its column's title, wrapped with a hanging indent.
fn stacked(g: &Grid, cells: &[Vec<String>], width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (row, texts) in g.rows.iter().zip(cells) {
        let mut rest: Vec<String> = texts
            .iter()
            .zip(&g.columns)
            .skip(1)
            .filter(|(c, _)| !c.is_empty())
            .map(|(c, col)| format!("{} {c}", col.title))
            .collect();
        if let Some(span) = &row.span {
            rest.push(span.clone());
        }
        let first = texts.first().map_or("", String::as_str);
        let text = format!("{first}: {}", rest.join(", "));
        for l in wrap(&text, width, "", "    ") {
            out.extend(hard_wrap(&l, width));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::grid::Row;

    fn sample() -> Grid {
        let mut g = Grid::new(&[
            ("name", Align::Left),
            ("value", Align::Right),
            ("extra", Align::Right),
            ("note", Align::Left),
        ]);
        g.push(Row::cells(vec![
            "alpha".into(),
            "1".into(),
            "12345".into(),
            "a note long enough to wrap at a narrow width".into(),
        ]));
        g.push(Row::spanned(
            vec!["beta".into()],
            "not measured: a reason long enough to wrap too".into(),
        ));
        g
    }

    #[test]
    fn a_wide_terminal_gets_every_column_on_one_line() {
        let f = grid(&sample(), 200);
        assert!(f.dropped.is_empty());
        assert_eq!(f.lines.len(), 4, "{:#?}", f.lines);
        assert!(f.lines[2].ends_with("at a narrow width"), "{:#?}", f.lines);
    }

    #[test]
    fn the_last_column_and_spans_wrap_at_words() {
        let f = grid(&sample(), 40);
        assert!(f.dropped.is_empty());
        for l in &f.lines {
            assert!(width_of(l) <= 40, "{l:?}");
        }
        let text = f.lines.join(" ");
        assert!(text.contains("enough to wrap"), "{:#?}", f.lines);
        assert!(text.contains("beta   not measured:"), "{:#?}", f.lines);
    }

    #[test]
    fn droppable_columns_go_then_rows_become_a_list() {
        let mut g = sample();
        g.droppable(&["extra"]);
        let f = grid(&g, 30);
        assert_eq!(f.dropped, ["extra"]);
        assert!(f.lines.iter().all(|l| width_of(l) <= 30), "{:#?}", f.lines);
        assert!(!f.lines[0].contains("extra"));
        let f = grid(&g, 16);
        assert!(f.dropped.is_empty());
        assert!(f.lines.iter().all(|l| width_of(l) <= 16), "{:#?}", f.lines);
        assert!(f.lines.join(" ").contains("extra 12345"), "{:#?}", f.lines);
    }
}
