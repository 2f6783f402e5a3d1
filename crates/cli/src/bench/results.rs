//! Where a run keeps its full report, so nothing the terminal summary
//! leaves out is lost: `trapline-results/<UTC time>/report.json` and
//! `report.html` under the current directory (or `--results-dir DIR`),
//! with `trapline-results/latest` pointing at the newest. Whether the
//! folder can be made is tried before anything is measured, so a bad path
//! fails in a second, not after minutes of runs; it is made for good only
//! when the report is written, so a run killed outright (SIGKILL, a second
//! Ctrl-C) leaves no empty folder behind.

use std::io;
use std::path::{Path, PathBuf};

/// The parent folder when `--results-dir` is not given.
pub const DEFAULT_PARENT: &str = "trapline-results";

/// The symlink to the newest run's folder, inside the parent.
pub const LATEST: &str = "latest";

/// The full report's files in a run's folder: its JSON, where `trapline
/// report` reads it ...
pub use trapline_report::saved::JSON_FILE;
/// The HTML report's file name.
pub const HTML_FILE: &str = "report.html";

/// How many folders named for the same second one parent may hold
/// (`<time>`, `<time>-2`, …) before a run gives up.
const SAME_SECOND: u32 = 100;

/// A results folder that cannot be made or written.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The parent or the run's folder could not be created.
    #[error(
        "cannot create the results folder {}: {source} (choose another parent with \
         --results-dir DIR, or write none with --no-results)",
        path.display()
    )]
    Create {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// `latest` is there but is not the symlink trapline keeps (a file or
    /// a folder someone put there): refused before measuring, rather than
    /// measuring for minutes and then leaving `latest` pointing at an
    /// older run (or at nothing) with only a warning.
    #[error(
        "{} is not a symlink, so it cannot be pointed at this run: remove or rename it \
         (trapline keeps `latest` as a link to the newest run), or choose another parent \
         with --results-dir DIR",
        path.display()
    )]
    LatestNotALink {
        /// The `latest` path.
        path: PathBuf,
    },
    /// A report file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// One run's folder: tried before the run, made when its report is
/// written.
#[derive(Debug)]
pub struct RunFolder {
    parent: PathBuf,
    /// The name it is made under if free (`<time>`; else `<time>-2`, …).
    base: String,
    /// The name it was made under, once made.
    name: std::cell::OnceCell<String>,
    /// Whether this run made the parent (so an abandoned run removes it).
    made_parent: bool,
}

/// The folder name for a run started `secs` after the epoch:
/// `2026-11-26T08-15-02Z` (RFC 3339 in UTC, with `-` for `:`, which some
/// file systems and tools refuse).
pub fn folder_name(secs: i64) -> String {
    trapline_lab::time::rfc3339(secs).replace(':', "-")
}

impl RunFolder {
    /// Checks that a fresh folder named for `secs` after the epoch can be
    /// made in `parent` (making `parent` if needed, and the folder, which
    /// is removed again), and that `parent/latest` can be pointed at it.
    /// Nothing is left in `parent` until [`write`](Self::write).
    pub fn create(parent: &Path, secs: i64) -> Result<RunFolder, ResultsError> {
        let latest = parent.join(LATEST);
        if std::fs::symlink_metadata(&latest).is_ok_and(|m| !m.file_type().is_symlink()) {
            return Err(ResultsError::LatestNotALink { path: latest });
        }
        let made_parent = !parent.exists();
        let folder = RunFolder {
            parent: parent.to_path_buf(),
            base: folder_name(secs),
            name: std::cell::OnceCell::new(),
            made_parent,
        };
        let tried = folder.make()?;
        let _ = std::fs::remove_dir(parent.join(tried));
        if made_parent {
            let _ = std::fs::remove_dir(parent);
        }
        Ok(folder)
    }

    /// Makes the parent (if needed) and a fresh folder in it: the base
    /// name, or `-2`, `-3`, … when another run of the same second has it.
    /// Returns the name it got.
    fn make(&self) -> Result<String, ResultsError> {
        std::fs::create_dir_all(&self.parent).map_err(|source| ResultsError::Create {
            path: self.parent.clone(),
            source,
        })?;
        let mut last_error = None;
        for n in 1..=SAME_SECOND {
            let name = if n == 1 {
                self.base.clone()
            } else {
                format!("{}-{n}", self.base)
            };
            match std::fs::create_dir(self.parent.join(&name)) {
                Ok(()) => return Ok(name),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(source) => {
                    return Err(ResultsError::Create {
                        path: self.parent.join(name),
                        source,
                    })
                }
            }
        }
        Err(ResultsError::Create {
            path: self.parent.join(&self.base),
            source: last_error.unwrap_or_else(|| io::Error::other("no free name")),
        })
    }

    /// The run's folder (where it will be, until it is made).
    pub fn dir(&self) -> PathBuf {
        self.parent.join(self.name.get().unwrap_or(&self.base))
    }

    /// Makes the run's folder (once) and writes the full report in it as
    /// JSON and HTML; returns their paths.
    pub fn write(&self, json: &str, html: &str) -> Result<[PathBuf; 2], ResultsError> {
        if self.name.get().is_none() {
            let name = self.make()?;
            let _ = self.name.set(name);
        }
        let paths = [self.dir().join(JSON_FILE), self.dir().join(HTML_FILE)];
        for (path, text) in paths.iter().zip([json, html]) {
            std::fs::write(path, text).map_err(|source| ResultsError::Write {
                path: path.clone(),
                source,
            })?;
        }
        Ok(paths)
    }

