//! Text that fits a width: word wrapping with a hanging indent, and tables
//! that drop their least useful columns (then stack their cells) rather
//! than grow wider than the terminal. Widths count characters: the
//! renderers write no double-width ones.

use crate::render::grid::Align;

/// Spaces between two table columns.
const GAP: usize = 2;

/// The narrowest the last (wrapping) column of a table may become (or its
/// longest word, if longer).
const MIN_LAST: usize = 10;

/// A space that [`wrap`] does not break at (`1 pio-write` stays on one
/// line); [`unbreak`] turns it back into a plain space for output.
pub(crate) const NO_BREAK: char = '\u{a0}';

/// `line` with every [`NO_BREAK`] a plain space.
pub(crate) fn unbreak(line: &str) -> String {
    line.replace(NO_BREAK, " ")
}

/// Columns `s` takes.
pub(crate) fn width_of(s: &str) -> usize {
    s.chars().count()
}

/// Units a number is written with: [`wrap`] keeps `28 %` or `3.4 us`
/// on one line, as a reader expects.
const UNITS: [&str; 17] = [
    "%", "cycles", "cyc", "ns", "us", "µs", "ms", "s", "B", "KiB", "MiB", "GiB", "kHz", "MHz",
    "GHz", "CPU-ms", "MADs",
];

/// Whether `word` (its closing punctuation aside) is one of [`UNITS`].
fn is_unit(word: &str) -> bool {
    let bare = word.trim_end_matches([',', ';', ':', '.', ')', ']']);
    UNITS.contains(&bare)
}

/// Whether `word` ends a number (`28`, `1,020`, `(3.5`).
fn ends_a_number(word: &str) -> bool {
    word.chars().last().is_some_and(|c| c.is_ascii_digit())
}

/// The words of `text`: split at plain spaces, tabs and newlines, never
/// at [`NO_BREAK`], and never between a number and its unit (`28 %` is
/// one word, its space kept).
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        let space = matches!(c, ' ' | '\t' | '\n');
        match (space, start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                let word = &text[s..i];
                match spans.last_mut() {
                    Some(last) if is_unit(word) && ends_a_number(&text[last.0..last.1]) => {
                        last.1 = i;
                    }
                    _ => spans.push((s, i)),
                }
                start = None;
            }
            _ => {}
        }
    }
    spans.into_iter().map(move |(s, e)| &text[s..e])
}

/// `pieces` as lines: the first after `head`, the rest under it indented by
/// `indent` (a table row whose last cell wrapped), trailing blanks trimmed.
pub(crate) fn hang(head: &str, indent: usize, pieces: Vec<String>) -> Vec<String> {
    pieces
        .into_iter()
        .enumerate()
        .map(|(n, piece)| {
            let lead = if n == 0 {
                head.to_string()
            } else {
                " ".repeat(indent)
            };
            format!("{lead}{piece}").trim_end().to_string()
        })
        .collect()
}

/// `text` wrapped to `width` columns, the first line starting with
/// `first`, the others with `rest` (a hanging indent). A word longer than
/// a line is split. Always at least one line; no line ends in a space.
pub(crate) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut has_word = false;
    for word in words(text) {
        let mut word = word;
        loop {
            let used = width_of(&line) + usize::from(has_word);
            let room = width.saturating_sub(used);
            if width_of(word) <= room {
                if has_word {
                    line.push(' ');
                }
                line.push_str(word);
                has_word = true;
                break;
            }
            if has_word {
                lines.push(std::mem::replace(&mut line, rest.to_string()));
                has_word = false;
                continue;
            }
            // Too long for a whole line: split it (at least one character
            // per line, so a prefix as wide as the line cannot stall).
            let at = word
                .char_indices()
                .nth(room.max(1))
                .map_or(word.len(), |(i, _)| i);
            line.push_str(&word[..at]);
            word = &word[at..];
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            if word.is_empty() {
                break;
            }
        }
    }
    if has_word || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// `line`, a row of space-aligned columns, with its gaps (two spaces or
/// more) narrowed, down to two spaces, so that it fits `width`: the first
/// gap by the whole excess when it is wide enough, else each by the same
/// count; `None` if it cannot. Rows of one table (equally wide) lose the
/// same spaces at the same gaps, so their columns stay aligned.
fn narrow_gaps(line: &str, width: usize) -> Option<String> {
    let excess = width_of(line).checked_sub(width)?;
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    let mut cells: Vec<&str> = Vec::new();
    let mut gaps: Vec<usize> = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find("  ") {
        cells.push(&rest[..at]);
        let after = rest[at..].trim_start_matches(' ');
        gaps.push(rest.len() - at - after.len());
        rest = after;
    }
    cells.push(rest);
    if gaps.is_empty() {
        return None;
    }
    // The first gap (after a left-aligned label, wide in every row) takes
    // the whole cut when it can, else every gap an equal share.
    let cuts: Vec<usize> = if gaps[0] >= excess + 2 {
        std::iter::once(excess)
            .chain(std::iter::repeat(0))
            .take(gaps.len())
            .collect()
    } else {
        let cut = excess.div_ceil(gaps.len());
        if gaps.iter().any(|&g| g < cut + 2) {
            return None;
        }
        vec![cut; gaps.len()]
    };
    let mut out = indent.to_string();
    for (i, cell) in cells.iter().enumerate() {
        out.push_str(cell);
        if let (Some(g), Some(c)) = (gaps.get(i), cuts.get(i)) {
            out.push_str(&" ".repeat(g - c));
        }
    }
    Some(out)
}

