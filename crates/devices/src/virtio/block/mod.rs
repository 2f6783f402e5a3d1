//! virtio-blk (device type 2) backed by a [`DiskFile`]: read, write, flush
//! (fdatasync before the completion), get-id; a read-only disk answers
//! writes with VIRTIO_BLK_S_IOERR.
//!
//! A request is a header (readable), data (readable for OUT, writable for
//! IN/GET_ID) and a status byte (the last writable byte). The chain is
//! read and written through `virtio_queue`'s Reader and Writer, which
//! refuse buffers outside guest RAM and lengths that overflow; sectors are
//! checked against the disk before the file is touched.

pub mod disk;
pub mod request;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use virtio_bindings::virtio_blk::{
    VIRTIO_BLK_F_FLUSH, VIRTIO_BLK_F_RO, VIRTIO_BLK_F_SEG_MAX, VIRTIO_BLK_S_IOERR, VIRTIO_BLK_S_OK,
    VIRTIO_BLK_S_UNSUPP,
};
use virtio_queue::{Reader, Writer};
use vm_memory::GuestMemoryMmap;

pub use disk::{DiskError, DiskFile};
use request::{disk_offset, parse_header, RequestType, HEADER_LEN};

use super::{Chain, Handled, VirtioDevice};

/// virtio device ID of a block device.
pub const DEVICE_TYPE: u32 = 2;
/// Entries in the request queue.
pub const QUEUE_SIZE: u16 = 256;
/// Segments per request the driver may use (two descriptors of the queue
/// go to the header and the status byte).
pub const SEG_MAX: u32 = QUEUE_SIZE as u32 - 2;
/// Bounce buffer between the file and guest memory: requests larger than
/// this are served in pieces.
const CHUNK: usize = 128 << 10;

/// Per-device counters, shared with whoever reads them after (or
/// during) a run.
#[derive(Debug, Default)]
pub struct BlockCounters {
    /// IN requests completed OK.
    pub reads: AtomicU64,
    /// OUT requests completed OK.
    pub writes: AtomicU64,
    /// FLUSH requests.
    pub flushes: AtomicU64,
    /// Requests answered IOERR or UNSUPP.
    pub errors: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// A virtio-blk device.
pub struct Block {
    disk: DiskFile,
    buf: Vec<u8>,
    counters: Arc<BlockCounters>,
}

impl Block {
    /// A device serving `disk`.
    pub fn new(disk: DiskFile) -> Self {
        Self {
            disk,
            buf: vec![0; CHUNK],
            counters: Arc::default(),
        }
    }

    /// The counters so far.
    pub fn counters(&self) -> Arc<BlockCounters> {
        self.counters.clone()
    }

    /// Serve one request: the status byte and the bytes written into the
    /// chain's data buffers.
    fn execute(
        &mut self,
        header: &[u8; HEADER_LEN],
        reader: &mut Reader<'_>,
        writer: &mut Writer<'_>,
    ) -> (u8, u32) {
        let h = parse_header(header);
        let result = match h.kind {
            RequestType::In => self.read(h.sector, writer),
            RequestType::Out => self.write(h.sector, reader),
            RequestType::Flush => {
                bump(&self.counters.flushes);
                if self.disk.read_only() {
                    Ok(0)
                } else {
                    self.disk
                        .flush()
                        .map(|()| 0)
                        .map_err(|_| VIRTIO_BLK_S_IOERR)
                }
            }
            RequestType::GetId => {
                let n = writer.available_bytes().min(self.disk.id().len());
                writer
                    .write_all(&self.disk.id()[..n])
                    .map(|()| n as u32)
                    .map_err(|_| VIRTIO_BLK_S_IOERR)
            }
            RequestType::Unsupported(_) => Err(VIRTIO_BLK_S_UNSUPP),
        };
        match result {
            Ok(written) => (VIRTIO_BLK_S_OK as u8, written),
            Err(status) => {
                bump(&self.counters.errors);
                (status as u8, 0)
            }
        }
    }

