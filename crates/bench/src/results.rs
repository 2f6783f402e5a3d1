//! Where a run keeps its full report, so nothing the terminal summary
//! leaves out is lost: `trapline-results/<UTC time>/report.json` and
//! `report.html` under the current directory (or `--results-dir DIR`),
//! with `trapline-results/latest` pointing at the newest. The folder is
//! made before anything is measured, so a bad path fails in a second, not
//! after minutes of runs.

use std::io;
use std::path::{Path, PathBuf};

/// The parent folder when `--results-dir` is not given.
pub const DEFAULT_PARENT: &str = "trapline-results";

/// The symlink to the newest run's folder, inside the parent.
pub const LATEST: &str = "latest";

/// The full report's files in a run's folder.
pub const JSON_FILE: &str = "report.json";
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
    /// A report file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// One run's folder, made before the run.
#[derive(Debug)]
pub struct RunFolder {
    parent: PathBuf,
    name: String,
    /// Whether this run made the parent (so an abandoned run removes it).
    made_parent: bool,
}

/// The folder name for a run started `secs` after the epoch:
/// `2026-11-26T08-15-02Z` (RFC 3339 in UTC, with `-` for `:`, which some
/// file systems and tools refuse).
pub fn folder_name(secs: i64) -> String {
    crate::time::rfc3339(secs).replace(':', "-")
}

impl RunFolder {
    /// Makes `parent` (if needed) and a fresh folder in it named for
    /// `secs` after the epoch; a second run in the same second gets `-2`.
    pub fn create(parent: &Path, secs: i64) -> Result<RunFolder, ResultsError> {
        let made_parent = !parent.exists();
        std::fs::create_dir_all(parent).map_err(|source| ResultsError::Create {
            path: parent.to_path_buf(),
            source,
        })?;
        let base = folder_name(secs);
        let mut last_error = None;
        for n in 1..=SAME_SECOND {
            let name = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            match std::fs::create_dir(parent.join(&name)) {
                Ok(()) => {
                    return Ok(RunFolder {
                        parent: parent.to_path_buf(),
                        name,
                        made_parent,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(source) => {
                    return Err(ResultsError::Create {
                        path: parent.join(name),
                        source,
                    })
                }
            }
        }
        Err(ResultsError::Create {
            path: parent.join(base),
            source: last_error.unwrap_or_else(|| io::Error::other("no free name")),
        })
    }

    /// The run's folder.
    pub fn dir(&self) -> PathBuf {
        self.parent.join(&self.name)
    }

    /// Writes the full report as JSON and HTML; returns their paths.
    pub fn write(&self, json: &str, html: &str) -> Result<[PathBuf; 2], ResultsError> {
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
        std::os::unix::fs::symlink(&self.name, &temporary)?;
        std::fs::rename(&temporary, &latest).inspect_err(|_| {
            let _ = std::fs::remove_file(&temporary);
        })
    }

    /// Removes the folder of a run that produced no report (and the parent
    /// when this run made it and nothing else is in it).
    pub fn abandon(self) {
        let _ = std::fs::remove_dir(self.dir());
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
        assert_eq!(a.dir(), parent.join("2026-11-22T01-01-01Z"));
        assert_eq!(b.dir(), parent.join("2026-11-22T01-01-01Z-2"));
        let [json, html] = a.write("{}\n", "<html></html>").unwrap();
        assert_eq!(std::fs::read_to_string(&json).unwrap(), "{}\n");
        assert_eq!(html, a.dir().join("report.html"));
        a.point_latest().unwrap();
        assert_eq!(
            std::fs::read_link(parent.join(LATEST)).unwrap(),
            PathBuf::from("2026-11-22T01-01-01Z")
        );
        b.point_latest().unwrap();
        assert_eq!(
            std::fs::read_to_string(parent.join(LATEST).join("..").join(&a.name).join(JSON_FILE))
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
        // A parent that was there stays.
        RunFolder::create(&parent, 0).unwrap();
        RunFolder::create(&parent, 1).unwrap().abandon();
        assert!(parent.join(folder_name(0)).exists());
        assert!(!parent.join(folder_name(1)).exists());
        let _ = std::fs::remove_dir_all(&top);
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
