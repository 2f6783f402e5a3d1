//! x86_64: the VM as trapline's PC machine starts it (the TSS and identity
//! map addresses, the in-kernel irqchip and PIT, one memory slot from GPA 0,
//! the CPUID KVM supports), one vCPU in real mode at [`ENTRY`] with the
//! registers trapline sets (sregs, regs, FPU), and a guest whose first
//! instruction, `out dx, al`, exits to user space.

use kvm_bindings::{
    kvm_fpu, kvm_pit_config, kvm_regs, kvm_userspace_memory_region, CpuId, KVM_MAX_CPUID_ENTRIES,
    KVM_PIT_SPEAKER_DUMMY,
};
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd, VmFd};

use crate::ram::GuestRam;

/// Where the guest starts (a real-mode address in guest RAM).
pub const ENTRY: u64 = 0x1000;
/// A port no in-kernel device claims: the write exits to user space.
pub const EXIT_PORT: u16 = 0x10;
/// `out dx, al; hlt`.
pub const GUEST: [u8; 2] = [0xee, 0xf4];

/// The VM and the CPUID table its vCPU gets.
pub struct Vm {
    fd: VmFd,
    cpuid: CpuId,
}

/// Create the VM with trapline's PC set-up around KVM_CREATE_VM.
pub fn create_vm(kvm: &Kvm, ram: &GuestRam) -> Result<Vm, String> {
    let ioctl = |what: &'static str| move |e| format!("{what}: {e}");
    let fd = kvm.create_vm().map_err(ioctl("KVM_CREATE_VM"))?;
    fd.set_identity_map_address(trapline_abi::KVM_IDENTITY_MAP_ADDR)
        .map_err(ioctl("KVM_SET_IDENTITY_MAP_ADDR"))?;
    fd.set_tss_address(trapline_abi::KVM_TSS_ADDR as usize)
        .map_err(ioctl("KVM_SET_TSS_ADDR"))?;
    fd.create_irq_chip().map_err(ioctl("KVM_CREATE_IRQCHIP"))?;
    let pit = kvm_pit_config {
        flags: KVM_PIT_SPEAKER_DUMMY,
        ..Default::default()
    };
    fd.create_pit2(pit).map_err(ioctl("KVM_CREATE_PIT2"))?;
    let slot = kvm_userspace_memory_region {
        slot: 0,
        flags: 0,
        guest_phys_addr: 0,
        memory_size: ram.len() as u64,
        userspace_addr: ram.host_addr(),
    };
    // SAFETY: the host range is `ram`'s mapping, which outlives the VM
    // (main creates the RAM first, so drops it last).
    unsafe { fd.set_user_memory_region(slot) }.map_err(ioctl("KVM_SET_USER_MEMORY_REGION"))?;
    let cpuid = kvm
        .get_supported_cpuid(KVM_MAX_CPUID_ENTRIES)
        .map_err(ioctl("KVM_GET_SUPPORTED_CPUID"))?;
    Ok(Vm { fd, cpuid })
}

/// Write the guest, create vCPU 0 and set its CPUID and registers.
pub fn create_vcpu(_kvm: &Kvm, vm: &Vm, ram: &GuestRam) -> Result<VcpuFd, String> {
    let ioctl = |what: &'static str| move |e| format!("{what}: {e}");
    ram.write(ENTRY as usize, &GUEST)?;
    let vcpu = vm.fd.create_vcpu(0).map_err(ioctl("KVM_CREATE_VCPU"))?;
    vcpu.set_cpuid2(&vm.cpuid)
        .map_err(ioctl("KVM_SET_CPUID2"))?;
    let mut sregs = vcpu.get_sregs().map_err(ioctl("KVM_GET_SREGS"))?;
    sregs.cs.base = 0;
    sregs.cs.selector = 0;
    vcpu.set_sregs(&sregs).map_err(ioctl("KVM_SET_SREGS"))?;
    let regs = kvm_regs {
        rip: ENTRY,
        rflags: 2,
        rdx: EXIT_PORT.into(),
        ..Default::default()
    };
    vcpu.set_regs(&regs).map_err(ioctl("KVM_SET_REGS"))?;
    let fpu = kvm_fpu {
        fcw: 0x37f,
        mxcsr: 0x1f80,
        ..Default::default()
    };
    vcpu.set_fpu(&fpu).map_err(ioctl("KVM_SET_FPU"))?;
    Ok(vcpu)
}

/// What the platform keeps alive: nothing on the PC, whose interrupt
/// controllers were created with the VM.
pub struct Platform;

/// Nothing to do: see [`Platform`].
pub fn finish_platform(_vm: &Vm) -> Result<Platform, String> {
    Ok(Platform)
}

/// The guest's one exit: its write to [`EXIT_PORT`].
pub fn expected_exit(exit: &VcpuExit) -> Result<(), String> {
    match exit {
        VcpuExit::IoOut(port, _) if *port == EXIT_PORT => Ok(()),
        other => Err(format!(
            "the guest's first exit was {other:?}, not its write to port {EXIT_PORT:#x}"
        )),
    }
}
