//! The x86 raw-KVM floor's loops checked: user exits are OUTs.

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
        FloorKind::PioUserOut => (s.user_exits == n, "one user exit per iteration"),
        FloorKind::PioKernelWildcard | FloorKind::MmioKernelWildcard => (
            s.user_exits == 0 && s.eventfd_count == n,
            "0 exits; eventfd count = iterations",
        ),
        FloorKind::RamRead => (
            s.user_exits == 0 && s.value == u64::from(PROBE_READ_VALUE),
            "0 exits; the value read checked",
        ),
    }
}

/// A floor loop's sample: its iterations, cycles and user exits.
pub(crate) fn floor_sample(s: FloorSample) -> Sample {
    Sample::new(s.iterations, s.cycles).with_exits(ExitKind::PioWrite, s.user_exits)
}