    /// Points `<parent>/latest` at this run's folder (a relative symlink,
    /// so the parent can move), replacing the old link in one rename.
    pub fn point_latest(&self) -> io::Result<()> {
        let Some(name) = self.name.get() else {
            return Err(io::Error::other("the run's folder was never made"));
        };
        let latest = self.parent.join(LATEST);
        if latest.exists() && !latest.is_symlink() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a symlink", latest.display()),
            ));
        }
        let temporary = self
            .parent
            .join(format!(".{LATEST}.{}", std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        std::os::unix::fs::symlink(name, &temporary)?;
        std::fs::rename(&temporary, &latest).inspect_err(|_| {
            let _ = std::fs::remove_file(&temporary);
        })
    }

    /// Removes the folder of a run that produced no report, if it was made
    /// (and the parent when this run made it and nothing else is in it).
    pub fn abandon(self) {
        if self.name.get().is_some() {
            let _ = std::fs::remove_dir(self.dir());
        }
        if self.made_parent {
            let _ = std::fs::remove_dir(&self.parent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "trapline-results-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_run_folder_is_named_for_its_utc_second() {
        assert_eq!(folder_name(1_795_309_261), "2026-11-22T01-01-01Z");
    }

    #[test]
    fn runs_get_fresh_folders_and_latest_follows_them() {
        let parent = scratch("fresh").join("results");
        let a = RunFolder::create(&parent, 1_795_309_261).unwrap();
        let b = RunFolder::create(&parent, 1_795_309_261).unwrap();
        // Nothing is made before the report is written.
        assert!(!parent.exists());
        let [json, html] = a.write("{}\n", "<html></html>").unwrap();
        b.write("{}\n", "<html></html>").unwrap();
        assert_eq!(a.dir(), parent.join("2026-11-22T01-01-01Z"));
        assert_eq!(b.dir(), parent.join("2026-11-22T01-01-01Z-2"));
        assert_eq!(std::fs::read_to_string(&json).unwrap(), "{}\n");
        assert_eq!(html, a.dir().join("report.html"));
        a.point_latest().unwrap();
        assert_eq!(
            std::fs::read_link(parent.join(LATEST)).unwrap(),
            PathBuf::from("2026-11-22T01-01-01Z")
        );
        b.point_latest().unwrap();
        assert_eq!(
            std::fs::read_to_string(
                parent
                    .join(LATEST)
                    .join("..")
                    .join(a.name.get().unwrap())
                    .join(JSON_FILE)
            )
            .unwrap(),
            "{}\n"
        );
        assert_eq!(
            std::fs::read_link(parent.join(LATEST)).unwrap(),
            PathBuf::from("2026-11-22T01-01-01Z-2")
        );
        let _ = std::fs::remove_dir_all(parent.parent().unwrap());
    }

    #[test]
    fn an_abandoned_run_leaves_nothing_it_made() {
        let top = scratch("abandon");
        let parent = top.join("a").join("b");
        RunFolder::create(&parent, 0).unwrap().abandon();
        assert!(!parent.exists());
        // A parent that was there stays, and so does a written run.
        RunFolder::create(&parent, 0)
            .unwrap()
            .write("{}", "")
            .unwrap();
        RunFolder::create(&parent, 1).unwrap().abandon();
        assert!(parent.join(folder_name(0)).exists());
        assert!(!parent.join(folder_name(1)).exists());
        // A run never written (killed outright) leaves nothing either.
        let never = RunFolder::create(&parent, 2).unwrap();
        std::mem::forget(never);
        assert!(!parent.join(folder_name(2)).exists());
        let _ = std::fs::remove_dir_all(&top);
    }

    #[test]
    fn a_latest_that_is_not_a_link_is_refused_before_the_run() {
        let parent = scratch("latest-file");
        std::fs::create_dir_all(&parent).unwrap();
        std::fs::write(parent.join(LATEST), "someone's notes").unwrap();
        let text = RunFolder::create(&parent, 0).unwrap_err().to_string();
        assert!(
            text.contains("latest is not a symlink") && text.contains("--results-dir"),
            "{text}"
        );
        // Refused before anything was made, and the file is untouched.
        assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 1);
        assert_eq!(
            std::fs::read_to_string(parent.join(LATEST)).unwrap(),
            "someone's notes"
        );
        // A folder named latest too; a symlink (even a dangling one) is fine.
        std::fs::remove_file(parent.join(LATEST)).unwrap();
        std::fs::create_dir(parent.join(LATEST)).unwrap();
        assert!(RunFolder::create(&parent, 0).is_err());
        std::fs::remove_dir(parent.join(LATEST)).unwrap();
        std::os::unix::fs::symlink("gone", parent.join(LATEST)).unwrap();
        let f = RunFolder::create(&parent, 0).unwrap();
        f.write("{}", "").unwrap();
        f.point_latest().unwrap();
        assert_eq!(
            std::fs::read_link(parent.join(LATEST)).unwrap(),
            PathBuf::from(folder_name(0))
        );
        let _ = std::fs::remove_dir_all(&parent);
    }

    #[test]
    fn a_parent_that_cannot_be_made_says_which_and_what_to_do() {
        let file = scratch("file");
        std::fs::write(&file, "not a folder").unwrap();
        let e = RunFolder::create(&file.join("results"), 0).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&file.display().to_string()), "{text}");
        assert!(
            text.contains("--results-dir") && text.contains("--no-results"),
            "{text}"
        );
        let _ = std::fs::remove_file(&file);
    }
}