/// `text` with every line wider than `width` made to fit: a row of
/// space-aligned columns by narrowing its gaps, other lines wrapped at
/// words (a number kept with its unit) with continuation lines indented
/// by two spaces; lines that fit are kept as they are. `None`: `text`
/// unchanged (a pipe or a file keeps every line whole).
pub fn fit_text(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return text.to_string();
    };
    let mut out = String::new();
    for line in text.lines() {
        if width_of(line) <= width {
            out.push_str(line);
            out.push('\n');
        } else if let Some(row) = narrow_gaps(line, width) {
            out.push_str(&row);
            out.push('\n');
        } else {
            for piece in wrap(line, width, "", "  ") {
                out.push_str(&unbreak(&piece));
                out.push('\n');
            }
        }
    }
    out
}

/// `line` cut into pieces of at most `width` columns (the last resort that
/// keeps every line within the width, whatever it holds).
pub(crate) fn hard_wrap(line: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= width || width == 0 {
        return vec![line.to_string()];
    }
    chars
        .chunks(width)
        .map(|c| c.iter().collect::<String>().trim_end().to_string())
        .collect()
}

/// When a column gives way to a narrow terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Always shown.
    Always,
    /// Dropped when the table does not fit, lower ranks first.
    Drop(u8),
}

/// One column of a [`Table`].
#[derive(Clone, Debug)]
pub(crate) struct Column {
    pub title: &'static str,
    pub align: Align,
    pub keep: Keep,
}

impl Column {
    pub fn new(title: &'static str, align: Align, keep: Keep) -> Self {
        Self { title, align, keep }
    }
}

/// A line of a [`Table`]: cells, or a heading across the whole width.
#[derive(Clone, Debug)]
pub(crate) enum Line {
    Cells(Vec<String>),
    Heading(String),
}

/// A table for the terminal whose last column wraps.
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    pub columns: Vec<Column>,
    pub lines: Vec<Line>,
}

impl Table {
    /// Lines of at most `width` columns, dropping columns (lowest rank
    /// first) until the table fits; `None` when even the columns kept
    /// always do not.
    pub fn render(&self, width: usize) -> Option<Vec<String>> {
        let mut shown: Vec<usize> = (0..self.columns.len()).collect();
        loop {
            if let Some(lines) = self.layout(&shown, width) {
                return Some(lines);
            }
            let next = shown
                .iter()
                .filter_map(|&i| match self.columns[i].keep {
                    Keep::Drop(rank) => Some((rank, i)),
                    Keep::Always => None,
                })
                .min()?;
            shown.retain(|&i| i != next.1);
        }
    }

    /// The table as a list: each row's first cell, then the others with
    /// their titles, wrapped (for terminals too narrow for any table).
    pub fn stacked(&self, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        for line in &self.lines {
            match line {
                Line::Heading(h) => out.extend(wrap(h, width, "", "  ")),
                Line::Cells(cells) => {
                    let rest: Vec<String> = cells
                        .iter()
                        .zip(&self.columns)
                        .skip(1)
                        .filter(|(c, _)| !c.is_empty())
                        .map(|(c, col)| format!("{} {c}", col.title))
                        .collect();
                    let first = cells.first().map_or("", String::as_str);
                    let text = if first.is_empty() {
                        rest.join(", ")
                    } else {
                        format!("{first}: {}", rest.join(", "))
                    };
                    out.extend(wrap(&text, width, "", "    "));
                }
            }
        }
        out
    }

    fn cell(cells: &[String], i: usize) -> &str {
        cells.get(i).map_or("", String::as_str)
    }

