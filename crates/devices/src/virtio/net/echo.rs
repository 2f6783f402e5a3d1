//! The echo back end: every frame the guest transmits comes back on its
//! receive queue byte for byte (nothing swapped: the MAC addresses, IP
//! addresses and ports are those the guest sent), in order. It measures
//! the VMM's own data path with no host network stack behind it, as
//! pci-testdev does for PIO/MMIO.
//!
//! The frames wait in a backlog until the guest posts receive buffers; at
//! most [`BACKLOG`] frames wait, and a frame transmitted when the backlog
//! is full is dropped (counted `tx_backend` by the device).

use std::collections::VecDeque;

use super::backend::{NetBackend, TxError};

/// Frames that may wait for a receive buffer (a whole receive queue's
/// worth).
pub const BACKLOG: usize = super::QUEUE_SIZE as usize;

/// The echo back end.
#[derive(Debug, Default)]
pub struct Echo {
    backlog: VecDeque<Vec<u8>>,
    /// Buffers of frames already received, reused (no allocation per
    /// frame once the backlog has been as deep as it gets).
    spare: Vec<Vec<u8>>,
}

impl Echo {
    /// An empty echo.
    pub fn new() -> Self {
        Self::default()
    }

    /// Frames waiting for a receive buffer.
    pub fn waiting(&self) -> usize {
        self.backlog.len()
    }
}

impl NetBackend for Echo {
    fn name(&self) -> String {
        "echo".into()
    }

    fn transmit(&mut self, frame: &[u8]) -> Result<(), TxError> {
        if self.backlog.len() >= BACKLOG {
            return Err(TxError::Busy);
        }
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(frame);
        self.backlog.push_back(buf);
        Ok(())
    }

    fn receive(&mut self, buf: &mut [u8]) -> Option<usize> {
        let frame = self.backlog.pop_front()?;
        let n = frame.len().min(buf.len());
        buf[..n].copy_from_slice(&frame[..n]);
        self.spare.push(frame);
        Some(n)
    }

    fn rx_pending(&self) -> bool {
        !self.backlog.is_empty()
    }

    fn reset(&mut self) {
        self.spare.extend(self.backlog.drain(..));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_in_order_byte_for_byte() {
        let mut e = Echo::new();
        assert!(!e.rx_pending());
        e.transmit(b"first frame....").unwrap();
        e.transmit(&[0xab; 1514]).unwrap();
        assert!(e.rx_pending());
        let mut buf = [0u8; 2048];
        assert_eq!(e.receive(&mut buf), Some(15));
        assert_eq!(&buf[..15], b"first frame....");
        assert_eq!(e.receive(&mut buf), Some(1514));
        assert!(buf[..1514].iter().all(|&b| b == 0xab));
        assert_eq!(e.receive(&mut buf), None);
    }

    #[test]
    fn the_backlog_is_bounded_and_a_reset_empties_it() {
        let mut e = Echo::new();
        for i in 0..BACKLOG {
            e.transmit(&[i as u8; 60]).unwrap();
        }
        assert!(matches!(e.transmit(&[0; 60]), Err(TxError::Busy)));
        assert_eq!(e.waiting(), BACKLOG);
        e.reset();
        assert_eq!(e.waiting(), 0);
        let mut buf = [0u8; 64];
        assert_eq!(e.receive(&mut buf), None);
        e.transmit(&[7; 60]).unwrap();
        assert_eq!(e.receive(&mut buf), Some(60));
        assert_eq!(buf[..60], [7; 60]);
    }
}
