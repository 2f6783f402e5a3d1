//! Runs on the raw-KVM floor ladder, checked and taken into their
//! accumulators.

use trapline_abi::PROBE_READ_VALUE;
use trapline_bus::ExitKind;
use trapline_report::Sample;

use super::Acc;
use crate::floor::{self, FloorKind};

/// Records the first failed check of a floor loop, with what it saw (both
/// architectures' `absorb_floor` decide `ok` from their own loops).
fn note_failure(a: &mut Acc, kind: FloorKind, s: &floor::FloorSample, ok: bool) {
    if !ok {
        a.failure.get_or_insert(format!(
            "{}: {} user exits, eventfd count {}, value {:#x} for {} iterations",
            kind.name(),
            s.user_exits,
            s.eventfd_count,
            s.value,
            s.iterations
        ));
    }
}

#[cfg(target_arch = "x86_64")]
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
    note_failure(a, kind, &s, ok);
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

/// arm64: the same checks on the arm64 loops (MMIO user exits; the vGIC
/// read's value is the distributor's, whatever the host's KVM says), and
/// KVM's own counters over the run beside each sample, as `--stat`'s.
#[cfg(target_arch = "aarch64")]
pub(super) fn absorb_floor(a: &mut Acc, kind: FloorKind, s: floor::FloorSample) {
    let n = s.iterations;
    let ok = match kind {
        FloorKind::Noop => s.user_exits == 0,
        FloorKind::MmioUserWrite => s.user_exits == n,
        FloorKind::MmioKernelWildcard => s.user_exits == 0 && s.eventfd_count == n,
        FloorKind::RamRead => s.user_exits == 0 && s.value == u64::from(PROBE_READ_VALUE),
        FloorKind::MmioVgicRead => s.user_exits == 0,
    };
    note_failure(a, kind, &s, ok);
    a.check.get_or_insert_with(|| match kind {
        FloorKind::Noop | FloorKind::MmioVgicRead => "0 exits".into(),
        FloorKind::MmioUserWrite => "one user exit per iteration".into(),
        FloorKind::MmioKernelWildcard => "0 exits; eventfd count = iterations".into(),
        FloorKind::RamRead => "0 exits; the value read checked".into(),
    });
    let mut sample = Sample::new(n, s.cycles).with_exits(ExitKind::MmioWrite, s.user_exits);
    sample.kvm_exits = s.kvm_exits;
    a.samples.push(sample);
}
