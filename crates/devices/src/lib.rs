//! trapline's device models. Every device implements
//! [`trapline_bus::BusDevice`] (`&self`, any width, any offset) and none of
//! them can be driven into a panic by a guest.

pub mod absent;
pub mod acpi;
pub mod acpi_sleep;
pub mod debug_exit;
pub mod fw_cfg;
#[cfg(test)]
mod hostile;
pub mod i8042;
pub mod lapic_fallback;
pub mod mptable;
pub mod pc_testdev;
pub mod pci;
pub mod pl011;
pub mod pl031;
pub mod pm_timer;
pub mod power;
pub mod rtc;
pub mod serial;
pub mod ucall;
pub mod virtio;
