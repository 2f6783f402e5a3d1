//! What every architecture's [`Vm`] does the same way: checking the vCPU
//! count and RAM size it is asked for, mapping guest RAM into the VM, and
//! handing out its fd, RAM, configuration and memslots. What differs
//! (interrupt controller, vCPU creation, boot registers) is in
//! `arch::<arch>::vm`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use kvm_bindings::kvm_userspace_memory_region;
use kvm_ioctls::VmFd;
use trapline_abi::MAX_VCPUS;
use vm_memory::{GuestAddress, GuestMemoryBackend, GuestMemoryMmap, GuestMemoryRegion};

use crate::{CpuModel, Irqchip, KvmError, Vm};

/// How to build a VM.
#[derive(Clone, Debug)]
pub struct VmConfig {
    /// Guest RAM in bytes: from GPA 0 on x86 (a multiple of 4 KiB), from
    /// `VIRT_RAM_BASE` on arm64 (a multiple of 64 KiB, the largest page
    /// size an arm64 host may use).
    pub mem_bytes: u64,
    /// Number of vCPUs (1..=MAX_VCPUS).
    pub vcpus: u32,
    /// The interrupt controllers KVM emulates. Without any, HLT exits to
    /// user space, which one lab scenario measures (x86; arm64 takes only
    /// [`Irqchip::Kernel`], the vGICv3).
    pub irqchip: Irqchip,
    /// The in-kernel PIT (x86, needs [`Irqchip::Kernel`]; arm64 has none:
    /// must be false).
    pub pit: bool,
    /// The CPU model every vCPU gets (`--cpu`; arm64: the host's).
    pub cpu: CpuModel,
}

impl Vm {
    /// The VM fd, shared with fast-path registrations.
    pub fn fd(&self) -> &Arc<VmFd> {
        &self.fd
    }

    /// Guest RAM.
    pub fn memory(&self) -> &GuestMemoryMmap {
        &self.memory
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &VmConfig {
        &self.config
    }

    /// A memslot number nobody uses yet.
    pub fn alloc_slot(&self) -> u32 {
        self.next_slot.fetch_add(1, Ordering::Relaxed)
    }
}

/// Refuse a vCPU count outside 1..=[`MAX_VCPUS`] and RAM that is empty or
/// not a multiple of `granule` bytes (`granule_name` in words: "4 KiB").
pub(crate) fn check_size(
    vcpus: u32,
    mem_bytes: u64,
    granule: u64,
    granule_name: &str,
) -> Result<(), KvmError> {
    if vcpus == 0 || vcpus > MAX_VCPUS {
        return Err(KvmError::Config(format!(
            "{vcpus} vCPUs requested: trapline runs 1 to {MAX_VCPUS}"
        )));
    }
    if mem_bytes == 0 || !mem_bytes.is_multiple_of(granule) {
        return Err(KvmError::Config(format!(
            "guest memory of {mem_bytes} bytes: must be a non-zero multiple of {granule_name}"
        )));
    }
    Ok(())
}

/// Map `mem_bytes` of guest RAM from GPA `base` and register it with the
/// VM, one memslot per region from slot 0.
///
/// The caller keeps the memory alive at least as long as `fd` (the `Vm`
/// holds both, the fd first, so it is closed first).
pub(crate) fn map_ram(fd: &VmFd, base: u64, mem_bytes: u64) -> Result<GuestMemoryMmap, KvmError> {
    let memory = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(base), mem_bytes as usize)])
        .map_err(|e| KvmError::Memory {
            mib: mem_bytes >> 20,
            detail: e.to_string(),
        })?;
    for (slot, region) in memory.iter().enumerate() {
        let desc = kvm_userspace_memory_region {
            slot: slot as u32,
            flags: 0,
            guest_phys_addr: region.start_addr().0,
            memory_size: region.len(),
            userspace_addr: region.as_ptr() as u64,
        };
        // SAFETY: the host range belongs to `memory`, which the caller's
        // Vm owns and drops after the VM fd is closed (field order: `fd`
        // first), so KVM never holds a dangling host address.
        unsafe { fd.set_user_memory_region(desc) }
            .map_err(KvmError::ioctl("KVM_SET_USER_MEMORY_REGION (RAM)"))?;
    }
    Ok(memory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_out_of_range_are_refused_in_words() {
        let e = check_size(0, 4096, 4096, "4 KiB").unwrap_err().to_string();
        assert!(e.contains("0 vCPUs requested: trapline runs 1 to"), "{e}");
        let e = check_size(MAX_VCPUS + 1, 4096, 4096, "4 KiB").unwrap_err();
        assert!(e.to_string().contains("vCPUs requested"), "{e}");
        let e = check_size(1, 0x1_1000, 0x1_0000, "64 KiB").unwrap_err();
        assert!(
            e.to_string()
                .contains("guest memory of 69632 bytes: must be a non-zero multiple of 64 KiB"),
            "{e}"
        );
        assert!(check_size(1, 0, 4096, "4 KiB").is_err());
        assert!(check_size(MAX_VCPUS, 0x1_0000, 0x1_0000, "64 KiB").is_ok());
    }
}
