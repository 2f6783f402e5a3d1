//! Where the bus writes the read-only ECAM shadow's updates (see
//! [`super::ShadowHandle`] for the technique). Apart from the handle so
//! the bus, which writes through a sink, does not depend on the handle,
//! which reads through the bus.

use std::sync::Mutex;

use super::lock;

/// Where the bus writes shadow updates: the host view of the read-only
/// memslot (`trapline_fastpath::ReadOnlyRegion::write` fits as is).
pub trait ShadowSink: Send + Sync {
    /// Overwrite `bytes` at `offset` in the shadow; parts past its end are
    /// ignored.
    fn write(&self, offset: usize, bytes: &[u8]);
}

/// A shadow in ordinary memory: for tests and for machines that poll
/// [`super::PciBus::generation`] instead of attaching a sink.
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
