//! Fast-path hooks: how a PCI device asks the machine for KVM ioeventfds.
//!
//! The device models stay free of KVM: they talk to an [`IoEventRegistry`]
//! the machine implements (with `trapline_fastpath::IoEvent`). A
//! registration lives as long as its [`IoEventHandle`]; dropping the handle
//! deregisters it, exactly like QEMU's `memory_region_del_eventfd` when a
//! pci-testdev test is deselected.
//!
//! Mapping onto `trapline_fastpath::Datamatch`: `datamatch: None` is a
//! wildcard (`Datamatch::Any`; `len` is then a hint: 0 = any length, which
//! QEMU asks for on MMIO, 1 = QEMU's PIO width; a registry may use any
//! length for both since the guest writes one byte); `Some(v)` with `len`
//! 1/2/4/8 is `Datamatch::U8/U16/U32/U64(v)`.

/// The address space of a registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Port I/O.
    Pio,
    /// Memory-mapped I/O.
    Mmio,
}

/// The machine's side of a live registration. Its `Drop` must deregister.
pub trait IoEventRegistration: Send + Sync {
    /// How many guest writes KVM signalled since the registration was made
    /// (cumulative: an implementation that drains its eventfd must add up
    /// what it read).
    fn fired(&self) -> u64;
}

/// A live ioeventfd registration. Dropping it (or [`IoEventHandle::remove`])
/// deregisters it.
pub struct IoEventHandle {
    inner: Box<dyn IoEventRegistration>,
}

impl IoEventHandle {
    /// Wrap the machine's registration object.
    pub fn new(inner: Box<dyn IoEventRegistration>) -> Self {
        Self { inner }
    }

    /// Signals since registration.
    pub fn fired(&self) -> u64 {
        self.inner.fired()
    }

    /// Deregister now (same as dropping).
    pub fn remove(self) {}
}

impl std::fmt::Debug for IoEventHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IoEventHandle(fired {})", self.fired())
    }
}

/// Something that can register KVM ioeventfds: the machine's VM.
pub trait IoEventRegistry: Send + Sync {
    /// Register an eventfd for guest writes to `addr` in `space`. `len` is
    /// the access width to match (0 = any); `datamatch` the value to match
    /// (`None` = any value). An error is reported by the device (it then
    /// serves the writes in user space) and never panics anything.
    fn add(
        &self,
        space: Space,
        addr: u64,
        len: u32,
        datamatch: Option<u64>,
    ) -> Result<IoEventHandle, String>;
}

/// A registry for machines without ioeventfds: every request fails, so
/// devices count every write in user space.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoIoEvents;

impl IoEventRegistry for NoIoEvents {
    fn add(
        &self,
        space: Space,
        addr: u64,
        _: u32,
        _: Option<u64>,
    ) -> Result<IoEventHandle, String> {
        Err(format!(
            "no ioeventfds on this machine ({space:?} {addr:#x})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ioevents_refuses_every_request() {
        assert!(NoIoEvents.add(Space::Pio, 1, 1, None).is_err());
    }
}
