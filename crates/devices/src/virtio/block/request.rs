//! virtio-blk request headers and the checks that keep a request inside
//! the disk (virtio 1.x §5.2.6).

use virtio_bindings::virtio_blk::{
    VIRTIO_BLK_T_FLUSH, VIRTIO_BLK_T_GET_ID, VIRTIO_BLK_T_IN, VIRTIO_BLK_T_OUT,
};

/// Bytes per sector, whatever the disk's block size.
pub const SECTOR_SIZE: u64 = 512;
/// Size of `struct virtio_blk_outhdr`.
pub const HEADER_LEN: usize = 16;
/// Size of the GET_ID answer.
pub const ID_LEN: usize = virtio_bindings::virtio_blk::VIRTIO_BLK_ID_BYTES as usize;

/// What a request asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestType {
    /// Read sectors into the writable buffers.
    In,
    /// Write the readable buffers to sectors.
    Out,
    /// Make earlier writes durable.
    Flush,
    /// The device's ID string.
    GetId,
    /// Anything else: answered VIRTIO_BLK_S_UNSUPP.
    Unsupported(u32),
}

/// A parsed request header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The request type.
    pub kind: RequestType,
    /// First sector (IN/OUT).
    pub sector: u64,
}

/// Parse `struct virtio_blk_outhdr { le32 type; le32 ioprio; le64 sector; }`.
pub fn parse_header(b: &[u8; HEADER_LEN]) -> Header {
    let kind = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let sector = u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
    let kind = match kind {
        VIRTIO_BLK_T_IN => RequestType::In,
        VIRTIO_BLK_T_OUT => RequestType::Out,
        VIRTIO_BLK_T_FLUSH => RequestType::Flush,
        VIRTIO_BLK_T_GET_ID => RequestType::GetId,
        other => RequestType::Unsupported(other),
    };
    Header { kind, sector }
}

/// Why a data request cannot be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// The data length is not whole sectors.
    #[error("request of {0} bytes is not a whole number of 512-byte sectors")]
    Partial(u64),
    /// Sector and length overflow or end past the disk.
    #[error("request for sectors {sector}+{len_sectors} ends past the disk's {capacity} sectors")]
    OutOfBounds {
        /// First sector.
        sector: u64,
        /// Length in sectors.
        len_sectors: u64,
        /// Disk size in sectors.
        capacity: u64,
    },
}

/// The byte offset of `len` bytes at `sector` on a disk of `capacity`
/// sectors, if the request is whole sectors and lies inside the disk.
pub fn disk_offset(sector: u64, len: u64, capacity: u64) -> Result<u64, RangeError> {
    if !len.is_multiple_of(SECTOR_SIZE) {
        return Err(RangeError::Partial(len));
    }
    let len_sectors = len / SECTOR_SIZE;
    let oob = RangeError::OutOfBounds {
        sector,
        len_sectors,
        capacity,
    };
    match sector.checked_add(len_sectors) {
        Some(end) if end <= capacity => sector.checked_mul(SECTOR_SIZE).ok_or(oob),
        _ => Err(oob),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(kind: u32, sector: u64) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..4].copy_from_slice(&kind.to_le_bytes());
        b[4..8].copy_from_slice(&0xdead_beefu32.to_le_bytes()); // ioprio: ignored
        b[8..].copy_from_slice(&sector.to_le_bytes());
        b
    }

    #[test]
    fn headers_parse() {
        assert_eq!(
            parse_header(&hdr(0, 7)),
            Header {
                kind: RequestType::In,
                sector: 7
            }
        );
        assert_eq!(parse_header(&hdr(1, u64::MAX)).kind, RequestType::Out);
        assert_eq!(parse_header(&hdr(4, 0)).kind, RequestType::Flush);
        assert_eq!(parse_header(&hdr(8, 0)).kind, RequestType::GetId);
        assert_eq!(
            parse_header(&hdr(11, 0)).kind,
            RequestType::Unsupported(11) // WRITE_ZEROES: not offered
        );
    }

    #[test]
    fn ranges_stay_inside_the_disk() {
        assert_eq!(disk_offset(0, 512, 1), Ok(0));
        assert_eq!(disk_offset(3, 1024, 5), Ok(1536));
        assert_eq!(disk_offset(5, 0, 5), Ok(2560));
        assert!(matches!(
            disk_offset(4, 1024, 5),
            Err(RangeError::OutOfBounds { .. })
        ));
        assert_eq!(disk_offset(0, 100, 5), Err(RangeError::Partial(100)));
        // Overflows of sector + length and of sector * 512.
        assert!(disk_offset(u64::MAX, 512, u64::MAX).is_err());
        assert!(disk_offset(u64::MAX / 2, 0, u64::MAX).is_err());
        assert!(disk_offset(6, 0, 5).is_err());
    }
}
