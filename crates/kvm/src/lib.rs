//! trapline's KVM core: opening /dev/kvm, the VM with its guest memory and
//! in-kernel irqchip, vCPU creation (CPUID, boot registers), and the KVM_RUN
//! loop with its kick. What differs per architecture lives in [`arch`]. [`stats_fd`] reads KVM's own binary statistics.
//!
//! The run loop ([`run::run_vcpu`]) is the hot path: it takes no lock,
//! allocates nothing and logs nothing per exit. It hands each exit to
//! [`dispatch::dispatch`], which needs no KVM fd (its tests feed it
//! synthetic exits). What both work on, the vCPU's [`VcpuContext`] and its
//! [`VcpuEnd`], lives in [`vcpu`]. A vCPU is stopped by a real-time signal
//! whose handler sets `immediate_exit`, never by polling.

pub mod arch;
pub mod crash;
pub mod dispatch;
mod error;
pub mod irqchip;
pub mod kick;
pub mod run;
pub mod stats_fd;
mod system;
pub mod vcpu;

#[cfg(target_arch = "aarch64")]
pub use arch::aarch64::{cpu, gic, regs, smccc};
#[cfg(target_arch = "aarch64")]
pub use arch::vm::{BootRegs, Vm, VmConfig};
#[cfg(target_arch = "x86_64")]
pub use arch::vm::{Vm, VmConfig, IDENTITY_MAP_ADDR, TSS_ADDR};
#[cfg(target_arch = "x86_64")]
pub use arch::x86_64::{cpu_state, cpuid, resume};
#[cfg(target_arch = "aarch64")]
pub use cpu::CpuModel;
#[cfg(target_arch = "x86_64")]
pub use cpu_state::{BootCpuState, CpuMode, Segment};
#[cfg(target_arch = "x86_64")]
pub use cpuid::{CpuBase, CpuModel};
pub use crash::CpuDump;
pub use dispatch::{dispatch, Crash, ExitOutcome};
pub use error::KvmError;
pub use irqchip::Irqchip;
#[cfg(target_arch = "x86_64")]
pub use resume::ResumeAt;
pub use run::run_vcpu;
pub use stats_fd::{StatsError, StatsFd, StatsSnapshot};
pub use system::{HostKvm, KVM_CAP_IOEVENTFD_ANY_LENGTH, KVM_PATH};
pub use vcpu::{VcpuContext, VcpuEnd};

pub use kvm_ioctls::{VcpuFd, VmFd};
