//! Runs on the raw-KVM floor ladder, checked and taken into their
//! accumulators.

use trapline_abi::PROBE_READ_VALUE;
use trapline_bus::ExitKind;
use trapline_report::Sample;

use super::Acc;
use crate::floor::{self, FloorKind};

pub(super) fn absorb_floor(a: &mut Acc, kind: FloorKind, s: floor::FloorSample) {
    let n = s.iterations;
    let ok = match kind {
        FloorKind::Noop => s.user_exits == 0,
        FloorKind::PioUserOut => s.user_exits == n,
        FloorKind::PioKernelWildcard | FloorKind::MmioKernelWildcard => {
            s.user_exits == 0 && s.eventfd_count == n
        }
        FloorKind::RamRead => s.user_exits == 0 && s.value == u64::from(PROBE_READ_VALUE),
    };
    if !ok {
        a.failure.get_or_insert(format!(
            "{}: {} user exits, eventfd count {}, value {:#x} for {n} iterations",
            kind.name(),
            s.user_exits,
            s.eventfd_count,
            s.value
        ));
    }
    a.check.get_or_insert_with(|| match kind {
        FloorKind::Noop => "0 exits".into(),
        FloorKind::PioUserOut => "one user exit per iteration".into(),
        FloorKind::PioKernelWildcard | FloorKind::MmioKernelWildcard => {
            "0 exits; eventfd count = iterations".into()
        }
        FloorKind::RamRead => "0 exits; the value read checked".into(),
    });
    a.samples
        .push(Sample::new(n, s.cycles).with_exits(ExitKind::PioWrite, s.user_exits));
}
