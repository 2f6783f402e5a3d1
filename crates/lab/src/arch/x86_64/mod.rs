//! The lab on an x86 host: the `pc` machine's probe, port I/O, and no
//! kvmtool peer.

mod floor;
#[cfg(test)]
mod tests;

use std::path::Path;

use trapline_bus::ExitKind;
use trapline_machine::{HostKvm, Outcome};

use crate::catalog::Scenario;
use crate::runner::LabOptions;

pub(crate) use floor::{floor_check, floor_sample};

/// How a probe that ran every scenario ends: `finish(0)` leaves through
/// the debug-exit port.
pub(crate) const GOOD_END: Outcome = Outcome::DebugExit(0);

/// The exit a ucall itself makes: an OUT.
pub(crate) const UCALL_EXIT: ExitKind = ExitKind::PioWrite;

/// The scenario the profile's overhead is measured on: the user exit, on
/// port I/O.
pub(crate) const STAT_OVERHEAD_SCENARIO: &str = trapline_report::derive::names::PIO_USER_OUT;

/// An arm64 host? (The anatomy pass's path list.)
pub(crate) const ARM64: bool = false;

/// Where the exit-stamp mailbox is on the `pc` machine.
pub(crate) const ANATOMY_MAILBOX: u64 = trapline_abi::ANATOMY_MAILBOX;

/// The probe's clock when it is not the TSC (see `HostInfo::counter`): it
/// is.
pub(crate) const COUNTER: Option<&str> = None;

/// The architecture a report names (`HostInfo::arch`): none, as every
/// report before arm64 had.
pub(crate) const REPORT_ARCH: Option<&str> = None;

/// Why kvmtool runs no probe here (its rows say so), if it runs none.
pub(crate) const KVMTOOL_PROBE_NOT_APPLICABLE: Option<&str> =
    Some(crate::kvmtool::PROBE_NOT_APPLICABLE);

/// kvmtool runs no probe on x86 (`ProbePeer::of` never picks it here).
pub(crate) fn run_kvmtool_probe(
    _opts: &LabOptions,
    _dir: &Path,
    _line: &str,
    _cpus: u32,
) -> Result<String, String> {
    Err(crate::kvmtool::PROBE_NOT_APPLICABLE.into())
}

/// What this host's KVM cannot run of the catalog: on x86, nothing it
/// needs to be asked about up front.
pub(crate) struct HostSupport;

impl HostSupport {
    /// Nothing asked yet.
    pub(crate) fn new() -> Self {
        HostSupport
    }

    /// Why this host cannot run `s`, if it cannot.
    pub(crate) fn why_not(&mut self, _kvm: &HostKvm, _s: &Scenario) -> Option<String> {
        None
    }
}
