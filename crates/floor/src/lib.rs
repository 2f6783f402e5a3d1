//! The raw-KVM floor: the probe's own loops run on /dev/kvm with no VMM
//! around them, on a ladder of raw VMs that add trapline's configuration
//! one piece at a time (see `trapline_report::ladder`).
//!
//! Each architecture's floor sits in [`arch`] behind the same names:
//!
//! - [`code`]: the guest code, each loop byte (or word) for word the probe's;
//! - [`pieces`]: the pieces of trapline's machine a raw VM may have;
//! - [`vm`]: a raw VM with optional pieces and a bare KVM_RUN loop;
//! - [`ladder`]: which pieces each rung has and which loops it runs.

pub mod anatomy;
pub mod arch;
mod raw;

pub use anatomy::FloorAnatomy;
pub use arch::{code, ladder, pieces, vm, FloorKind, Pieces, RawVm};
pub use raw::FloorSample;

use kvm_ioctls::Kvm;

/// Build one VM with `pieces` for `kind`, then grow the loop from `min`
/// iterations, doubling, until it lasts `goal` cycles or reaches `max`
/// iterations (the kvm-unit-tests method); returns the last measurement.
/// A warm-up run of `min` iterations comes first, as in the probe, and the
/// final size runs twice (the second is returned).
pub fn measure_to_goal(
    kvm: &Kvm,
    pieces: Pieces,
    kind: FloorKind,
    goal: u64,
    min: u64,
    max: u64,
) -> Result<FloorSample, String> {
    let mut vm = RawVm::new(kvm, pieces, kind)?;
    let mut n = min.max(1);
    vm.measure(n)?;
    loop {
        let s = vm.measure(n)?;
        if s.cycles >= goal || n >= max {
            // Once more at the final size: a fresh VM is still warming up
            // (KVM's MMU, the host's pages) where the probe's VM, which
            // has run its other scenarios, is not.
            return vm.measure(n);
        }
        n = n.saturating_mul(2).min(max);
    }
}
