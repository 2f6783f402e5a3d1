//! QEMU's `virt` machine (low memory map, `trapline_abi::virt`): RAM from
//! `VIRT_RAM_BASE`, KVM's vGICv3 with an ITS, PSCI 0.2 in KVM, the PL011
//! console, trapline's ucall and debug-exit pages, and the device tree.

mod boot;
mod build;
pub mod layout;
mod platform;
mod sleep;

pub(crate) use boot::{create_vcpus, load_image, prepare_boot, Boot};
pub(crate) use build::{add_devices, counter_khz, refuse, HAS_PIT, VCPUS_FIRST};
pub(crate) use platform::{KvmIrqLines, Platform};
pub(crate) use sleep::{resume, sleep_and_resume, ResumeAt};
