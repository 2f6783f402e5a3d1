//! Fast paths: ways a guest notification is served without a full exit to
//! trapline's device models. Each registration is an RAII object: dropping
//! it removes it from KVM, so a fast path can never outlive the thing that
//! asked for it.
//!
//! - [`IoEvent`]: a KVM ioeventfd (wildcard or datamatch, PIO or MMIO).
//! - [`IrqFd`]: an eventfd bound to a GSI with KVM_IRQFD.
//! - [`CoalescedZone`] and [`CoalescedRing`]: writes KVM queues in a shared
//!   ring instead of exiting; trapline drains the ring before it dispatches
//!   any other exit so device-visible order holds.
//! - [`ReadOnlyRegion`]: host memory mapped as a KVM_MEM_READONLY memslot:
//!   guest reads cost a RAM read, guest writes exit as MMIO.

mod coalesced;
mod error;
mod ioevent;
mod irqfd;
mod readonly;

pub use coalesced::{CoalescedEntry, CoalescedRing, CoalescedZone};
pub use error::FastpathError;
pub use ioevent::{Datamatch, IoEvent, Space};
pub use irqfd::IrqFd;
pub use readonly::ReadOnlyRegion;
