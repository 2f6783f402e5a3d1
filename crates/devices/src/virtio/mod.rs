//! virtio over MMIO (virtio 1.x, register layout version 2) and the
//! devices behind it.
//!
//! ```text
//!  guest MMIO ─▶ VirtioMmio (registers, status, features, queues)
//!                  │ QueueNotify: exit (vCPU thread) or ioeventfd (NotifyWorker)
//!                  ▼
//!               VirtioDevice::handle(chain)  ─▶  used ring ─▶ VirtioInterrupt (line | irqfd)
//! ```
//!
//! The split virtqueue is rust-vmm's `virtio-queue`: this module never walks
//! a ring by hand. Whatever the guest puts in the rings, the worst outcome
//! is DEVICE_NEEDS_RESET or a dropped request.

pub mod activate;
pub mod block;
pub mod console;
pub mod empty;
pub mod interrupt;
pub mod mmio;
pub mod net;
pub mod queue_regs;
pub mod status;
pub mod testdev;
pub mod worker;

use virtio_queue::DescriptorChain;
use vm_memory::GuestMemoryMmap;

pub use activate::{ActivateError, Activation, DataPath, MemRegion, QueueInfo};
pub use console::ChrTestdev;
pub use empty::EmptyTransport;
pub use interrupt::VirtioInterrupt;
pub use mmio::{
    VirtioMmio, DATA_PATH_OFFSETS, INTERRUPT_ACK_OFFSET, INTERRUPT_STATUS_OFFSET, MMIO_LEN,
    QUEUE_NOTIFY_OFFSET,
};
pub use worker::{NotifyWorker, ReadySource};

/// Feature bit: the device conforms to virtio 1.x (mandatory over MMIO v2).
pub const VIRTIO_F_VERSION_1: u32 = virtio_bindings::virtio_config::VIRTIO_F_VERSION_1;
/// Feature bit: used/avail event indices (notification suppression).
pub const VIRTIO_RING_F_EVENT_IDX: u32 = virtio_bindings::virtio_ring::VIRTIO_RING_F_EVENT_IDX;

/// A descriptor chain as the transport hands it to a device.
pub type Chain<'a> = DescriptorChain<&'a GuestMemoryMmap>;

/// What a device did with one descriptor chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handled {
    /// Completed: put the head on the used ring with this many bytes
    /// written into the chain.
    Used(u32),
    /// The chain is malformed beyond what the device protocol can report
    /// (no room for a status byte, buffers outside guest RAM): the request
    /// is dropped (used with length 0) and the device asks for a reset.
    Broken,
    /// Not now: the chain stays on the ring and the queue's pass ends
    /// (a receive buffer while no frame is waiting).
    Defer,
}

/// A device model behind the MMIO transport.
pub trait VirtioDevice: Send {
    /// Virtio device ID (1 = network, 2 = block).
    fn device_type(&self) -> u32;
    /// Device-specific feature bits offered (the transport adds
    /// VERSION_1 and, when enabled, EVENT_IDX).
    fn features(&self) -> u64;
    /// Maximum size of each queue (powers of two).
    fn queue_max_sizes(&self) -> &[u16];
    /// Read the device configuration space; `data` is filled entirely
    /// (zeros beyond the end).
    fn read_config(&self, offset: u64, data: &mut [u8]);
    /// Handle one chain popped from queue `queue`.
    fn handle(&mut self, queue: usize, chain: Chain<'_>, mem: &GuestMemoryMmap) -> Handled;
    /// Queues (bit mask) the device has work for without a notification,
    /// asked after each pass: virtio-net's echo fills the receive queue
    /// from what it transmitted.
    fn pending_queues(&self) -> u64 {
        0
    }
    /// DRIVER_OK: the device may take its data path elsewhere (a kernel
    /// back end); [`DataPath::User`] keeps the transport serving queues.
    fn activate(&mut self, activation: &Activation<'_>) -> Result<DataPath, ActivateError> {
        let _ = activation;
        Ok(DataPath::User)
    }
    /// The driver reset the device.
    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests;
