//! The `pci-testdev` view's code (seed 003, `seeds/pci-testdev.toml`): the
//! seed's findings, on its published cycles (a row's, or the `also` number
//! standing for a scenario) and this host's medians.

use super::seed::{Findings, Hooks, SeedTable};
use crate::derive::findings;
use crate::model::Report;

/// The pci-testdev table's code.
pub const HOOKS: Hooks = Hooks {
    findings: Some(Findings {
        formula: findings::pci_testdev,
        this_host: median,
    }),
    ..Hooks::NONE
};

/// Median cycles per iteration of trapline's `scenario`.
fn median(report: &Report, _: &SeedTable, scenario: &str) -> Option<f64> {
    findings::median(report, scenario)
}
