//! The file behind a virtio-blk device: positioned reads and writes
//! (pread64/pwrite64, no shared file offset, so any thread may serve a
//! queue), fdatasync for flushes.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::request::{ID_LEN, SECTOR_SIZE};

/// Why a disk file cannot back a device.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// open(2) failed.
    #[error("cannot open disk file {path}{mode}: {source} (check the path and its permissions, or add ,ro to share it read-only)", mode = if *read_only { " read-only" } else { " for reading and writing" })]
    Open {
        /// The path.
        path: PathBuf,
        /// Opened read-only.
        read_only: bool,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Not a regular file (or its size could not be read).
    #[error("disk file {path} is not a regular file: give a disk image file (e.g. made with `truncate -s 64M disk.img`)")]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// Smaller than one sector.
    #[error("disk file {path} is {len} bytes: a disk needs at least one 512-byte sector")]
    TooSmall {
        /// The path.
        path: PathBuf,
        /// Its size.
        len: u64,
    },
}

/// An open disk image.
#[derive(Debug)]
pub struct DiskFile {
    file: File,
    sectors: u64,
    read_only: bool,
    id: [u8; ID_LEN],
}

impl DiskFile {
    /// Open `path` (read-only with `read_only`). The disk is the file's
    /// whole sectors; a trailing partial sector is not visible.
    pub fn open(path: &Path, read_only: bool) -> Result<Self, DiskError> {
        // Looked at before opening: opening a FIFO read-only blocks until
        // a writer comes (`--disk fifo,ro` hung), and a device is no image.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return Err(DiskError::NotAFile {
                path: path.to_owned(),
            });
        }
        let file = OpenOptions::new()
            .read(true)
            .write(!read_only)
            .open(path)
            .map_err(|source| DiskError::Open {
                path: path.to_owned(),
                read_only,
                source,
            })?;
        let meta = file.metadata().ok().filter(|m| m.is_file());
        let Some(meta) = meta else {
            return Err(DiskError::NotAFile {
                path: path.to_owned(),
            });
        };
        if meta.len() < SECTOR_SIZE {
            return Err(DiskError::TooSmall {
                path: path.to_owned(),
                len: meta.len(),
            });
        }
        // Like Firecracker: an ID from the file's identity, so a guest can
        // tell disks apart (/sys/block/vdX/serial).
        let mut id = [0u8; ID_LEN];
        let s = format!("{:x}{:x}", meta.dev(), meta.ino());
        let n = s.len().min(ID_LEN);
        id[..n].copy_from_slice(&s.as_bytes()[..n]);
        Ok(Self {
            file,
            sectors: meta.len() / SECTOR_SIZE,
            read_only,
            id,
        })
    }

    /// Size in 512-byte sectors.
    pub fn sectors(&self) -> u64 {
        self.sectors
    }

    /// Opened read-only.
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// The GET_ID string (NUL-padded).
    pub fn id(&self) -> &[u8; ID_LEN] {
        &self.id
    }

    /// Read `buf.len()` bytes at `offset`.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    /// Write `buf` at `offset` (callers check the range first).
    pub fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.file.write_all_at(buf, offset)
    }

    /// fdatasync: earlier writes are on stable storage.
    pub fn flush(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }
}
