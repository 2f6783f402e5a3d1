//! A test double for [`IoEventRegistry`]: records every call and plays
//! KVM's part, touching no kernel object. Built for this crate's tests and,
//! with the `test-utils` feature, for other crates' tests and the fuzz
//! targets; never part of a trapline binary.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::registry::{IoEventHandle, IoEventRegistration, IoEventRegistry, Space};

/// One call recorded by [`RecordingRegistry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistryEvent {
    /// A successful `add`.
    Add(Registration),
    /// The handle with this id was dropped.
    Remove(u64),
}

/// A registration as [`RecordingRegistry`] saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Registration {
    /// Sequence number, from 1.
    pub id: u64,
    /// Address space.
    pub space: Space,
    /// Guest address.
    pub addr: u64,
    /// Access width (0 = any).
    pub len: u32,
    /// Value to match.
    pub datamatch: Option<u64>,
}

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<RegistryEvent>>,
    live: Mutex<Vec<(Registration, Arc<AtomicU64>)>>,
    next_id: AtomicU64,
    failing: AtomicBool,
}

/// A registry that records calls and can play KVM's part ([`Self::fire`]).
/// For tests and the fuzz targets; it touches no kernel object.
#[derive(Clone, Default)]
pub struct RecordingRegistry {
    rec: Arc<Recorder>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl RecordingRegistry {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Make later `add` calls fail (or succeed again).
    pub fn set_failing(&self, failing: bool) {
        self.rec.failing.store(failing, Ordering::Relaxed);
    }

    /// Every call so far, in order.
    pub fn events(&self) -> Vec<RegistryEvent> {
        lock(&self.rec.events).clone()
    }

    /// Every call so far, clearing the log.
    pub fn take_events(&self) -> Vec<RegistryEvent> {
        std::mem::take(&mut *lock(&self.rec.events))
    }

    /// The registrations alive now, oldest first.
    pub fn live(&self) -> Vec<Registration> {
        lock(&self.rec.live).iter().map(|(r, _)| *r).collect()
    }

    /// Play KVM: a guest write of `len` bytes of `value` at `addr`. Returns
    /// true (and bumps that registration's count) if a live registration
    /// matches, i.e. KVM would have consumed the write without an exit.
    pub fn fire(&self, space: Space, addr: u64, len: u32, value: u64) -> bool {
        let live = lock(&self.rec.live);
        let hit = live.iter().find(|(r, _)| {
            r.space == space
                && r.addr == addr
                && (r.len == 0 || r.len == len)
                && r.datamatch.is_none_or(|d| d == value)
        });
        match hit {
            Some((_, count)) => {
                count.fetch_add(1, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }
}

struct RecordedHandle {
    rec: Arc<Recorder>,
    id: u64,
    count: Arc<AtomicU64>,
}

impl IoEventRegistration for RecordedHandle {
    fn fired(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

impl Drop for RecordedHandle {
    fn drop(&mut self) {
        lock(&self.rec.live).retain(|(r, _)| r.id != self.id);
        lock(&self.rec.events).push(RegistryEvent::Remove(self.id));
    }
}

impl IoEventRegistry for RecordingRegistry {
    fn add(
        &self,
        space: Space,
        addr: u64,
        len: u32,
        datamatch: Option<u64>,
    ) -> Result<IoEventHandle, String> {
        if self.rec.failing.load(Ordering::Relaxed) {
            return Err(format!("refused {space:?} {addr:#x}"));
        }
        let id = self.rec.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let reg = Registration {
            id,
            space,
            addr,
            len,
            datamatch,
        };
        let count = Arc::new(AtomicU64::new(0));
        lock(&self.rec.live).push((reg, count.clone()));
        lock(&self.rec.events).push(RegistryEvent::Add(reg));
        Ok(IoEventHandle::new(Box::new(RecordedHandle {
            rec: self.rec.clone(),
            id,
            count,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_registry_records_adds_removes_and_fires() {
        let r = RecordingRegistry::new();
        let h = r.add(Space::Pio, 0x718, 4, Some(7)).unwrap();
        assert!(!r.fire(Space::Pio, 0x718, 4, 8));
        assert!(!r.fire(Space::Pio, 0x718, 1, 7));
        assert!(!r.fire(Space::Mmio, 0x718, 4, 7));
        assert!(r.fire(Space::Pio, 0x718, 4, 7));
        assert_eq!(h.fired(), 1);
        let w = r.add(Space::Mmio, 0x1000, 0, None).unwrap();
        assert!(r.fire(Space::Mmio, 0x1000, 8, 123));
        assert_eq!(w.fired(), 1);
        h.remove();
        assert!(!r.fire(Space::Pio, 0x718, 4, 7));
        drop(w);
        assert!(r.live().is_empty());
        let ev = r.events();
        assert_eq!(ev.len(), 4);
        assert_eq!(ev[2], RegistryEvent::Remove(1));
        assert_eq!(ev[3], RegistryEvent::Remove(2));
        r.set_failing(true);
        assert!(r.add(Space::Pio, 1, 1, None).is_err());
    }
}
