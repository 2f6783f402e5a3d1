//! virtio-net (device type 1): one receive queue (0) and one transmit
//! queue (1), a MAC address and a link that is always up, in front of a
//! [`NetBackend`] (`echo`, `tap`, and `vhost` where the host has it).
//!
//! No mergeable receive buffers and no offloads: every frame is one chain
//! with the 12-byte header first. A receive chain should hold
//! [`RX_BUFFER_LEN`] bytes (header + a 1514-byte frame, as virtio 1.x
//! §5.1.6.3.1 asks without VIRTIO_NET_F_MRG_RXBUF); a frame that does not
//! fit the chain it lands in is dropped and counted
//! (`rx_small_buffer`), and the chain goes back used with length 0.
//!
//! Whatever the guest puts in a chain, the device counts and drops: a
//! transmit chain shorter than header + Ethernet header, longer than
//! header + [`MAX_FRAME`], asking for an offload, or with buffers outside
//! RAM is used with length 0 and never reaches the back end. Ring-level
//! faults (an avail index out of range, a head past the queue) are the
//! transport's: DEVICE_NEEDS_RESET, as for virtio-blk.

pub mod backend;
pub mod echo;
pub mod header;
pub mod iface;
pub mod tap;
pub mod vhost;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use trapline_abi as abi;
use virtio_queue::{Reader, Writer};
use vm_memory::GuestMemoryMmap;

pub use backend::{NetBackend, TxError};
pub use echo::Echo;
pub use header::{NetHeader, HEADER_LEN};
pub use tap::{Tap, TapError, TapOptions};

use super::activate::{ActivateError, Activation, DataPath};
use super::{Chain, Handled, VirtioDevice};

/// virtio device ID of a network card.
pub const DEVICE_TYPE: u32 = abi::VIRTIO_NET_DEVICE_ID;
/// The receive queue.
pub const RX_QUEUE: usize = abi::VIRTIO_NET_RX_QUEUE as usize;
/// The transmit queue.
pub const TX_QUEUE: usize = abi::VIRTIO_NET_TX_QUEUE as usize;
/// Entries in each queue.
pub const QUEUE_SIZE: u16 = abi::VIRTIO_NET_QUEUE_SIZE as u16;
/// Largest frame (Ethernet header + 1500-byte payload, no FCS).
pub const MAX_FRAME: usize = abi::VIRTIO_NET_MAX_FRAME as usize;
/// Smallest frame transmitted: an Ethernet header.
pub const MIN_FRAME: usize = abi::VIRTIO_NET_MIN_FRAME as usize;
/// What a receive chain should hold: the header and a whole frame.
pub const RX_BUFFER_LEN: usize = HEADER_LEN + MAX_FRAME;
/// The buffer a back end receives into: room to see that a frame from
/// outside (a host interface with a larger MTU) is too long for the guest.
pub const RX_SCRATCH: usize = 65_536;
/// Frames above [`MAX_FRAME`] a back end may hand over in one receive
/// pass before the device stops looking (bounds one pass's work).
const OVERSIZE_PER_PASS: usize = 64;

/// VIRTIO_NET_F_MAC: the config space holds the MAC address.
pub const F_MAC: u32 = virtio_bindings::virtio_net::VIRTIO_NET_F_MAC;
/// VIRTIO_NET_F_STATUS: the config space holds the link status.
pub const F_STATUS: u32 = virtio_bindings::virtio_net::VIRTIO_NET_F_STATUS;
/// VIRTIO_NET_S_LINK_UP.
const LINK_UP: u16 = virtio_bindings::virtio_net::VIRTIO_NET_S_LINK_UP as u16;

/// The default MAC address (trapline_abi's).
pub const DEFAULT_MAC: [u8; 6] = {
    let m = abi::VIRTIO_NET_MAC.to_be_bytes();
    [m[2], m[3], m[4], m[5], m[6], m[7]]
};

