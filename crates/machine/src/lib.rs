//! Assembles a trapline machine — guest memory, devices on frozen buses,
//! fast paths, vCPUs — and runs it to an [`Outcome`].
//!
//! ```text
//!  MachineConfig ──build──▶ Machine ──run──▶ RunReport { outcome, exits, lab readout }
//! ```

mod assemble;
mod boot;
mod config;
pub mod console;
mod error;
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

pub use assemble::{LabReadout, Machine};
pub use config::{
    LabFixtures, MachineConfig, MetricsSink, SeccompMode, VirtioConfig, VirtioIrq, VirtioNotify,
};
pub use error::MachineError;
pub use outcome::{status, Outcome};
pub use run::RunReport;
pub use stat::StatReport;
pub use virtio::VirtioReadout;

pub use trapline_devices::serial::SerialOutput;
pub use trapline_devices::ucall::UcallEvent;
pub use trapline_kvm::{CpuModel, HostKvm, Irqchip, KvmError};
