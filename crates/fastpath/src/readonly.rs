//! Read-only memslots.

use std::sync::Arc;

use kvm_bindings::{kvm_userspace_memory_region, KVM_MEM_READONLY};
use kvm_ioctls::VmFd;
use vm_memory::mmap::MmapRegion;

use crate::FastpathError;

/// Host memory mapped into the guest with KVM_MEM_READONLY: guest reads are
/// plain memory reads (no exit), guest writes exit as KVM_EXIT_MMIO and
/// reach whatever MMIO device the machine has at the same address. The host
/// side stays writable, so trapline can keep the contents current (the
/// ECAM shadow of seed 004). Dropping it removes the memslot.
pub struct ReadOnlyRegion {
    vm: Arc<VmFd>,
    slot: u32,
    gpa: u64,
    region: MmapRegion,
}

impl ReadOnlyRegion {
    /// Map `size` bytes (a multiple of 4 KiB) at `gpa` in memslot `slot`.
    pub fn map(vm: Arc<VmFd>, slot: u32, gpa: u64, size: usize) -> Result<Self, FastpathError> {
        if size == 0 || !size.is_multiple_of(4096) || !gpa.is_multiple_of(4096) {
            return Err(FastpathError::Invalid(format!(
                "read-only region {gpa:#x}+{size:#x}: address and size must be non-zero multiples of 4 KiB"
            )));
        }
        let region = MmapRegion::new(size).map_err(|e| FastpathError::Host {
            what: "mmap for a read-only region",
            source: std::io::Error::other(e.to_string()),
        })?;
        let desc = kvm_userspace_memory_region {
            slot,
            flags: KVM_MEM_READONLY,
            guest_phys_addr: gpa,
            memory_size: size as u64,
            userspace_addr: region.as_ptr() as u64,
        };
        // SAFETY: the mapping is owned by `region`, which lives in the
        // returned object; Drop removes the memslot before the mapping is
        // unmapped (fields drop after `drop` runs), so KVM never holds a
        // dangling host address.
        unsafe { vm.set_user_memory_region(desc) }.map_err(|source| FastpathError::Memslot {
            slot,
            gpa,
            size: size as u64,
            source,
        })?;
        Ok(Self {
            vm,
            slot,
            gpa,
            region,
        })
    }

    /// Guest-physical base.
    pub fn gpa(&self) -> u64 {
        self.gpa
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.region.size()
    }

    /// Always false: a region is never empty.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Overwrite bytes at `offset` in the host view (what guest reads see).
    /// Out-of-range parts are ignored.
    pub fn write(&self, offset: usize, bytes: &[u8]) {
        let len = self.region.size();
        if offset >= len {
            return;
        }
        let n = bytes.len().min(len - offset);
        // SAFETY: [offset, offset + n) lies inside the mapping (checked
        // above); the mapping is private to this object and plain bytes, so
        // a concurrent guest read sees either old or new bytes, never UB on
        // our side.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.region.as_ptr().add(offset), n)
        };
    }

    /// Copy bytes out of the host view.
    pub fn read(&self, offset: usize, out: &mut [u8]) {
        let len = self.region.size();
        if offset >= len {
            out.fill(0xff);
            return;
        }
        let n = out.len().min(len - offset);
        // SAFETY: as in `write`, the range is inside the mapping.
        unsafe {
            std::ptr::copy_nonoverlapping(self.region.as_ptr().add(offset), out.as_mut_ptr(), n)
        };
        out[n..].fill(0xff);
    }
}

impl Drop for ReadOnlyRegion {
    fn drop(&mut self) {
        let desc = kvm_userspace_memory_region {
            slot: self.slot,
            flags: 0,
            guest_phys_addr: self.gpa,
            memory_size: 0,
            userspace_addr: 0,
        };
        // SAFETY: size 0 deletes the slot; it references no host memory.
        let _ = unsafe { self.vm.set_user_memory_region(desc) };
    }
}
