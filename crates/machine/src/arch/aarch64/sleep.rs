//! arm64 has no S3: `virt` has no ACPI PM block, so no guest suspends and
//! nothing resumes a parked vCPU.

use std::sync::mpsc::Sender;
use std::time::Instant;

use trapline_kvm::{KvmError, VcpuFd};
use vm_memory::GuestMemoryMmap;

use super::platform::Platform;
use crate::Outcome;

/// Where a vCPU resumes after S3: nowhere, so no value exists.
pub type ResumeAt = std::convert::Infallible;

/// A suspend cannot be asked for on `virt`, and would end the run as a
/// power-off.
pub(crate) fn sleep_and_resume(
    _platform: &Platform,
    _memory: &GuestMemoryMmap,
    _deadline: Option<Instant>,
    _resume_txs: &[Sender<ResumeAt>],
) -> Option<Outcome> {
    Some(Outcome::PowerOff)
}

/// Never called: no [`ResumeAt`] exists.
pub(crate) fn resume(_vcpu: &VcpuFd, at: ResumeAt) -> Result<(), KvmError> {
    match at {}
}
