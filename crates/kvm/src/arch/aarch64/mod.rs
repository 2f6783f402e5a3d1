//! arm64: the `virt` machine's vGICv3 (with its ITS), vCPU init with PSCI
//! 0.2 in KVM, boot registers through KVM_SET_ONE_REG, SPI numbers for
//! KVM_IRQ_LINE, and the register dump.

pub mod cpu;
pub mod crash;
pub mod gic;
pub mod regs;
pub mod smccc;
pub mod vm;

/// KVM_EXIT_ARM_NISV: an access KVM cannot decode, given to user space
/// when the VM enabled KVM_CAP_ARM_NISV_TO_USER (kvm-ioctls reports it as
/// `VcpuExit::Unsupported` with this number).
pub const ARM_NISV_EXIT: u32 = kvm_bindings::KVM_EXIT_ARM_NISV;
