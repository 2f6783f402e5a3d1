//! QEMU's `virt` machine (low memory map, `trapline_abi::virt`): RAM from
//! `VIRT_RAM_BASE`, KVM's vGICv3 with an ITS, PSCI 0.2 in KVM, the PL011
//! console, trapline's ucall and debug-exit pages, and the device tree.

pub mod build;
pub mod layout;
pub mod platform;
