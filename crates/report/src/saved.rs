//! Saved runs read back: a results folder's `report.json` (or the folder
//! itself, `trapline-results/latest`) or `bench --save`'s file, as
//! `trapline report` and `trapline bench --compare` read them. A run that
//! measured nothing is refused: there is nothing to show or compare.

use std::path::Path;

use crate::{Report, ReportError};

/// The file a results folder keeps its run's report in.
pub const JSON_FILE: &str = "report.json";

/// Why a saved run cannot be read or shown.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Unreadable, not JSON, or another schema.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A run that measured nothing.
    #[error("the run holds no scenarios (nothing was measured in it), so there is nothing to show or compare")]
    Empty,
}

/// Reads a saved run: `path`, or `path/report.json` for a folder (a
/// results folder, `trapline-results/latest`); a run without any scenario
/// is refused.
pub fn load(path: &Path) -> Result<Report, LoadError> {
    let report = if path.is_dir() {
        Report::load(path.join(JSON_FILE))?
    } else {
        Report::load(path)?
    };
    if report.scenarios.is_empty() {
        return Err(LoadError::Empty);
    }
    Ok(report)
}
