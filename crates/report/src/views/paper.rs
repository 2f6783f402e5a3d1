//! The `paper` view's code (seed 001, `seeds/paper.toml`): what the status
//! column says of a row, and the x2APIC variants noted beside the table.

use super::common::{Measured, SELF_TIMED};
use super::seed::{Hooks, Quantity};
use crate::fmt::cycles;
use crate::model::{Report, TRAPLINE_VMM};

/// IPI and EOI through x2APIC MSRs: not in the paper (whose x86 numbers
/// use the xAPIC's MMIO page), reported beside it when measured.
pub const X2APIC_VARIANTS: [&str; 2] = ["ipi-x2apic", "eoi-x2apic"];

/// The paper table's code.
pub const HOOKS: Hooks = Hooks {
    report_notes: Some(notes),
    basis: Some(basis),
    ..Hooks::NONE
};

/// What the status column says of a measured row: which value "this
/// host" is; a row whose scenario the run did not measure (`--only`) says so.
fn basis(m: &Measured) -> Option<&'static str> {
    if !m.is_measured() {
        return (m.reason.is_none()).then_some("not in this run");
    }
    Some(if m.net.is_some() {
        "net of noop"
    } else if SELF_TIMED.contains(&m.scenario.as_str()) {
        "median (timed per EOI in the handler)"
    } else {
        "median (no noop baseline)"
    })
}

/// The notes beside the table: the x2APIC variants, and the user exit's
/// legs where the run measured its anatomy.
fn notes(report: &Report) -> Vec<String> {
    let mut v = x2apic_note(report);
    v.extend(super::anatomy::paper_note(report));
    v
}

/// The [`X2APIC_VARIANTS`] measured, as a note: not in the paper.
fn x2apic_note(report: &Report) -> Vec<String> {
    let measured: Vec<String> = X2APIC_VARIANTS
        .iter()
        .map(|n| Measured::lookup(report, TRAPLINE_VMM, n))
        .filter(Measured::is_measured)
        .map(|m| {
            let basis = if m.net.is_some() { "net" } else { "median" };
            let v = Quantity::NetElseMedian.of(&m, 1).unwrap_or_default();
            format!("{} {} ({basis})", m.scenario, cycles(v))
        })
        .collect();
    if measured.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "x2APIC variants (MSR writes, no instruction decoding; not in the paper): {}.",
        measured.join(", ")
    )]
}
