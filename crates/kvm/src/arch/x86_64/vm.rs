//! The VM: guest memory, irqchip, vCPU creation.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use kvm_bindings::{kvm_userspace_memory_region, CpuId, KVM_MAX_CPUID_ENTRIES};
use kvm_ioctls::{VcpuFd, VmFd};
use vm_memory::{GuestAddress, GuestMemoryBackend, GuestMemoryMmap, GuestMemoryRegion};

use super::cpu_state::BootCpuState;
use super::{cpuid, irqchip};
use crate::{HostKvm, Irqchip, KvmError};

/// Identity-map page KVM needs on Intel (real-mode guests without
/// unrestricted guest), and the three TSS pages after it: the same
/// 0xFEFFC000–0xFEFFFFFF QEMU reserves. Defined with the rest of the
/// address map in trapline-abi.
pub use trapline_abi::KVM_IDENTITY_MAP_ADDR as IDENTITY_MAP_ADDR;
/// See [`IDENTITY_MAP_ADDR`].
pub use trapline_abi::KVM_TSS_ADDR as TSS_ADDR;
/// Most vCPUs trapline creates (trapline-abi: the payloads size their
/// per-CPU arrays by it too).
pub use trapline_abi::MAX_VCPUS;

/// How to build a VM.
#[derive(Clone, Debug)]
pub struct VmConfig {
    /// Guest RAM from GPA 0, in bytes (a multiple of 4 KiB).
    pub mem_bytes: u64,
    /// Number of vCPUs (1..=64).
    pub vcpus: u32,
    /// The interrupt controllers KVM emulates. Without any, HLT exits to
    /// user space, which one lab scenario measures.
    pub irqchip: Irqchip,
    /// The in-kernel PIT (needs [`Irqchip::Kernel`]).
    pub pit: bool,
    /// The CPU model every vCPU gets (`--cpu`).
    pub cpu: cpuid::CpuModel,
}

/// A KVM VM with its guest memory.
pub struct Vm {
    fd: Arc<VmFd>,
    memory: GuestMemoryMmap,
    cpuid: CpuId,
    config: VmConfig,
    next_slot: AtomicU32,
}

impl Vm {
    /// Create the VM, map RAM at slot 0, and set up the irqchip and PIT as
    /// configured.
    pub fn new(kvm: &HostKvm, config: VmConfig) -> Result<Self, KvmError> {
        if config.vcpus == 0 || config.vcpus > MAX_VCPUS {
            return Err(KvmError::Config(format!(
                "{} vCPUs requested: trapline runs 1 to {MAX_VCPUS}",
                config.vcpus
            )));
        }
        if config.mem_bytes == 0 || !config.mem_bytes.is_multiple_of(4096) {
            return Err(KvmError::Config(format!(
                "guest memory of {} bytes: must be a non-zero multiple of 4 KiB",
                config.mem_bytes
            )));
        }
        let fd = kvm
            .kvm()
            .create_vm()
            .map_err(KvmError::ioctl("KVM_CREATE_VM"))?;
        // Intel needs these for real-mode code (the kvm-unit-tests AP
        // trampoline); AMD ignores them.
        fd.set_identity_map_address(IDENTITY_MAP_ADDR)
            .map_err(KvmError::ioctl("KVM_SET_IDENTITY_MAP_ADDR"))?;
        fd.set_tss_address(TSS_ADDR as usize)
            .map_err(KvmError::ioctl("KVM_SET_TSS_ADDR"))?;
        irqchip::create(&fd, config.irqchip, config.pit)?;
        let memory =
            GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), config.mem_bytes as usize)])
                .map_err(|e| KvmError::Memory {
                    mib: config.mem_bytes >> 20,
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
            // SAFETY: the host range belongs to `memory`, which the Vm owns
            // and drops after the VM fd is closed (field order: `fd` first),
            // so KVM never holds a dangling host address.
            unsafe { fd.set_user_memory_region(desc) }
                .map_err(KvmError::ioctl("KVM_SET_USER_MEMORY_REGION (RAM)"))?;
        }
        let mut cpuid = kvm
            .kvm()
            .get_supported_cpuid(KVM_MAX_CPUID_ENTRIES)
            .map_err(KvmError::ioctl("KVM_GET_SUPPORTED_CPUID"))?;
        for &leaf in config.cpu.leaves_to_add() {
            if !cpuid.as_slice().iter().any(|e| e.function == leaf) {
                // A full table (KVM_MAX_CPUID_ENTRIES) keeps KVM's leaves;
                // the guest then reads no brand string, as before.
                let _ = cpuid.push(kvm_bindings::kvm_cpuid_entry2 {
                    function: leaf,
                    ..Default::default()
                });
            }
        }
        config.cpu.apply(cpuid.as_mut_slice());
        let slots = memory.num_regions() as u32;
        Ok(Self {
            fd: Arc::new(fd),
            memory,
            cpuid,
            config,
            next_slot: AtomicU32::new(slots),
        })
    }

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

    /// The CPU vendor string KVM reports.
    pub fn cpu_vendor(&self) -> Option<String> {
        cpuid::vendor(self.cpuid.as_slice())
    }

    /// Create vCPU `index` (APIC ID = index) with its CPUID. The boot vCPU
    /// (index 0) gets `boot` registers; the others are left in KVM's
    /// wait-for-SIPI state when there is an in-kernel irqchip, as on real
    /// hardware, and the guest starts them with INIT/SIPI.
    pub fn create_vcpu(&self, index: u32, boot: Option<&BootCpuState>) -> Result<VcpuFd, KvmError> {
        let vcpu = self
            .fd
            .create_vcpu(index as u64)
            .map_err(KvmError::ioctl(format!("KVM_CREATE_VCPU {index}")))?;
        let mut cpuid = self.cpuid.clone();
        cpuid::patch_for_vcpu(cpuid.as_mut_slice(), index);
        vcpu.set_cpuid2(&cpuid)
            .map_err(KvmError::ioctl(format!("KVM_SET_CPUID2 on vCPU {index}")))?;
        if let Some(boot) = boot {
            let mut sregs = vcpu.get_sregs().map_err(KvmError::ioctl("KVM_GET_SREGS"))?;
            boot.apply_sregs(&mut sregs);
            vcpu.set_sregs(&sregs)
                .map_err(KvmError::ioctl("KVM_SET_SREGS"))?;
            vcpu.set_regs(&boot.regs())
                .map_err(KvmError::ioctl("KVM_SET_REGS"))?;
            let fpu = kvm_bindings::kvm_fpu {
                fcw: 0x37f,
                mxcsr: 0x1f80,
                ..Default::default()
            };
            vcpu.set_fpu(&fpu).map_err(KvmError::ioctl("KVM_SET_FPU"))?;
        }
        Ok(vcpu)
    }
}
