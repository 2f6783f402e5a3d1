//! What the seed views share: looking a scenario up without panicking,
//! guarded ratios and captions (findings are computed in
//! [`crate::derive::findings`]).

use serde::Serialize;

use crate::model::{Report, Status};

/// Status of a row whose scenario is not in the report.
pub use crate::derive::findings::NOT_MEASURED;

/// Scenarios timed inside the guest: no net value (defined in the model).
pub use crate::model::SELF_TIMED;

/// The second half of every caption when the report's host is nested.
pub const NESTED_CLAUSE: &str = "and this host is a nested VM, where guest code is partly \
emulated and every exit also goes through the outer hypervisor, so its absolute numbers are \
inflated and only ratios carry over";

/// The second half of every caption when the report's host is emulated.
pub const EMULATED_CLAUSE: &str = "and this host is emulated (QEMU's CPU under TCG), so its \
times say nothing about hardware: read its rows for behaviour (checks, exits, orderings) only";

/// `base` as one sentence, with the clause the report's host calls for:
/// [`EMULATED_CLAUSE`], [`NESTED_CLAUSE`] or none.
pub fn host_caption(base: &str, host: &crate::model::HostInfo) -> String {
    if host.emulated && host.nested_note.is_some() {
        format!("{base}; {EMULATED_CLAUSE}.")
    } else {
        caption(base, host.nested_note.is_some())
    }
}

/// `base` as one sentence, extended with [`NESTED_CLAUSE`] when `nested`.
pub fn caption(base: &str, nested: bool) -> String {
    if nested {
        format!("{base}; {NESTED_CLAUSE}.")
    } else {
        format!("{base}.")
    }
}

/// One scenario of one VMM as a view shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measured {
    /// Report key (`name`, or `vmm:name` for peers).
    pub scenario: String,
    /// `ok`, `unsupported`, `failed` or [`NOT_MEASURED`].
    pub status: String,
    /// Why it is not measured, when the report says.
    pub reason: Option<String>,
    /// Median cycles per iteration.
    pub median: Option<f64>,
    /// Median net of the same VMM's noop loop; `None` for [`SELF_TIMED`]
    /// scenarios.
    pub net: Option<f64>,
    /// Median in nanoseconds (needs the TSC frequency).
    pub ns_per_iter: Option<f64>,
}

impl Measured {
    /// Looks `name` up on `vmm`; absent or unmeasured scenarios give a
    /// value with no numbers and a status saying why.
    pub fn lookup(report: &Report, vmm: &str, name: &str) -> Self {
        let key = crate::model::scenario_key(vmm, name);
        match report.scenario(vmm, name) {
            None => Self::absent(key),
            Some(s) if s.is_measured() => {
                let median = s.median().and_then(finite);
                Self {
                    scenario: key,
                    status: Status::Ok.to_string(),
                    reason: None,
                    median,
                    net: if SELF_TIMED.contains(&name) {
                        None
                    } else {
                        s.net.as_ref().and_then(|n| finite(n.median))
                    },
                    ns_per_iter: median.and(s.ns_per_iter).and_then(finite),
                }
            }
            Some(s) => Self {
                status: s.status.to_string(),
                reason: Some(
                    s.reason
                        .clone()
                        .unwrap_or_else(|| "no reason given".to_string()),
                ),
                ..Self::absent(key)
            },
        }
    }

    /// A scenario the report does not have.
    pub fn absent(key: String) -> Self {
        Self {
            scenario: key,
            status: NOT_MEASURED.to_string(),
            reason: None,
            median: None,
            net: None,
            ns_per_iter: None,
        }
    }

    /// Whether there are numbers.
    pub fn is_measured(&self) -> bool {
        self.median.is_some()
    }

    /// `ok`, `not measured`, or `unsupported: why`.
    pub fn status_text(&self) -> String {
        match &self.reason {
            Some(r) => format!("{}: {r}", self.status),
            None => self.status.clone(),
        }
    }
}

pub use crate::guarded::{finite, ratio};

pub use crate::derive::findings::Finding;

/// Pretty JSON of a view, never failing.
pub use crate::model::pretty_json as json;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captions() {
        assert_eq!(caption("A", false), "A.");
        assert!(caption("A", true).starts_with("A; and this host is a nested VM"));
        assert!(caption("A", true).ends_with('.'));
    }
}
