//! arm64: the VM as trapline's virt machine starts it (KVM_CREATE_VM with
//! the host's IPA size, NISV exits to user space when offered, guest RAM at
//! `VIRT_RAM_BASE`), one vCPU initialised for the preferred target with
//! PSCI 0.2 and its PSTATE and PC set, then the vGICv3 and its ITS
//! (trapline's own code: KVM wants them after the vCPUs), and a guest whose
//! first instruction stores to the PL011's address, where no device
//! answers: an MMIO exit to user space.

use kvm_bindings::{
    kvm_enable_cap, kvm_userspace_memory_region, kvm_vcpu_init, KVM_ARM_VCPU_PSCI_0_2,
    KVM_CAP_ARM_NISV_TO_USER,
};
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd, VmFd};
use trapline_kvm::{gic::Gic, regs};

use crate::ram::GuestRam;

/// The address the guest writes to: the PL011's, which the floor leaves
/// without a device.
pub const EXIT_ADDR: u64 = trapline_abi::VIRT_PL011_BASE;
/// `str x0, [x1]` (x1 holds [`EXIT_ADDR`]), then `b .`.
pub const GUEST: [u8; 8] = [0x20, 0x00, 0x00, 0xf9, 0x00, 0x00, 0x00, 0x14];

/// The VM.
pub struct Vm {
    fd: VmFd,
}

/// Create the VM with trapline's virt set-up around KVM_CREATE_VM.
pub fn create_vm(kvm: &Kvm, ram: &GuestRam) -> Result<Vm, String> {
    let ioctl = |what: &'static str| move |e| format!("{what}: {e}");
    let fd = kvm.create_vm().map_err(ioctl("KVM_CREATE_VM"))?;
    if fd.check_extension_raw(KVM_CAP_ARM_NISV_TO_USER.into()) > 0 {
        let cap = kvm_enable_cap {
            cap: KVM_CAP_ARM_NISV_TO_USER,
            ..Default::default()
        };
        // As trapline: used when offered, not needed by this guest.
        let _ = fd.enable_cap(&cap);
    }
    let slot = kvm_userspace_memory_region {
        slot: 0,
        flags: 0,
        guest_phys_addr: trapline_abi::VIRT_RAM_BASE,
        memory_size: ram.len() as u64,
        userspace_addr: ram.host_addr(),
    };
    // SAFETY: the host range is `ram`'s mapping, which outlives the VM
    // (main creates the RAM first, so drops it last).
    unsafe { fd.set_user_memory_region(slot) }.map_err(ioctl("KVM_SET_USER_MEMORY_REGION"))?;
    Ok(Vm { fd })
}

/// Write the guest, create and initialise vCPU 0, set its registers.
pub fn create_vcpu(_kvm: &Kvm, vm: &Vm, ram: &GuestRam) -> Result<VcpuFd, String> {
    let ioctl = |what: &'static str| move |e| format!("{what}: {e}");
    ram.write(0, &GUEST)?;
    let vcpu = vm.fd.create_vcpu(0).map_err(ioctl("KVM_CREATE_VCPU"))?;
    let mut init = kvm_vcpu_init::default();
    vm.fd
        .get_preferred_target(&mut init)
        .map_err(ioctl("KVM_ARM_PREFERRED_TARGET"))?;
    init.features[0] |= 1 << KVM_ARM_VCPU_PSCI_0_2;
    vcpu.vcpu_init(&init).map_err(ioctl("KVM_ARM_VCPU_INIT"))?;
    for (id, value) in [
        (regs::PSTATE, regs::PSTATE_EL1H_DAIF_MASKED),
        (regs::PC, trapline_abi::VIRT_RAM_BASE),
        (regs::x(1), EXIT_ADDR),
    ] {
        vcpu.set_one_reg(id, &value.to_le_bytes())
            .map_err(ioctl("KVM_SET_ONE_REG"))?;
    }
    Ok(vcpu)
}

/// What the platform keeps alive: the vGIC's device fds.
pub type Platform = Gic;

/// The vGICv3 and its ITS, by trapline's own code.
pub fn finish_platform(vm: &Vm) -> Result<Platform, String> {
    Gic::create(&vm.fd, 1).map_err(|e| e.to_string())
}

/// The guest's one exit: its store to [`EXIT_ADDR`].
pub fn expected_exit(exit: &VcpuExit) -> Result<(), String> {
    match exit {
        VcpuExit::MmioWrite(addr, _) if *addr == EXIT_ADDR => Ok(()),
        other => Err(format!(
            "the guest's first exit was {other:?}, not its store to {EXIT_ADDR:#x}"
        )),
    }
}
