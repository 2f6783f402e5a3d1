//! Coalesced MMIO/PIO: zones and the ring.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use kvm_bindings::{kvm_coalesced_mmio, KVM_COALESCED_MMIO_PAGE_OFFSET};
use kvm_ioctls::{VcpuFd, VmFd};

use crate::{FastpathError, Space};

/// A registered coalesced zone: guest writes inside it are queued in the
/// VM's ring instead of exiting. Dropping it unregisters it.
pub struct CoalescedZone {
    vm: Arc<VmFd>,
    space: Space,
    addr: u64,
    size: u32,
}

impl CoalescedZone {
    /// Register `[addr, addr + size)`.
    pub fn register(
        vm: Arc<VmFd>,
        space: Space,
        addr: u64,
        size: u32,
    ) -> Result<Self, FastpathError> {
        vm.register_coalesced_mmio(space.address(addr), size)
            .map_err(|source| FastpathError::Coalesced {
                space: space.name(),
                addr,
                size,
                source,
            })?;
        Ok(Self {
            vm,
            space,
            addr,
            size,
        })
    }
}

impl Drop for CoalescedZone {
    fn drop(&mut self) {
        // Fails only when the VM is already gone.
        let _ = self
            .vm
            .unregister_coalesced_mmio(self.space.address(self.addr), self.size);
    }
}

/// One queued write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoalescedEntry {
    /// PIO port or MMIO address.
    pub space: Space,
    /// Address written.
    pub addr: u64,
    /// Bytes written (1..=8).
    pub len: usize,
    /// The data; only `data[..len]` is meaningful.
    pub data: [u8; 8],
}

impl CoalescedEntry {
    /// The written bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.data[..self.len]
    }
}

/// Layout of the head of `struct kvm_coalesced_mmio_ring`: the consumer
/// index (ours to write) and the producer index (the kernel's).
#[repr(C)]
struct RingHead {
    first: AtomicU32,
    last: AtomicU32,
}

const PAGE: usize = 4096;
const ENTRY: usize = std::mem::size_of::<kvm_coalesced_mmio>();
/// Number of entries in the ring page (the kernel's KVM_COALESCED_MMIO_MAX).
pub const RING_ENTRIES: u32 = ((PAGE - std::mem::size_of::<RingHead>()) / ENTRY) as u32;

/// The VM's coalesced ring: ONE page per VM, shared by every vCPU. KVM
/// appends with a release store of `last`; the single consumer reads
/// entries after an acquire load of `last` and releases `first` after each
/// one, so the kernel never overwrites an entry that is being read.
///
/// Consumers take `drain_lock` only when the ring is non-empty, so the
/// common case (nothing queued) is one load and no lock. The lock is what
/// makes "drained before any other exit is dispatched" hold across vCPUs: a
/// vCPU that finds entries waits until they are all dispatched.
pub struct CoalescedRing {
    base: *mut u8,
    drain_lock: Mutex<()>,
}

// SAFETY: the ring page is shared memory designed for concurrent access by
// the kernel and user space; all accesses go through atomics (head) or
// volatile reads of entries the producer has published, and draining is
// serialised by `drain_lock`.
unsafe impl Send for CoalescedRing {}
// SAFETY: see above.
unsafe impl Sync for CoalescedRing {}

impl CoalescedRing {
    /// Map the ring through any vCPU of the VM (the page is per VM).
    pub fn map(vcpu: &VcpuFd) -> Result<Self, FastpathError> {
        // SAFETY: mapping a page of a vCPU fd at the documented offset;
        // the result is checked before use and unmapped in Drop.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                vcpu.as_raw_fd(),
                (KVM_COALESCED_MMIO_PAGE_OFFSET as usize * PAGE) as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(FastpathError::Host {
                what: "mmap of the coalesced MMIO ring",
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(Self {
            base: p.cast(),
            drain_lock: Mutex::new(()),
        })
    }

    fn head(&self) -> &RingHead {
        // SAFETY: the page starts with the two u32 indices; the mapping
        // lives as long as self and is suitably aligned (page aligned).
        unsafe { &*(self.base as *const RingHead) }
    }

    /// True when nothing is queued. One acquire load; no lock.
    #[inline]
    pub fn is_empty(&self) -> bool {
        let h = self.head();
        h.first.load(Ordering::Relaxed) == h.last.load(Ordering::Acquire)
    }

    /// Dispatch every queued entry, oldest first, through `f`. Returns how
    /// many were drained.
    pub fn drain(&self, mut f: impl FnMut(&CoalescedEntry)) -> u64 {
        if self.is_empty() {
            return 0;
        }
        // A poisoned lock only means another consumer panicked mid-drain;
        // the indices in shared memory are still consistent.
        let _guard = self.drain_lock.lock().unwrap_or_else(|e| e.into_inner());
        let h = self.head();
        let mut n = 0;
        loop {
            let first = h.first.load(Ordering::Relaxed);
            let last = h.last.load(Ordering::Acquire);
            if first == last || first >= RING_ENTRIES {
                break;
            }
            // SAFETY: first < RING_ENTRIES, so the entry lies inside the
            // page; the acquire load of `last` ordered the kernel's write of
            // this entry before our read.
            let raw: kvm_coalesced_mmio = unsafe {
                std::ptr::read_volatile(
                    self.base
                        .add(std::mem::size_of::<RingHead>() + first as usize * ENTRY)
                        as *const kvm_coalesced_mmio,
                )
            };
            // SAFETY: both union members are u32; reading either is defined.
            let pio = unsafe { raw.__bindgen_anon_1.pio } != 0;
            let entry = CoalescedEntry {
                space: if pio { Space::Pio } else { Space::Mmio },
                addr: raw.phys_addr,
                len: (raw.len as usize).min(8),
                data: raw.data,
            };
            f(&entry);
            h.first.store((first + 1) % RING_ENTRIES, Ordering::Release);
            n += 1;
        }
        n
    }
}

impl Drop for CoalescedRing {
    fn drop(&mut self) {
        // SAFETY: unmapping the page mapped in `map`.
        unsafe { libc::munmap(self.base.cast(), PAGE) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_geometry_matches_the_kernel() {
        // include/uapi/linux/kvm.h: KVM_COALESCED_MMIO_MAX =
        // (PAGE_SIZE - sizeof(struct kvm_coalesced_mmio_ring)) / sizeof(struct kvm_coalesced_mmio)
        assert_eq!(ENTRY, 24);
        assert_eq!(RING_ENTRIES, 170);
    }
}
