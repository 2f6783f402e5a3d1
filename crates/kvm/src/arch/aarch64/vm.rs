//! The arm64 VM: guest RAM from `VIRT_RAM_BASE`, every vCPU created first,
//! then the vGICv3 and its ITS, then each vCPU's KVM_ARM_VCPU_INIT (PSCI
//! 0.2 in KVM; vCPUs other than 0 powered off until the guest's CPU_ON),
//! then the boot registers of vCPU 0.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use kvm_bindings::{
    kvm_enable_cap, kvm_userspace_memory_region, kvm_vcpu_init, KVM_ARM_VCPU_POWER_OFF,
    KVM_ARM_VCPU_PSCI_0_2, KVM_CAP_ARM_NISV_TO_USER,
};
use kvm_ioctls::{VcpuFd, VmFd};
use vm_memory::{GuestAddress, GuestMemoryBackend, GuestMemoryMmap, GuestMemoryRegion};

use super::cpu::CpuModel;
use super::gic::Gic;
use super::regs;
use crate::{HostKvm, Irqchip, KvmError};

pub use trapline_abi::MAX_VCPUS;

/// How to build a VM.
#[derive(Clone, Debug)]
pub struct VmConfig {
    /// Guest RAM from `VIRT_RAM_BASE`, in bytes (a multiple of 64 KiB, the
    /// largest page size an arm64 host may use).
    pub mem_bytes: u64,
    /// Number of vCPUs (1..=MAX_VCPUS).
    pub vcpus: u32,
    /// The interrupt controller: only [`Irqchip::Kernel`] (the vGICv3).
    pub irqchip: Irqchip,
    /// No PIT on arm64: must be false.
    pub pit: bool,
    /// `--cpu`: the host's.
    pub cpu: CpuModel,
}

/// Where vCPU 0 starts (arm64 booting.rst: x0 = the device tree's
/// address, x1-x3 = 0, EL1h, interrupts masked, MMU off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootRegs {
    /// The entry point (a GPA: the MMU is off).
    pub pc: u64,
    /// The device tree's GPA, passed in x0.
    pub dtb: u64,
}

/// A KVM VM with its guest memory and (once the vCPUs exist) its vGIC.
pub struct Vm {
    gic: std::sync::OnceLock<Gic>,
    fd: Arc<VmFd>,
    memory: GuestMemoryMmap,
    config: VmConfig,
    next_slot: AtomicU32,
    nisv_to_user: bool,
}

impl Vm {
    /// Create the VM and map RAM at `VIRT_RAM_BASE`.
    pub fn new(kvm: &HostKvm, config: VmConfig) -> Result<Self, KvmError> {
        if config.vcpus == 0 || config.vcpus > MAX_VCPUS {
            return Err(KvmError::Config(format!(
                "{} vCPUs requested: trapline runs 1 to {MAX_VCPUS}",
                config.vcpus
            )));
        }
        if config.mem_bytes == 0 || !config.mem_bytes.is_multiple_of(0x1_0000) {
            return Err(KvmError::Config(format!(
                "guest memory of {} bytes: must be a non-zero multiple of 64 KiB",
                config.mem_bytes
            )));
        }
        if config.irqchip != Irqchip::Kernel || config.pit {
            return Err(KvmError::Config(
                "--irqchip split|none and the PIT are x86-only: the virt machine has KVM's vGICv3"
                    .into(),
            ));
        }
        let fd = kvm
            .kvm()
            .create_vm()
            .map_err(KvmError::ioctl("KVM_CREATE_VM"))?;
        // An access KVM cannot decode then exits with its address
        // (KVM_EXIT_ARM_NISV) instead of failing KVM_RUN with ENOSYS.
        let nisv_to_user = fd.check_extension_raw(KVM_CAP_ARM_NISV_TO_USER.into()) > 0
            && fd
                .enable_cap(&kvm_enable_cap {
                    cap: KVM_CAP_ARM_NISV_TO_USER,
                    ..Default::default()
                })
                .is_ok();
        let base = trapline_abi::VIRT_RAM_BASE;
        let memory =
            GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(base), config.mem_bytes as usize)])
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
        let slots = memory.num_regions() as u32;
        Ok(Self {
            gic: std::sync::OnceLock::new(),
            fd: Arc::new(fd),
            memory,
            config,
            next_slot: AtomicU32::new(slots),
            nisv_to_user,
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

    /// Whether undecodable accesses exit with KVM_EXIT_ARM_NISV.
    pub fn nisv_to_user(&self) -> bool {
        self.nisv_to_user
    }

    /// Create every vCPU, then the vGICv3 and ITS, then initialize each
    /// vCPU (PSCI 0.2; all but vCPU 0 powered off). Irqfds may be
    /// registered only after this.
    pub fn create_vcpus(&self) -> Result<Vec<VcpuFd>, KvmError> {
        let n = self.config.vcpus;
        let vcpus = (0..n)
            .map(|i| {
                self.fd
                    .create_vcpu(i.into())
                    .map_err(KvmError::ioctl(format!("KVM_CREATE_VCPU {i}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let gic = Gic::create(&self.fd, n)?;
        let _ = self.gic.set(gic);
        let mut init = kvm_vcpu_init::default();
        self.fd
            .get_preferred_target(&mut init)
            .map_err(KvmError::ioctl("KVM_ARM_PREFERRED_TARGET"))?;
        for (i, vcpu) in vcpus.iter().enumerate() {
            let mut kvi = init;
            kvi.features[0] |= 1 << KVM_ARM_VCPU_PSCI_0_2;
            if i > 0 {
                kvi.features[0] |= 1 << KVM_ARM_VCPU_POWER_OFF;
            }
            vcpu.vcpu_init(&kvi)
                .map_err(KvmError::ioctl(format!("KVM_ARM_VCPU_INIT on vCPU {i}")))?;
        }
        Ok(vcpus)
    }

    /// Set the boot vCPU's registers.
    pub fn set_boot_regs(&self, vcpu: &VcpuFd, boot: BootRegs) -> Result<(), KvmError> {
        for (id, value, what) in [
            (regs::PSTATE, regs::PSTATE_EL1H_DAIF_MASKED, "PSTATE"),
            (regs::PC, boot.pc, "PC"),
            (regs::x(0), boot.dtb, "x0"),
            (regs::x(1), 0, "x1"),
            (regs::x(2), 0, "x2"),
            (regs::x(3), 0, "x3"),
        ] {
            vcpu.set_one_reg(id, &value.to_le_bytes())
                .map_err(KvmError::ioctl(format!("KVM_SET_ONE_REG ({what})")))?;
        }
        Ok(())
    }

    /// A vCPU's MPIDR_EL1 affinity (what its device tree cpu node's `reg`
    /// holds), read back from KVM.
    pub fn mpidr(&self, vcpu: &VcpuFd) -> Result<u64, KvmError> {
        let mut b = [0u8; 8];
        vcpu.get_one_reg(regs::MPIDR_EL1, &mut b)
            .map_err(KvmError::ioctl("KVM_GET_ONE_REG (MPIDR_EL1)"))?;
        Ok(u64::from_le_bytes(b) & regs::MPIDR_AFFINITY_MASK)
    }

    /// Raise or lower SPI `spi` (KVM_IRQ_LINE).
    pub fn set_spi(&self, spi: u32, level: bool) -> Result<(), KvmError> {
        self.fd
            .set_irq_line(super::gic::spi_irq_line(spi), level)
            .map_err(KvmError::ioctl(format!("KVM_IRQ_LINE (SPI {spi})")))
    }
}
