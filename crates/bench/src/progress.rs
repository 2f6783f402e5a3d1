//! A progress bar on stderr while the lab runs (only on a terminal).
//!
//! indicatif draws it: it knows the terminal's width, so a long step name
//! that would wrap is cut instead of leaving stale lines behind.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Draws `[=====     ] 7/20 what` on one stderr line.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for `total` steps; silent unless `on`.
    pub fn new(on: bool, total: usize) -> Self {
        let target = if on {
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
        Self { bar }
    }

    /// Start the next step (the counter shows the step being run).
    pub fn step(&mut self, what: &str) {
        self.bar.set_message(what.to_owned());
        self.bar.inc(1);
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
