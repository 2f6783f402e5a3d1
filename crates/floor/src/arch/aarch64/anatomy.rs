//! The arm64 floor's anatomy VM: not built yet. The lab reports the arm64
//! floor's legs as not measured, with this reason, and trapline's own
//! arm64 legs without a floor beside them.

use kvm_ioctls::Kvm;

use crate::anatomy::FloorAnatomy;

/// The paths the floor can stamp: none yet on arm64.
pub const PATHS: [&str; 0] = [];

/// Why there is no arm64 floor anatomy.
pub fn measure(
    _kvm: &Kvm,
    path: &'static str,
    _n: usize,
    _warmup: usize,
) -> Result<FloorAnatomy, String> {
    Err(format!(
        "the arm64 raw floor has no anatomy program for {path} yet (trapline's legs are measured)"
    ))
}
