//! Progress on stderr while the lab runs: a bar on a terminal, one line
//! per step elsewhere (a log, or a harness watching how far a run got).
//!
//! indicatif draws the bar: it knows the terminal's width, so a long step
//! name that would wrap is cut instead of leaving stale lines behind.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Draws `[=====     ] 7/20 what` on one stderr line, or prints
/// `trapline bench: step 7/20: what` lines.
pub struct Progress {
    bar: ProgressBar,
    /// One line per step (stderr is no terminal).
    lines: bool,
}

impl Progress {
    /// Progress over `total` steps; silent unless `on`.
    pub fn new(on: bool, total: usize) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let target = if on && terminal {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total.max(1) as u64), target);
        // The template is a constant known to parse; fall back to the
        // default style rather than panic if a future indicatif disagrees.
        if let Ok(style) = ProgressStyle::with_template("[{bar:24}] {pos}/{len} {wide_msg}") {
            bar.set_style(style.progress_chars("= "));
        }
        Self {
            bar,
            lines: on && !terminal,
        }
    }

    /// Start the next step (the counter shows the step being run).
    pub fn step(&mut self, what: &str) {
        self.bar.set_message(what.to_owned());
        self.bar.inc(1);
        if self.lines {
            eprintln!(
                "trapline bench: step {}/{}: {what}",
                self.bar.position(),
                self.bar.length().unwrap_or(0)
            );
        }
    }

    /// Clear the line.
    pub fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::Progress;

    #[test]
    fn a_hidden_bar_counts_steps_and_never_panics() {
        let mut p = Progress::new(false, 0);
        for i in 0..5 {
            p.step(&format!(
                "step {i} with a name longer than any terminal is wide {}",
                "x".repeat(400)
            ));
        }
        assert_eq!(p.bar.position(), 5);
        p.finish();
        assert!(p.bar.is_finished());
    }
}
