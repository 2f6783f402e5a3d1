//! The arm64 VM: guest RAM from `VIRT_RAM_BASE`, every vCPU created first,
//! then the vGICv3 and its ITS, then each vCPU's KVM_ARM_VCPU_INIT (PSCI
//! 0.2 in KVM; vCPUs other than 0 powered off until the guest's CPU_ON),
//! then the boot registers of vCPU 0.

use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use kvm_bindings::{
    kvm_enable_cap, kvm_vcpu_init, KVM_ARM_VCPU_POWER_OFF, KVM_ARM_VCPU_PSCI_0_2,
    KVM_CAP_ARM_NISV_TO_USER,
};
use kvm_ioctls::{VcpuFd, VmFd};
use vm_memory::{GuestMemoryBackend, GuestMemoryMmap};

use super::gic::Gic;
use super::regs;
use crate::{HostKvm, Irqchip, KvmError, VmConfig};

pub use trapline_abi::MAX_VCPUS;

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
    pub(crate) fd: Arc<VmFd>,
    pub(crate) memory: GuestMemoryMmap,
    pub(crate) config: VmConfig,
    pub(crate) next_slot: AtomicU32,
    nisv_to_user: bool,
}

impl Vm {
    /// Create the VM and map RAM at `VIRT_RAM_BASE`.
    pub fn new(kvm: &HostKvm, config: VmConfig) -> Result<Self, KvmError> {
        crate::vm_common::check_size(config.vcpus, config.mem_bytes, 0x1_0000, "64 KiB")?;
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
        let memory = crate::vm_common::map_ram(&fd, base, config.mem_bytes)?;
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
