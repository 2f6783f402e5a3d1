//! Assembles a trapline machine — guest memory, devices on frozen buses,
//! fast paths, vCPUs — and runs it to an [`Outcome`].
//!
//! ```text
//!  MachineConfig ──build──▶ Machine ──run──▶ RunReport { outcome, exits, extension }
//! ```
//!
//! The machine knows only the platform. Whoever needs more devices or fast
//! paths on it (the lab) passes a [`MachineExtension`] in the config.

mod assemble;
mod boot;
mod config;
pub mod console;
mod error;
mod extension;
pub mod footprint;
mod interrupts;
pub mod kvm_stats;
pub mod layout;
mod outcome;
mod platform;
mod run;
pub mod sleep;
pub mod stat;
pub mod virtio;

pub use assemble::Machine;
pub use config::{MachineConfig, MetricsSink, SeccompMode, VirtioConfig, VirtioIrq, VirtioNotify};
pub use error::MachineError;
pub use extension::{ExtensionContext, ExtensionHandle, MachineExtension};
pub use outcome::{status, Outcome};
pub use run::RunReport;
pub use stat::StatReport;
pub use virtio::VirtioReadout;

pub use trapline_devices::serial::SerialOutput;
pub use trapline_devices::ucall::UcallEvent;
pub use trapline_kvm::{CpuModel, HostKvm, Irqchip, KvmError};
