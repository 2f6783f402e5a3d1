//! What a device learns when the driver sets DRIVER_OK: the negotiated
//! features, each queue as the driver placed it, the guest's memory map and
//! the eventfds of the notification and interrupt paths. A device that
//! serves its queues in user space ignores it; a kernel back end
//! (vhost-net) takes the data path over with it, and the transport then
//! stops serving that device's queues.

use vm_memory::{GuestMemoryBackend, GuestMemoryMmap, GuestMemoryRegion};
use vmm_sys_util::eventfd::EventFd;

/// One region of guest RAM as the host maps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemRegion {
    /// Guest-physical base.
    pub guest_phys: u64,
    /// Length in bytes.
    pub size: u64,
    /// Where the host (this process) maps it.
    pub host_addr: u64,
}

/// Every region of `mem`, in guest-physical order.
pub fn memory_map(mem: &GuestMemoryMmap) -> Vec<MemRegion> {
    mem.iter()
        .map(|r| MemRegion {
            guest_phys: r.start_addr().0,
            size: r.len(),
            host_addr: r.as_ptr() as u64,
        })
        .collect()
}

/// One split virtqueue as the driver set it up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueInfo {
    /// Entries (QueueNum).
    pub size: u16,
    /// Guest-physical address of the descriptor table.
    pub desc: u64,
    /// Guest-physical address of the available (driver) ring.
    pub avail: u64,
    /// Guest-physical address of the used (device) ring.
    pub used: u64,
    /// QueueReady.
    pub ready: bool,
    /// The next available index the device will read (the vring base a
    /// kernel back end starts from).
    pub next_avail: u16,
    /// The next used index the device will write.
    pub next_used: u16,
}

/// What the transport hands a device at DRIVER_OK.
pub struct Activation<'a> {
    /// The features the driver accepted (VERSION_1, EVENT_IDX when
    /// negotiated, the device's own bits).
    pub features: u64,
    /// Each queue, by index.
    pub queues: &'a [QueueInfo],
    /// The guest's RAM.
    pub memory: &'a [MemRegion],
    /// The same memory as the user-space queues use it.
    pub guest_memory: &'a GuestMemoryMmap,
    /// Per queue, the eventfd KVM signals when the driver writes that
    /// queue's index to QueueNotify (`--virtio-notify ioeventfd`); empty on
    /// the exit path.
    pub kicks: &'a [EventFd],
    /// The eventfd bound to the device's GSI as an irqfd
    /// (`--virtio-irq irqfd`); `None` on the line path.
    pub call: Option<&'a EventFd>,
}

/// Who moves the data once the device is live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DataPath {
    /// trapline serves the queues (exit or notify worker).
    #[default]
    User,
    /// A kernel back end took the queues: the transport serves none of
    /// them, and InterruptStatus reads "used buffers" whenever asked,
    /// since the kernel signals the irqfd without setting it.
    Kernel,
}

/// Why a device could not go live; the transport then sets
/// DEVICE_NEEDS_RESET and keeps the message for the run's report.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ActivateError(pub String);
