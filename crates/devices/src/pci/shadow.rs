//! The read-only ECAM shadow (seed 004's technique, `--ecam-ro`).
//!
//! The machine maps bus 0's 1 MiB of ECAM as a KVM_MEM_READONLY memslot
//! whose host memory holds exactly what ECAM reads would return. Guest
//! configuration *reads* through ECAM then cost a memory read instead of an
//! exit; *writes* still exit (KVM reports writes to a read-only slot as
//! MMIO) and reach [`super::PciConfigMmio`] mapped at the same address,
//! which updates the configuration and, through the attached
//! [`ShadowSink`], the shadow before the vCPU resumes.
//!
//! Limitation: a configuration register whose *read* has side effects (a
//! read-to-clear bit, a register computed on every read) cannot be modelled
//! this way, since shadowed reads never reach the device. No function on
//! trapline's bus has one today; one that gets one must not be used with
//! the shadow (or must make the machine drop `--ecam-ro`). Likewise only
//! state a configuration *write* changes is refreshed: a device that changed
//! its own configuration asynchronously (e.g. a STATUS bit set by an
//! interrupt) would have to bump the shadow itself.

use std::sync::Arc;

use super::bus::{PciBus, ECAM_BUS_SIZE};
use super::shadow_sink::ShadowSink;
use super::PciError;

/// What the machine needs to run the ECAM shadow of bus 0.
#[derive(Clone, Debug)]
pub struct ShadowHandle {
    bus: Arc<PciBus>,
}

impl ShadowHandle {
    pub(crate) fn new(bus: Arc<PciBus>) -> Self {
        Self { bus }
    }

    /// Bytes to map read-only at the ECAM base: bus 0 (1 MiB). Further
    /// buses, if the ECAM window has them, stay ordinary MMIO (all-ones).
    pub fn len(&self) -> usize {
        ECAM_BUS_SIZE
    }

    /// Never empty.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Render the whole shadow into `out` (see [`PciBus::render_shadow`]).
    pub fn render(&self, out: &mut [u8]) {
        self.bus.render_shadow(out);
    }

    /// Changes after every configuration write that changed config space.
    pub fn generation(&self) -> u64 {
        self.bus.generation()
    }

    /// Fill `sink` now and keep it current (see
    /// [`PciBus::attach_shadow_sink`]).
    pub fn attach(&self, sink: Arc<dyn ShadowSink>) -> Result<(), PciError> {
        self.bus.attach_shadow_sink(sink)
    }
}
