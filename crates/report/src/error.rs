//! Errors from loading and parsing reports.

use std::path::PathBuf;

/// Why a report could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file could not be read.
    #[error("cannot read report {}: {source}", path.display())]
    Io {
        /// The file asked for.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The file (or pipe) holds more than any report can.
    #[error("cannot read report {}: it is larger than {max_mib} MiB, more than any saved run holds (is it a report?)", path.display())]
    TooLarge {
        /// The file asked for.
        path: PathBuf,
        /// The limit, in MiB.
        max_mib: u64,
    },
    /// The text is not JSON, or not a report of this schema's shape.
    #[error("report is not valid JSON for schema {expected}: {source}")]
    Json {
        /// The schema this build reads.
        expected: &'static str,
        /// What the parser said (with line and column).
        #[source]
        source: serde_json::Error,
    },
    /// The document has no `schema` field, or one this build does not read.
    #[error("report schema is {}, this build reads {expected}", found.as_deref().map(|s| format!("{s:?}")).unwrap_or_else(|| "missing".to_string()))]
    Schema {
        /// The `schema` value found, if any.
        found: Option<String>,
        /// The schema this build reads.
        expected: &'static str,
    },
}
