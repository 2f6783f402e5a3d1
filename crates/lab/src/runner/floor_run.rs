//! Runs on the raw-KVM floor ladder, checked and taken into their
//! accumulators.

use super::Acc;
use crate::arch;
use crate::floor::{self, FloorKind};

/// Records the first failed check of a floor loop, with what it saw.
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

/// A floor loop's run into its accumulator: checked by what its kind
/// claims on this architecture, its sample kept.
pub(super) fn absorb_floor(a: &mut Acc, kind: FloorKind, s: floor::FloorSample) {
    let (ok, check) = arch::floor_check(kind, &s);
    note_failure(a, kind, &s, ok);
    a.check.get_or_insert_with(|| check.into());
    a.samples.push(arch::floor_sample(s));
}