/// Why a frame was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Transmit chain with buffers outside guest RAM, lengths that
    /// overflow, or no end (a loop, or longer than the queue).
    TxBadChain,
    /// Transmit chain shorter than header + Ethernet header.
    TxShort,
    /// Transmit frame longer than [`MAX_FRAME`].
    TxOversize,
    /// Transmit header asking for an offload that was not offered.
    TxOffload,
    /// The back end had no room or failed (a full TAP queue, the echo
    /// backlog full because the guest posts no receive buffers).
    TxBackend,
    /// Receive chain with buffers outside guest RAM or no end.
    RxBadChain,
    /// The frame did not fit the receive chain.
    RxSmallBuffer,
    /// A frame from the back end longer than [`MAX_FRAME`].
    RxOversize,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 8] = [
        Self::TxBadChain,
        Self::TxShort,
        Self::TxOversize,
        Self::TxOffload,
        Self::TxBackend,
        Self::RxBadChain,
        Self::RxSmallBuffer,
        Self::RxOversize,
    ];

    /// Its name in the `trapline-virtio net=…` line.
    pub fn name(self) -> &'static str {
        match self {
            Self::TxBadChain => "tx_bad_chain",
            Self::TxShort => "tx_short",
            Self::TxOversize => "tx_oversize",
            Self::TxOffload => "tx_offload",
            Self::TxBackend => "tx_backend",
            Self::RxBadChain => "rx_bad_chain",
            Self::RxSmallBuffer => "rx_small_buffer",
            Self::RxOversize => "rx_oversize",
        }
    }
}

/// The device's counters, shared with whoever reads them after (or
/// during) a run.
#[derive(Debug, Default)]
pub struct NetCounters {
    /// Frames the back end took.
    pub tx_frames: AtomicU64,
    /// Their bytes (frames only, no header).
    pub tx_bytes: AtomicU64,
    /// Frames put in receive chains.
    pub rx_frames: AtomicU64,
    /// Their bytes (frames only).
    pub rx_bytes: AtomicU64,
    drops: [AtomicU64; DropReason::ALL.len()],
}

impl NetCounters {
    /// Frames dropped for `reason`.
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize].load(Ordering::Relaxed)
    }

    /// Frames dropped for any reason.
    pub fn total_drops(&self) -> u64 {
        DropReason::ALL.iter().map(|&r| self.drops(r)).sum()
    }

    fn dropped(&self, reason: DropReason) {
        self.drops[reason as usize].fetch_add(1, Ordering::Relaxed);
    }

    fn count(frames: &AtomicU64, bytes: &AtomicU64, len: usize) {
        frames.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(len as u64, Ordering::Relaxed);
    }
}

/// A virtio-net device.
pub struct Net {
    backend: Box<dyn NetBackend>,
    mac: [u8; 6],
    counters: Arc<NetCounters>,
    tx_buf: Vec<u8>,
    rx_buf: Vec<u8>,
}

impl Net {
    /// A device with MAC address `mac` in front of `backend`.
    pub fn new(backend: Box<dyn NetBackend>, mac: [u8; 6]) -> Self {
        Self {
            backend,
            mac,
            counters: Arc::default(),
            tx_buf: vec![0; MAX_FRAME],
            rx_buf: vec![0; RX_SCRATCH],
        }
    }

    /// The counters so far.
    pub fn counters(&self) -> Arc<NetCounters> {
        self.counters.clone()
    }

    /// The back end's name.
    pub fn backend_name(&self) -> String {
        self.backend.name()
    }

    /// The back end (the machine asks it for its receive fd and whether it
    /// takes the data path over before the device is boxed).
    pub fn backend(&self) -> &dyn NetBackend {
        self.backend.as_ref()
    }

    /// One transmit chain: header, then the frame, to the back end.
    fn transmit(&mut self, chain: Chain<'_>, mem: &GuestMemoryMmap) -> Result<(), DropReason> {
        if !ends(&chain) {
            return Err(DropReason::TxBadChain);
        }
        let mut reader = Reader::new(mem, chain).map_err(|_| DropReason::TxBadChain)?;
        let len = reader.available_bytes();
        let frame_len = len.checked_sub(HEADER_LEN).ok_or(DropReason::TxShort)?;
        if frame_len < MIN_FRAME {
            return Err(DropReason::TxShort);
        }
        if frame_len > MAX_FRAME {
            return Err(DropReason::TxOversize);
        }
        let mut header = [0u8; HEADER_LEN];
        reader
            .read_exact(&mut header)
            .map_err(|_| DropReason::TxBadChain)?;
        NetHeader::parse(&header)
            .check_tx()
            .map_err(|_| DropReason::TxOffload)?;
        let frame = &mut self.tx_buf[..frame_len];
        reader
            .read_exact(frame)
            .map_err(|_| DropReason::TxBadChain)?;
        self.backend
            .transmit(frame)
            .map_err(|_| DropReason::TxBackend)?;
        NetCounters::count(&self.counters.tx_frames, &self.counters.tx_bytes, frame_len);
        Ok(())
    }

