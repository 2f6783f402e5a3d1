//! The lab on an arm64 host: the `virt` machine's probe, MMIO in place of
//! port I/O, the SMCCC filter some hosts' KVM lacks, and kvmtool's build of
//! the probe as a peer.

mod floor;
#[cfg(test)]
mod tests;

use std::path::Path;

use trapline_bus::ExitKind;
use trapline_machine::{HostKvm, Outcome};

use crate::catalog::Scenario;
use crate::runner::LabOptions;

pub(crate) use floor::{floor_check, floor_sample};

/// How a probe that ran every scenario ends: `finish(0)` powers off with
/// PSCI SYSTEM_OFF.
pub(crate) const GOOD_END: Outcome = Outcome::PowerOff;

/// The exit a ucall itself makes: an MMIO store.
pub(crate) const UCALL_EXIT: ExitKind = ExitKind::MmioWrite;

/// The scenario the profile's overhead is measured on: the user exit, on
/// MMIO (arm64 has no port I/O).
pub(crate) const STAT_OVERHEAD_SCENARIO: &str = trapline_report::derive::names::MMIO_USER_WRITE;

/// An arm64 host? (The anatomy pass's path list.)
pub(crate) const ARM64: bool = true;

/// Where the exit-stamp mailbox is on the `virt` machine.
pub(crate) const ANATOMY_MAILBOX: u64 = trapline_abi::VIRT_ANATOMY_MAILBOX;

/// The probe's clock when it is not the TSC (see `HostInfo::counter`).
pub(crate) const COUNTER: Option<&str> = Some("CNTVCT_EL0");

/// The architecture a report names (`HostInfo::arch`).
pub(crate) const REPORT_ARCH: Option<&str> = Some(std::env::consts::ARCH);

/// Why kvmtool runs no probe here, if it runs none: it runs the probe's
/// kvmtool build.
pub(crate) const KVMTOOL_PROBE_NOT_APPLICABLE: Option<&str> = None;

/// The probe's kvmtool build on `lkvm`.
pub(crate) fn run_kvmtool_probe(
    opts: &LabOptions,
    dir: &Path,
    line: &str,
    cpus: u32,
) -> Result<String, String> {
    match &opts.kvmtool {
        Some(k) => crate::kvmtool::run_probe(k, dir, line, cpus, opts.vm_timeout),
        None => Err("no lkvm was found".into()),
    }
}

/// What this host's KVM cannot run of the catalog: `hypercall-user` where
/// it cannot forward an HVC to trapline (no SMCCC filter), asked once, on
/// the first probe run that has it.
pub(crate) struct HostSupport {
    /// Why the SMCCC filter is missing (`None` inside once checked and it
    /// is there).
    smccc_unsupported: Option<Option<String>>,
}

impl HostSupport {
    /// Nothing asked yet.
    pub(crate) fn new() -> Self {
        Self {
            smccc_unsupported: None,
        }
    }

    /// Why this host cannot run `s`, if it cannot.
    pub(crate) fn why_not(&mut self, kvm: &HostKvm, s: &Scenario) -> Option<String> {
        if s.id.id != trapline_abi::scenario::HYPERCALL_USER.id {
            return None;
        }
        self.smccc_unsupported
            .get_or_insert_with(|| match kvm.kvm().create_vm() {
                Ok(vm) => trapline_kvm::smccc::filter_offered(&vm),
                Err(e) => Some(format!("KVM_CREATE_VM to ask for the SMCCC filter: {e}")),
            })
            .clone()
    }
}
