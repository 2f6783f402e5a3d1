//! A progress bar on stderr while the lab runs (only on a terminal).

use std::io::Write;

/// Draws `[=====     ] 7/20 what` on one stderr line.
pub struct Progress {
    on: bool,
    done: usize,
    total: usize,
}

impl Progress {
    /// A bar for `total` steps; silent unless `on`.
    pub fn new(on: bool, total: usize) -> Self {
        Self {
            on,
            done: 0,
            total: total.max(1),
        }
    }

    /// Start the next step.
    pub fn step(&mut self, what: &str) {
        if self.on {
            let width = 24;
            let filled = self.done * width / self.total;
            let mut e = std::io::stderr().lock();
            let _ = write!(
                e,
                "\r\x1b[2K[{}{}] {}/{} {what}",
                "=".repeat(filled),
                " ".repeat(width - filled),
                self.done + 1,
                self.total
            );
            let _ = e.flush();
        }
        self.done += 1;
    }

    /// Clear the line.
    pub fn finish(&mut self) {
        if self.on {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
