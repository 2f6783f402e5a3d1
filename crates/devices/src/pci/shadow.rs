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

use std::sync::{Arc, Mutex};

use super::bus::{PciBus, ECAM_BUS_SIZE};
use super::{lock, PciError};

/// Where the bus writes shadow updates: the host view of the read-only
/// memslot (`trapline_fastpath::ReadOnlyRegion::write` fits as is).
pub trait ShadowSink: Send + Sync {
    /// Overwrite `bytes` at `offset` in the shadow; parts past its end are
    /// ignored.
    fn write(&self, offset: usize, bytes: &[u8]);
}

/// A shadow in ordinary memory: for tests and for machines that poll
/// [`PciBus::generation`] instead of attaching a sink.
#[derive(Debug)]
pub struct MemoryShadow {
    bytes: Mutex<Vec<u8>>,
}

impl MemoryShadow {
    /// `len` bytes of all-ones.
    pub fn new(len: usize) -> Self {
        Self {
            bytes: Mutex::new(vec![0xff; len]),
        }
    }

    /// A copy of the contents.
    pub fn contents(&self) -> Vec<u8> {
        lock(&self.bytes).clone()
    }
}

impl ShadowSink for MemoryShadow {
    fn write(&self, offset: usize, bytes: &[u8]) {
        let mut mem = lock(&self.bytes);
        if let Some(dst) = mem.get_mut(offset..) {
            let n = dst.len().min(bytes.len());
            dst[..n].copy_from_slice(&bytes[..n]);
        }
    }
}

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
