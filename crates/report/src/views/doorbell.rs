//! The `doorbell` view's code (seed 002, `seeds/doorbell.toml`): the
//! seed's findings and conclusion on round trips, and its "iops, rtt"
//! cells.

use super::common::{ratio, NOT_MEASURED};
use super::seed::{Findings, Hooks, SeedTable};
use crate::derive::findings::{
    self,
    doorbell::{IOEVENTFD_MMIO, SAVING, USER_MMIO},
    Finding,
};
use crate::fmt::micros;
use crate::model::Report;

/// The doorbell table's code.
pub const HOOKS: Hooks = Hooks {
    findings: Some(Findings {
        formula: findings::doorbell,
        this_host: rtt_us,
    }),
    conclusion: Some(conclusion),
    joined: Some(iops_rtt_cell),
    ..Hooks::NONE
};

/// `110000 iops, 9.09us rtt`, as the seed writes it.
pub fn iops_rtt(iops: f64, rtt_us: f64) -> String {
    format!("{iops:.0} iops, {}us rtt", micros(rtt_us))
}

/// A joined cell: IOPS and round trip, when both are known.
fn iops_rtt_cell(v: &[Option<f64>]) -> Option<String> {
    match v {
        [Some(iops), Some(rtt), ..] => Some(iops_rtt(*iops, *rtt)),
        _ => None,
    }
}

/// This host's round trip (µs) of trapline's `scenario`.
fn rtt_us(report: &Report, _: &SeedTable, scenario: &str) -> Option<f64> {
    findings::rtt_us(report, scenario)
}

/// The seed's name (its first text column) for the row our `scenario`
/// measures.
fn seed_row(table: &SeedTable, scenario: &str) -> String {
    table
        .row_for(scenario)
        .and_then(|r| r.texts.first())
        .map_or_else(|| scenario.to_string(), |t| t.shown.clone())
}

/// The seed's conclusion and this host's version of it, from the
/// round-trip saving.
fn conclusion(report: &Report, table: &SeedTable, found: &[Finding]) -> Vec<String> {
    let saving = found.iter().find(|f| f.name == SAVING);
    let (saving_pub, saving) = (
        saving.and_then(|f| f.published),
        saving.and_then(|f| f.this_host),
    );
    let seed = format!(
        "seed {}: \"{}\" ({} {}us − {} {}us = {}us)",
        table.seed,
        table.seed_conclusion.as_deref().unwrap_or_default(),
        seed_row(table, USER_MMIO),
        micros(table.published_for(USER_MMIO).unwrap_or(f64::NAN)),
        seed_row(table, IOEVENTFD_MMIO),
        micros(table.published_for(IOEVENTFD_MMIO).unwrap_or(f64::NAN)),
        micros(saving_pub.unwrap_or(f64::NAN)),
    );
    let user = findings::rtt_us(report, USER_MMIO);
    let here = match (saving, user, findings::rtt_us(report, IOEVENTFD_MMIO)) {
        (Some(s), Some(u), Some(k)) => {
            let share = ratio(Some(s), Some(u))
                .map(|f| format!(", {:.0}% of the round trip", f * 100.0))
                .unwrap_or_default();
            let verdict = if s > 0.0 {
                format!(
                    "we save about {}us by skipping the userspace hop",
                    micros(s)
                )
            } else {
                format!(
                    "skipping the userspace hop saves nothing here ({}us)",
                    micros(s)
                )
            };
            format!(
                "this host: {verdict} ({USER_MMIO} {}us − {IOEVENTFD_MMIO} {}us{share})",
                micros(u),
                micros(k)
            )
        }
        _ => format!(
            "this host: {NOT_MEASURED} (needs {USER_MMIO} and {IOEVENTFD_MMIO} measured with a \
             known TSC frequency)"
        ),
    };
    vec![seed, here]
}
