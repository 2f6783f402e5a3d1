//! The VM: guest memory, irqchip, vCPU creation.

use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use kvm_bindings::{CpuId, KVM_MAX_CPUID_ENTRIES};
use kvm_ioctls::{VcpuFd, VmFd};
use vm_memory::{GuestMemoryBackend, GuestMemoryMmap};

use super::cpu_state::BootCpuState;
use super::{cpuid, irqchip};
use crate::{HostKvm, KvmError, VmConfig};

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

/// A KVM VM with its guest memory.
pub struct Vm {
    pub(crate) fd: Arc<VmFd>,
    pub(crate) memory: GuestMemoryMmap,
    cpuid: CpuId,
    pub(crate) config: VmConfig,
    pub(crate) next_slot: AtomicU32,
}

impl Vm {
    /// Create the VM, map RAM at slot 0, and set up the irqchip and PIT as
    /// configured.
    pub fn new(kvm: &HostKvm, config: VmConfig) -> Result<Self, KvmError> {
        crate::vm_common::check_size(config.vcpus, config.mem_bytes, 4096, "4 KiB")?;
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
        let memory = crate::vm_common::map_ram(&fd, 0, config.mem_bytes)?;
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
