//! The `pci-config` view's code (seed 004, `seeds/pci-config.toml`): the
//! seed's findings (per-read ratios) and the derived value shown after
//! them.

use super::seed::{Findings, Hooks, SeedTable};
use crate::derive::findings;
use crate::model::Report;

/// The pci-config table's code.
pub const HOOKS: Hooks = Hooks {
    findings: Some(Findings {
        formula: findings::pci_config,
        this_host: cycles_per_read,
    }),
    derived: Some(crate::derive::ecam_ro_vs_ram),
    ..Hooks::NONE
};

/// This host's median cycles per config read of `scenario` (a scan's
/// divided by the reads it makes).
fn cycles_per_read(report: &Report, table: &SeedTable, scenario: &str) -> Option<f64> {
    let r = table.row_for(scenario)?;
    findings::median(report, scenario).map(|c| c / f64::from(r.per_iter))
}
