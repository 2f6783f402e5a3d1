//! The PC: its devices and ACPI tables, the x86 boot protocols through the
//! loader, the absent interrupt controllers, ACPI S3.

mod boot;
mod build;
mod interrupts;
pub mod layout;
mod platform;
pub mod sleep;

pub(crate) use boot::{create_vcpus, load_image, prepare_boot, Boot};
pub(crate) use build::{add_devices, counter_khz, refuse, HAS_PIT, VCPUS_FIRST};
pub(crate) use platform::{KvmIrqLines, Platform};
pub(crate) use sleep::{resume, sleep_and_resume, ResumeAt};
/// Bytes the guest command line's slot holds, its NUL included.
pub use trapline_loader::arch::x86_64::layout::CMDLINE_CAPACITY;