    /// The next frame no longer than [`MAX_FRAME`] from the back end, into
    /// `rx_buf`; `None` when none is waiting.
    fn next_frame(&mut self) -> Option<usize> {
        for _ in 0..OVERSIZE_PER_PASS {
            let n = self.backend.receive(&mut self.rx_buf)?;
            if n <= MAX_FRAME {
                return Some(n);
            }
            self.counters.dropped(DropReason::RxOversize);
        }
        None
    }

    /// One receive chain: a frame if the back end has one.
    fn receive(&mut self, chain: Chain<'_>, mem: &GuestMemoryMmap) -> Handled {
        let writer = if ends(&chain) {
            Writer::new(mem, chain).ok()
        } else {
            None
        };
        let Some(mut writer) = writer else {
            // Returned empty without taking a frame: the guest gets its
            // chain back and learns nothing was written.
            self.counters.dropped(DropReason::RxBadChain);
            return Handled::Used(0);
        };
        let Some(n) = self.next_frame() else {
            return Handled::Defer;
        };
        if writer.available_bytes() < HEADER_LEN + n {
            self.counters.dropped(DropReason::RxSmallBuffer);
            return Handled::Used(0);
        }
        let wrote = writer
            .write_all(&NetHeader::rx().to_bytes())
            .and_then(|()| writer.write_all(&self.rx_buf[..n]));
        if wrote.is_err() {
            self.counters.dropped(DropReason::RxBadChain);
            return Handled::Used(0);
        }
        NetCounters::count(&self.counters.rx_frames, &self.counters.rx_bytes, n);
        Handled::Used((HEADER_LEN + n) as u32)
    }
}

/// Whether `chain` ends where the driver meant it to: `virtio_queue` stops
/// a walk after a queue's worth of descriptors (a loop) or at a `next`
/// past the table, and the last descriptor it gave then still says NEXT.
fn ends(chain: &Chain<'_>) -> bool {
    let mut last_has_next = true;
    for d in chain.clone() {
        last_has_next = d.has_next();
    }
    !last_has_next
}

impl VirtioDevice for Net {
    fn device_type(&self) -> u32 {
        DEVICE_TYPE
    }

    fn features(&self) -> u64 {
        1 << F_MAC | 1 << F_STATUS
    }

    fn queue_max_sizes(&self) -> &[u16] {
        &[QUEUE_SIZE, QUEUE_SIZE]
    }

    /// `struct virtio_net_config`: `mac[6]` at 0, status (le16) at 6; the
    /// rest (max_virtqueue_pairs, mtu: features not offered) reads as 0.
    fn read_config(&self, offset: u64, data: &mut [u8]) {
        let mut cfg = [0u8; 8];
        cfg[..6].copy_from_slice(&self.mac);
        cfg[6..8].copy_from_slice(&LINK_UP.to_le_bytes());
        for (i, b) in data.iter_mut().enumerate() {
            *b = offset
                .checked_add(i as u64)
                .and_then(|o| cfg.get(usize::try_from(o).ok()?))
                .copied()
                .unwrap_or(0);
        }
    }

    fn handle(&mut self, queue: usize, chain: Chain<'_>, mem: &GuestMemoryMmap) -> Handled {
        match queue {
            TX_QUEUE => {
                if let Err(reason) = self.transmit(chain, mem) {
                    self.counters.dropped(reason);
                }
                Handled::Used(0)
            }
            RX_QUEUE => self.receive(chain, mem),
            _ => Handled::Used(0),
        }
    }

    fn pending_queues(&self) -> u64 {
        if self.backend.rx_pending() {
            1 << RX_QUEUE
        } else {
            0
        }
    }

    fn activate(&mut self, activation: &Activation<'_>) -> Result<DataPath, ActivateError> {
        self.backend.activate(activation)
    }

    fn reset(&mut self) {
        self.backend.reset();
    }
}

#[cfg(test)]
mod tests;
