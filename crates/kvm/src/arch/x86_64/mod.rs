//! x86_64: CPUID models, boot registers (real, protected and long mode),
//! the PIC/IOAPIC/PIT, S3 resume state, the IOAPIC EOI exit and the
//! register dump.

use kvm_ioctls::Cap;

pub mod clock;
pub mod cpu_state;
pub mod cpuid;
pub mod crash;
pub mod exit;
pub mod irqchip;
pub mod resume;
pub mod vm;

pub use clock::clock_offset;
pub use cpu_state::{BootCpuState, CpuMode, Segment};
pub use cpuid::{CpuBase, CpuModel};
pub use exit::{decode_exit, finish_exit, handle_exit, ArchExit, VcpuAction};
pub use resume::ResumeAt;
pub use vm::{Vm, IDENTITY_MAP_ADDR, TSS_ADDR};

/// The capabilities only x86 has, by the names the lab reports.
pub const CAPABILITIES: &[(&str, Cap)] = &[
    ("pit2", Cap::Pit2),
    ("x2apic-api", Cap::X2ApicApi),
    ("split-irqchip", Cap::SplitIrqchip),
];
