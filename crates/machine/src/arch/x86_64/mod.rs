//! The PC: its devices and ACPI tables, the x86 boot protocols through the
//! loader, the absent interrupt controllers, ACPI S3.

pub mod boot;
pub mod build;
pub mod interrupts;
pub mod layout;
pub mod platform;
pub mod sleep;
