//! Why the lab as a whole could not run (a scenario that fails is not an
//! error: it is a row of the report with status `failed`).

use std::path::PathBuf;

/// An error that stops `run_lab` before it has a report.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// `--only` selected nothing.
    #[error("--only {pattern:?} matches no scenario; `trapline bench --list` shows them")]
    NothingSelected {
        /// The `--only` value as given.
        pattern: String,
    },
    /// The peer's scratch folder could not be created.
    #[error("{}: {source}", path.display())]
    PeerDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl LabError {
    /// True when the command line asked for something impossible (exit
    /// status 2), false when the host let the lab down.
    pub fn is_usage(&self) -> bool {
        matches!(self, LabError::NothingSelected { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::LabError;

    #[test]
    fn messages_and_kinds() {
        let e = LabError::NothingSelected {
            pattern: "nope*".into(),
        };
        assert_eq!(
            e.to_string(),
            "--only \"nope*\" matches no scenario; `trapline bench --list` shows them"
        );
        assert!(e.is_usage());
        let e = LabError::PeerDir {
            path: "/x".into(),
            source: std::io::Error::from_raw_os_error(libc::EACCES),
        };
        assert!(e.to_string().starts_with("/x: "), "{e}");
        assert!(!e.is_usage());
    }
}