    /// The table with only the `shown` columns, the last one wrapped to
    /// what is left of `width`; `None` if that is too little.
    fn layout(&self, shown: &[usize], width: usize) -> Option<Vec<String>> {
        let (&last, fixed) = shown.split_last()?;
        let natural = |i: usize| {
            self.lines
                .iter()
                .filter_map(|l| match l {
                    Line::Cells(c) => Some(width_of(Self::cell(c, i))),
                    Line::Heading(_) => None,
                })
                .chain([width_of(self.columns[i].title)])
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = fixed.iter().map(|&i| natural(i)).collect();
        let indent: usize = widths.iter().map(|w| w + GAP).sum();
        let longest_word = self
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Cells(c) => words(Self::cell(c, last)).map(width_of).max(),
                Line::Heading(_) => None,
            })
            .max()
            .unwrap_or(0);
        let last_min = MIN_LAST
            .max(width_of(self.columns[last].title))
            .max(longest_word)
            .min(natural(last));
        if indent + last_min > width {
            return None;
        }
        let last_width = natural(last).min(width - indent).max(1);
        let row = |cells: &dyn Fn(usize) -> String| -> Vec<String> {
            let mut head = String::new();
            for (&i, w) in fixed.iter().zip(&widths) {
                let text = cells(i);
                let pad = " ".repeat(w.saturating_sub(width_of(&text)));
                match self.columns[i].align {
                    Align::Right => head.push_str(&format!("{pad}{text}")),
                    Align::Left => head.push_str(&format!("{text}{pad}")),
                }
                head.push_str(&" ".repeat(GAP));
            }
            hang(&head, indent, wrap(&cells(last), last_width, "", ""))
        };
        let mut out = row(&|i| self.columns[i].title.to_string());
        for line in &self.lines {
            match line {
                Line::Heading(h) => out.extend(wrap(h, width, "", "  ")),
                Line::Cells(c) => out.extend(row(&|i| Self::cell(c, i).to_string())),
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_words_whole_and_indents_the_rest() {
        let lines = wrap("one two three four five", 11, "> ", "  ");
        assert_eq!(lines, ["> one two", "  three", "  four five"]);
        assert_eq!(wrap("", 10, "x: ", ""), ["x:"]);
    }

    #[test]
    fn wrap_splits_a_word_longer_than_the_line() {
        let lines = wrap("abcdefghij", 4, "", "");
        assert_eq!(lines, ["abcd", "efgh", "ij"]);
        for l in wrap("a /very/long/path/that/does/not/fit ok", 12, "- ", "  ") {
            assert!(width_of(&l) <= 12, "{l}");
        }
    }

    #[test]
    fn wrap_never_breaks_at_a_no_break_space() {
        let text = format!("1{NO_BREAK}pio-read + 1{NO_BREAK}pio-write");
        let lines: Vec<String> = wrap(&text, 12, "", "").iter().map(|l| unbreak(l)).collect();
        assert_eq!(lines, ["1 pio-read +", "1 pio-write"]);
    }

    #[test]
    fn wrap_never_splits_a_number_from_its_unit() {
        let text = "1 of 3 repeats far from the median of 18,296 (8,458; min–max spans 28 % of it)";
        for width in 20..text.len() {
            let lines = wrap(text, width, "  ", "    ");
            for l in &lines {
                assert!(!l.ends_with("28"), "{width}: {lines:?}");
                assert!(!l.trim_start().starts_with('%'), "{width}: {lines:?}");
            }
        }
        assert_eq!(
            wrap("took 3.5 ms, then 12 cycles.", 15, "", ""),
            ["took 3.5 ms,", "then 12 cycles."]
        );
        // Not a unit after a number, or a unit after a word: free to break.
        assert_eq!(
            words("2 repeats of s").collect::<Vec<_>>(),
            ["2", "repeats", "of", "s"]
        );
    }

    #[test]
    fn fit_text_wraps_only_the_lines_that_do_not_fit() {
        let text = "short\na line that is much too long for ten\n";
        assert_eq!(fit_text(text, None), text);
        let fitted = fit_text(text, Some(12));
        assert!(
            fitted.starts_with("short\na line that\n  is much"),
            "{fitted}"
        );
        assert!(fitted.lines().all(|l| width_of(l) <= 12), "{fitted}");
        // Table rows lose the same spaces per gap and stay aligned.
        let table = "path        a      b\nexit      1.0    2.0\n";
        let fitted = fit_text(table, Some(18));
        assert_eq!(fitted, "path      a      b\nexit    1.0    2.0\n");
    }

    #[test]
    fn hard_wrap_cuts_at_the_width() {
        assert_eq!(hard_wrap("abcdef", 4), ["abcd", "ef"]);
        assert_eq!(hard_wrap("abc", 4), ["abc"]);
    }

    fn table() -> Table {
        Table {
            columns: vec![
                Column::new("name", Align::Left, Keep::Always),
                Column::new("value", Align::Right, Keep::Always),
                Column::new("extra", Align::Right, Keep::Drop(1)),
                Column::new("note", Align::Left, Keep::Always),
            ],
            lines: vec![
                Line::Heading("group".into()),
                Line::Cells(vec![
                    "alpha".into(),
                    "1".into(),
                    "xx".into(),
                    "a note long enough to wrap".into(),
                ]),
            ],
        }
    }

    #[test]
    fn a_table_wraps_its_last_column_and_drops_columns_to_fit() {
        let wide = table().render(80).unwrap();
        assert_eq!(wide[0], "name   value  extra  note");
        assert_eq!(wide[2], "alpha      1     xx  a note long enough to wrap");
        let narrow = table().render(30).unwrap();
        assert!(narrow.iter().all(|l| width_of(l) <= 30), "{narrow:?}");
        assert!(!narrow[0].contains("extra"), "{narrow:?}");
        assert_eq!(narrow[2], "alpha      1  a note long");
        assert_eq!(narrow[3], "              enough to wrap");
        assert!(table().render(20).is_none());
        let stacked = table().stacked(20);
        assert_eq!(stacked[1], "alpha: value 1,");
        assert!(stacked.iter().all(|l| width_of(l) <= 20), "{stacked:?}");
    }
}
