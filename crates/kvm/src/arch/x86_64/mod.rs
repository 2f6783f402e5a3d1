//! x86_64: CPUID models, boot registers (real, protected and long mode),
//! the PIC/IOAPIC/PIT, S3 resume state and the register dump.

pub mod cpu_state;
pub mod cpuid;
pub mod crash;
pub mod irqchip;
pub mod resume;
pub mod vm;