    fn read(&mut self, sector: u64, writer: &mut Writer<'_>) -> Result<u32, u32> {
        let len = writer.available_bytes() as u64;
        let mut off =
            disk_offset(sector, len, self.disk.sectors()).map_err(|_| VIRTIO_BLK_S_IOERR)?;
        let mut left = len as usize;
        while left > 0 {
            let n = left.min(self.buf.len());
            let chunk = &mut self.buf[..n];
            self.disk
                .read_at(chunk, off)
                .map_err(|_| VIRTIO_BLK_S_IOERR)?;
            writer.write_all(chunk).map_err(|_| VIRTIO_BLK_S_IOERR)?;
            off += n as u64;
            left -= n;
        }
        bump(&self.counters.reads);
        Ok(len as u32)
    }

    fn write(&mut self, sector: u64, reader: &mut Reader<'_>) -> Result<u32, u32> {
        if self.disk.read_only() {
            return Err(VIRTIO_BLK_S_IOERR);
        }
        let len = reader.available_bytes() as u64;
        let mut off =
            disk_offset(sector, len, self.disk.sectors()).map_err(|_| VIRTIO_BLK_S_IOERR)?;
        let mut left = len as usize;
        while left > 0 {
            let n = left.min(self.buf.len());
            let chunk = &mut self.buf[..n];
            reader.read_exact(chunk).map_err(|_| VIRTIO_BLK_S_IOERR)?;
            self.disk
                .write_at(chunk, off)
                .map_err(|_| VIRTIO_BLK_S_IOERR)?;
            off += n as u64;
            left -= n;
        }
        bump(&self.counters.writes);
        Ok(0)
    }
}

impl VirtioDevice for Block {
    fn device_type(&self) -> u32 {
        DEVICE_TYPE
    }

    fn features(&self) -> u64 {
        let mut f = 1 << VIRTIO_BLK_F_FLUSH | 1 << VIRTIO_BLK_F_SEG_MAX;
        if self.disk.read_only() {
            f |= 1 << VIRTIO_BLK_F_RO;
        }
        f
    }

    fn queue_max_sizes(&self) -> &[u16] {
        &[QUEUE_SIZE]
    }

    /// `struct virtio_blk_config`: capacity (le64) at 0, size_max (le32,
    /// 0: not offered) at 8, seg_max (le32) at 12; the rest reads as 0.
    fn read_config(&self, offset: u64, data: &mut [u8]) {
        let mut cfg = [0u8; 16];
        cfg[..8].copy_from_slice(&self.disk.sectors().to_le_bytes());
        cfg[12..16].copy_from_slice(&SEG_MAX.to_le_bytes());
        for (i, b) in data.iter_mut().enumerate() {
            *b = offset
                .checked_add(i as u64)
                .and_then(|o| cfg.get(usize::try_from(o).ok()?))
                .copied()
                .unwrap_or(0);
        }
    }

    fn handle(&mut self, _queue: usize, chain: Chain<'_>, mem: &GuestMemoryMmap) -> Handled {
        let (Ok(mut reader), Ok(mut writer)) =
            (Reader::new(mem, chain.clone()), Writer::new(mem, chain))
        else {
            return Handled::Broken;
        };
        let mut header = [0u8; HEADER_LEN];
        if reader.read_exact(&mut header).is_err() {
            return Handled::Broken;
        }
        let Some(status_at) = writer.available_bytes().checked_sub(1) else {
            return Handled::Broken;
        };
        let Ok(mut status) = writer.split_at(status_at) else {
            return Handled::Broken;
        };
        let (code, written) = self.execute(&header, &mut reader, &mut writer);
        if status.write_all(&[code]).is_err() {
            return Handled::Broken;
        }
        Handled::Used(written.saturating_add(1))
    }
}
