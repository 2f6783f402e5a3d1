//! The arm64 raw-KVM floor's loops checked: user exits are MMIO stores;
//! the vGIC read's value is the distributor's, whatever the host's KVM
//! says; KVM's own counters over the run go beside each sample, as
//! `--stat`'s.

use trapline_abi::PROBE_READ_VALUE;
use trapline_bus::ExitKind;
use trapline_report::Sample;

use crate::floor::{FloorKind, FloorSample};

/// Whether a floor loop did what its kind claims, and the check as the
/// report words it.
pub(crate) fn floor_check(kind: FloorKind, s: &FloorSample) -> (bool, &'static str) {
    let n = s.iterations;
    match kind {
        FloorKind::Noop => (s.user_exits == 0, "0 exits"),
        FloorKind::MmioVgicRead => (s.user_exits == 0, "0 exits"),
        FloorKind::MmioUserWrite => (s.user_exits == n, "one user exit per iteration"),
        FloorKind::MmioKernelWildcard => (
            s.user_exits == 0 && s.eventfd_count == n,
            "0 exits; eventfd count = iterations",
        ),
        FloorKind::RamRead => (
            s.user_exits == 0 && s.value == u64::from(PROBE_READ_VALUE),
            "0 exits; the value read checked",
        ),
    }
}

/// A floor loop's sample: its iterations, cycles and user exits, and KVM's
/// counters.
pub(crate) fn floor_sample(s: FloorSample) -> Sample {
    let mut sample =
        Sample::new(s.iterations, s.cycles).with_exits(ExitKind::MmioWrite, s.user_exits);
    sample.kvm_exits = s.kvm_exits;
    sample
}
