//! From the configured image to vCPU 0's registers on `virt`: the image
//! (and initrd) loaded, every vCPU then the vGIC created and their MPIDRs
//! read, and, once the devices are on the buses, the device tree written
//! where the loader left room for it, with vCPU 0 pointed at it.

use trapline_kvm::{BootRegs, VcpuFd, Vm};
use trapline_loader::arch::aarch64::{load, LoadPlan, LoadRequest};

use super::platform;
use crate::config::MachineConfig;
use crate::MachineError;

/// Where the image went, and the vCPUs' MPIDRs for the device tree.
pub(crate) struct Boot {
    plan: LoadPlan,
    mpidrs: Vec<u64>,
}

/// Load the image (and initrd) into RAM.
pub(crate) fn load_image(vm: &Vm, config: &mut MachineConfig) -> Result<Boot, MachineError> {
    let request = LoadRequest {
        image: &config.kernel,
        initrd: config.initrd.as_deref(),
        fresh_memory: true,
    };
    let plan = load(vm.memory(), &request)?;
    Ok(Boot {
        plan,
        mpidrs: Vec::new(),
    })
}

/// Every vCPU, then the vGIC (KVM's order); their MPIDRs for the tree.
pub(crate) fn create_vcpus(vm: &Vm, boot: &mut Boot) -> Result<Vec<VcpuFd>, MachineError> {
    let vcpus = vm.create_vcpus()?;
    boot.mpidrs = vcpus
        .iter()
        .map(|v| vm.mpidr(v))
        .collect::<Result<_, _>>()?;
    Ok(vcpus)
}

/// The device tree, where the loader left room for it (above the image
/// and the initrd), and vCPU 0's registers pointing at it.
pub(crate) fn prepare_boot(
    vm: &Vm,
    vcpus: &[VcpuFd],
    boot: &Boot,
    config: &MachineConfig,
) -> Result<(), MachineError> {
    let mut dt = trapline_fdt::VirtMachine::qemu_virt(vm.config().mem_bytes, boot.mpidrs.clone());
    dt.virtio = platform::transports();
    dt.bootargs = config.append.trim().to_string();
    dt.initrd = boot.plan.initrd.as_ref().map(|r| trapline_fdt::Initrd {
        start: r.start,
        end: r.end,
    });
    let blob =
        trapline_fdt::write(&dt).map_err(|e| MachineError::Config(format!("device tree: {e}")))?;
    boot.plan.write_dtb(vm.memory(), &blob)?;
    let regs = BootRegs {
        pc: boot.plan.entry,
        dtb: boot.plan.dtb,
    };
    Ok(vm.set_boot_regs(&vcpus[0], regs)?)
}
