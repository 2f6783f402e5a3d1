//! The virtio-net header (`struct virtio_net_hdr_v1`, virtio 1.x §5.1.6):
//! 12 bytes before every frame on both queues once VERSION_1 is
//! negotiated (always, over MMIO v2). trapline offers no checksum or
//! segmentation offload, so a transmitted header must ask for none, and
//! every received header is all zeros but `num_buffers` = 1 (no mergeable
//! receive buffers: each frame is in one chain).

/// Size of `struct virtio_net_hdr_v1`.
pub const HEADER_LEN: usize = 12;
/// `flags`: the driver asks the device to fill in a checksum
/// (VIRTIO_NET_HDR_F_NEEDS_CSUM; needs VIRTIO_NET_F_CSUM, not offered).
pub const F_NEEDS_CSUM: u8 = 1;
/// `gso_type`: no segmentation (VIRTIO_NET_HDR_GSO_NONE).
pub const GSO_NONE: u8 = 0;

/// A parsed header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetHeader {
    /// `flags`.
    pub flags: u8,
    /// `gso_type`.
    pub gso_type: u8,
    /// `hdr_len`.
    pub hdr_len: u16,
    /// `gso_size`.
    pub gso_size: u16,
    /// `csum_start`.
    pub csum_start: u16,
    /// `csum_offset`.
    pub csum_offset: u16,
    /// `num_buffers`.
    pub num_buffers: u16,
}

/// Why a transmitted header is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// It asks for a checksum or segmentation offload trapline did not
    /// offer.
    #[error("the header asks for an offload that was not offered (flags {flags:#x}, gso_type {gso_type})")]
    Offload {
        /// `flags`.
        flags: u8,
        /// `gso_type`.
        gso_type: u8,
    },
}

fn le16(b: &[u8; HEADER_LEN], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

impl NetHeader {
    /// Decode the 12 bytes (any values).
    pub fn parse(b: &[u8; HEADER_LEN]) -> Self {
        Self {
            flags: b[0],
            gso_type: b[1],
            hdr_len: le16(b, 2),
            gso_size: le16(b, 4),
            csum_start: le16(b, 6),
            csum_offset: le16(b, 8),
            num_buffers: le16(b, 10),
        }
    }

    /// Encode.
    pub fn to_bytes(self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        for (at, v) in [
            (2, self.hdr_len),
            (4, self.gso_size),
            (6, self.csum_start),
            (8, self.csum_offset),
            (10, self.num_buffers),
        ] {
            b[at..at + 2].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// The header of every received frame: no offload, one buffer.
    pub fn rx() -> Self {
        Self {
            num_buffers: 1,
            ..Self::default()
        }
    }

    /// A transmitted header is acceptable when it asks for nothing the
    /// device did not offer. `hdr_len`, `csum_*` and `num_buffers` are
    /// ignored on transmit (the specification lets the driver leave them
    /// as it likes without the offloads).
    pub fn check_tx(&self) -> Result<(), HeaderError> {
        if self.flags & F_NEEDS_CSUM != 0 || self.gso_type != GSO_NONE {
            return Err(HeaderError::Offload {
                flags: self.flags,
                gso_type: self.gso_type,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_little_endian() {
        let b = [1, 3, 0x34, 0x12, 0x78, 0x56, 2, 0, 4, 0, 1, 0];
        let h = NetHeader::parse(&b);
        assert_eq!(h.flags, 1);
        assert_eq!(h.gso_type, 3);
        assert_eq!(h.hdr_len, 0x1234);
        assert_eq!(h.gso_size, 0x5678);
        assert_eq!((h.csum_start, h.csum_offset, h.num_buffers), (2, 4, 1));
        assert_eq!(h.to_bytes(), b);
    }

    #[test]
    fn the_receive_header_says_one_buffer_and_nothing_else() {
        assert_eq!(
            NetHeader::rx().to_bytes(),
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]
        );
    }

    #[test]
    fn offloads_not_offered_are_refused_on_transmit() {
        assert!(NetHeader::default().check_tx().is_ok());
        // Fields that only mean something with an offload are ignored.
        let b = [0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 7, 0];
        assert!(NetHeader::parse(&b).check_tx().is_ok());
        // DATA_VALID (2) is a receive flag: harmless on transmit.
        assert!(NetHeader::parse(&[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .check_tx()
            .is_ok());
        for (flags, gso) in [(1, 0), (0, 1), (0, 3), (0, 4), (0, 0x80), (3, 0xff)] {
            let mut b = [0u8; HEADER_LEN];
            b[0] = flags;
            b[1] = gso;
            assert_eq!(
                NetHeader::parse(&b).check_tx(),
                Err(HeaderError::Offload {
                    flags,
                    gso_type: gso
                }),
                "flags {flags} gso {gso}"
            );
        }
    }
}
