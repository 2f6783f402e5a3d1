//! arm64: the `virt` machine's vGICv3 (with its ITS), vCPU init with PSCI
//! 0.2 in KVM, boot registers through KVM_SET_ONE_REG, SPI numbers for
//! KVM_IRQ_LINE, forwarded SMCCC calls, and the register dump.

use kvm_ioctls::Cap;

pub mod clock;
pub mod cpu;
pub mod crash;
pub mod exit;
pub mod gic;
pub mod regs;
pub mod smccc;
pub mod vm;

pub use clock::clock_offset;
pub use cpu::CpuModel;
pub use exit::{decode_exit, finish_exit, handle_exit, ArchExit, VcpuAction};
pub use vm::{BootRegs, Vm};

/// The capabilities only arm64 has, by the names the lab reports.
pub const CAPABILITIES: &[(&str, Cap)] = &[("arm-psci-0.2", Cap::ArmPsci02)];
