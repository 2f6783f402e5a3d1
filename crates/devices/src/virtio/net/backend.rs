//! The one interface every virtio-net back end implements: the device
//! hands it Ethernet frames the guest transmitted and asks it for frames
//! to receive (the 12-byte virtio-net header is the device's business,
//! never the back end's), or, at DRIVER_OK, lets it take the whole data
//! path over (vhost-net).
//!
//! ```text
//!  TX chain ─▶ Net (header checked, stripped) ─▶ transmit(frame)
//!  RX chain ◀─ Net (header written)           ◀─ receive(buf)
//!  DRIVER_OK ─▶ activate(features, queues, memory map, kick/call eventfds)
//!               └─▶ DataPath::Kernel: no user-space queue service at all
//! ```

use std::os::fd::BorrowedFd;

use crate::virtio::activate::{ActivateError, Activation, DataPath};

/// Why a transmitted frame did not leave.
#[derive(Debug, thiserror::Error)]
pub enum TxError {
    /// The back end has no room now (a full TAP queue, the echo backlog):
    /// the frame is dropped, as a NIC drops on a full ring.
    #[error("the back end has no room for the frame")]
    Busy,
    /// The back end failed (TAP write error).
    #[error("the back end failed: {0}")]
    Failed(#[from] std::io::Error),
}

/// A virtio-net back end.
pub trait NetBackend: Send {
    /// Its name in counters and messages (`echo`, `tap:NAME`, `vhost`).
    fn name(&self) -> String;

    /// Send one Ethernet frame (at most [`super::MAX_FRAME`] bytes, at
    /// least [`super::MIN_FRAME`]; no virtio-net header).
    fn transmit(&mut self, frame: &[u8]) -> Result<(), TxError>;

    /// The next frame for the guest, copied into `buf` (which holds
    /// [`super::RX_SCRATCH`] bytes); its length, or `None` when no frame
    /// is waiting. Never blocks. A frame longer than `buf` is truncated to
    /// it; the device drops frames above [`super::MAX_FRAME`].
    fn receive(&mut self, buf: &mut [u8]) -> Option<usize>;

    /// Whether a frame is known to be waiting without asking the outside
    /// (the echo back end's backlog); `false` when only [`Self::rx_fd`]
    /// can tell.
    fn rx_pending(&self) -> bool {
        false
    }

    /// An fd that turns readable when frames arrive from outside (a TAP);
    /// the machine's virtio worker waits on it (edge-triggered) and then
    /// serves the receive queue. `None`: frames only come from
    /// [`Self::transmit`] (echo) or a kernel back end.
    fn rx_fd(&self) -> Option<BorrowedFd<'_>> {
        None
    }

    /// Whether [`Self::activate`] takes the data path over: the machine
    /// then requires the ioeventfd and irqfd paths, hands their eventfds
    /// to the device and gives none of its queues to the user-space worker.
    fn takes_over(&self) -> bool {
        false
    }

    /// DRIVER_OK. A user-space back end returns [`DataPath::User`]; a
    /// kernel one programs itself from `activation` and returns
    /// [`DataPath::Kernel`].
    fn activate(&mut self, activation: &Activation<'_>) -> Result<DataPath, ActivateError> {
        let _ = activation;
        Ok(DataPath::User)
    }

    /// The driver reset the device (status 0): stop what `activate`
    /// started and drop frames in flight.
    fn reset(&mut self) {}
}
