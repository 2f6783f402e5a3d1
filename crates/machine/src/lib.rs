//! Assembles a trapline machine — guest memory, devices on frozen buses,
//! fast paths, vCPUs — and runs it to an [`Outcome`].
//!
//! ```text
//!  MachineConfig ──build──▶ Machine ──run──▶ RunReport { outcome, exits, extension }
//! ```
//!
//! The machine knows only the platform. Whoever needs more devices or fast
//! paths on it (the lab) passes a [`MachineExtension`] in the config.
//!
//! The platform is the architecture's (`arch::x86_64`: the PC; `arch::aarch64`:
//! QEMU's `virt`); the assembly ([`Machine::build`]), run loop, statistics,
//! console and extension point are shared.

/// std's `eprintln!` for every module of this crate (declared before them
/// all): the line in words, and no panic when stderr is gone (see
/// [`words::to_stderr`]).
macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::words::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod arch;
mod assemble;
mod config;
pub mod console;
mod deferred;
mod error;
mod extension;
pub mod footprint;
mod image;
pub mod kvm_stats;
mod outcome;
mod pci;
mod run;
pub mod signals;
pub mod stat;
pub mod virtio;

// The architecture's names: `layout` on both, and its own (x86: `sleep`,
// `CMDLINE_CAPACITY`); the crate-private platform pieces with them.
pub use arch::*;

pub use assemble::Machine;
pub use config::{
    AcpiMode, MachineConfig, MetricsSink, NetConfig, SeccompMode, VirtioConfig, VirtioIrq,
    VirtioNotify,
};
pub use error::MachineError;
pub use extension::{ExtensionContext, ExtensionHandle, MachineExtension};
pub use image::{ImageBytes, ImageReadError, MappedFile};
pub use outcome::{status, Outcome};
pub use run::RunReport;
pub use stat::{StatReport, StatSort, TableOptions};
pub use trapline_stdio::words;
pub use virtio::{NetReadout, VirtioReadout};

pub use trapline_devices::serial::SerialOutput;
pub use trapline_devices::ucall::UcallEvent;
pub use trapline_kvm::{CpuModel, HostKvm, Irqchip, KvmError};
