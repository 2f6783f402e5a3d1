//! trapline's KVM core: opening /dev/kvm, the VM with its guest memory and
//! in-kernel irqchip, vCPU creation (CPUID, boot registers), and the KVM_RUN
//! loop with its kick. What differs per architecture lives in [`arch`]. [`stats_fd`] reads KVM's own binary statistics.
//!
//! The run loop ([`run::run_vcpu`]) is the hot path: it takes no lock,
//! allocates nothing and logs nothing per exit. It decodes each exit once
//! ([`exit::Exit`]) and hands it to [`dispatch::dispatch`], which needs no
//! KVM fd (its tests feed it synthetic exits) and passes the exits only one
//! architecture has to that architecture's hook (`arch::handle_exit`). What both work on, the vCPU's [`VcpuContext`] and its
//! [`VcpuEnd`], lives in [`vcpu`]. A vCPU is stopped by a real-time signal
//! whose handler sets `immediate_exit`, never by polling.

pub mod arch;
pub mod crash;
pub mod dispatch;
mod error;
pub mod exit;
pub mod irqchip;
pub mod kick;
pub mod run;
pub mod stamps;
pub mod stats_fd;
mod system;
pub mod vcpu;
mod vm_common;

// The architecture's names at the crate root: `Vm`, `VmConfig`,
// `CpuModel` on both, and its own pieces (x86: `cpuid`, `cpu_state`,
// `resume`, ...; arm64: `gic`, `regs`, `smccc`, `BootRegs`, ...). The
// crate's own `crash` and `irqchip` modules take precedence over the
// architecture's of the same name.
pub use arch::*;
pub use crash::CpuDump;
pub use dispatch::{dispatch, Crash, ExitOutcome};
pub use error::KvmError;
pub use exit::Exit;
pub use irqchip::Irqchip;
pub use run::run_vcpu;
pub use stamps::StampMailbox;
pub use stats_fd::{StatsError, StatsFd, StatsSnapshot};
pub use system::{HostKvm, KVM_CAP_IOEVENTFD_ANY_LENGTH, KVM_PATH};
pub use vcpu::{VcpuContext, VcpuEnd};
pub use vm_common::VmConfig;

pub use kvm_ioctls::{VcpuFd, VmFd};
