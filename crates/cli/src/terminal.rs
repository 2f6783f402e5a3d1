//! How wide the summary on standard output may be.

use std::io::IsTerminal;

use trapline_report::summary::MAX_WIDTH;

/// Columns for the summary: the terminal's width when standard output is
/// one (its window size, or `COLUMNS` when the size is unknown), `COLUMNS`
/// when the output goes to a pipe or a file and it is set, and never more
/// than [`MAX_WIDTH`].
pub fn stdout_columns() -> usize {
    let tty = std::io::stdout().is_terminal();
    let window = if tty { window_columns() } else { None };
    columns(window, std::env::var("COLUMNS").ok().as_deref())
}

/// Columns for a view in the table format: the terminal's width when
/// standard output is one (its window size, else `COLUMNS`), `COLUMNS`
/// when output goes to a pipe or a file and it is set, else `None`: every
/// line whole, for `less -S`, files and scripts.
pub fn view_columns() -> Option<usize> {
    let tty = std::io::stdout().is_terminal();
    let window = if tty { window_columns() } else { None };
    view_width(window, std::env::var("COLUMNS").ok().as_deref())
}

/// The view width rule on its inputs: the window's width, else a
/// positive `COLUMNS`, else no limit.
fn view_width(window: Option<usize>, env: Option<&str>) -> Option<usize> {
    window.or_else(|| {
        env.and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
    })
}

/// The width rule on its inputs: the window's width, else `COLUMNS`, else
/// [`MAX_WIDTH`]; at most [`MAX_WIDTH`].
fn columns(window: Option<usize>, env: Option<&str>) -> usize {
    let from_env = env
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    window.or(from_env).unwrap_or(MAX_WIDTH).min(MAX_WIDTH)
}

/// Standard output's window width (TIOCGWINSZ), when it reports one.
fn window_columns() -> Option<usize> {
    // SAFETY: winsize is plain data, filled by the ioctl for fd 1; the
    // pointer is valid for the call.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one winsize to the pointer and nothing
    // else; a failure leaves it zeroed and returns -1.
    let r = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (r == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_wins_then_columns_then_100_and_never_more() {
        assert_eq!(columns(Some(80), Some("60")), 80);
        assert_eq!(columns(None, Some("60")), 60);
        assert_eq!(columns(None, None), 100);
        assert_eq!(columns(None, Some("wide")), 100);
        assert_eq!(columns(None, Some("0")), 100);
        assert_eq!(columns(Some(250), None), 100);
        assert_eq!(columns(None, Some("300")), 100);
    }

    #[test]
    fn a_view_takes_the_window_then_columns_else_its_full_width() {
        assert_eq!(view_width(Some(80), Some("60")), Some(80));
        assert_eq!(view_width(None, Some("300")), Some(300));
        assert_eq!(view_width(None, Some("0")), None);
        assert_eq!(view_width(None, None), None);
    }
}
