//! The bytes of a guest image (kernel or initrd) as the machine reads
//! them: borrowed from the binary (a built-in payload), owned (built in
//! memory), or a file mapped read-only. Mapping a file instead of reading
//! it spares one whole copy: the loader's copy into guest RAM is then the
//! only one (page cache → guest RAM). For a 32 MiB Linux image that is one
//! 32 MiB memcpy and 8,192 page faults fewer — seconds under an emulated
//! host (docs/run.md#guest-images).
//!
//! Every image has a limit, the guest RAM it must fit in, checked before
//! the host's memory is at risk: a larger file is refused from its length,
//! a pipe is read one byte past the limit and no further, and a character
//! device (`/dev/zero`, a terminal) is refused by name — it holds no image.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Why an image file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ImageReadError {
    /// Opening, mapping or reading it failed.
    #[error("{}", crate::words::io_lower(.0))]
    Io(#[from] std::io::Error),
    /// A character device: endless (`/dev/zero`), empty (`/dev/null`) or
    /// interactive (a terminal); never an image.
    #[error("it is a character device, not an image file: give a file, or a pipe such as <(xzcat image.xz)")]
    CharDevice,
    /// A file longer than the limit.
    #[error("it is {} MiB, more than the {} MiB of guest RAM left for it: give the VM more memory with --mem", mib_up(*.len), .max >> 20)]
    TooLarge {
        /// Its length in bytes.
        len: u64,
        /// The limit in bytes.
        max: u64,
    },
    /// A pipe (or other stream) that gave more than the limit.
    #[error("it gave more than the {} MiB of guest RAM left for it, and was read no further (a stream that never ends?): give a smaller image, or the VM more memory with --mem", .max >> 20)]
    StreamTooLarge {
        /// The limit in bytes.
        max: u64,
    },
}

/// MiB, rounded up (a 1-byte-too-long file is not "128 MiB").
fn mib_up(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// Image bytes; derefs to `[u8]`.
pub enum ImageBytes {
    /// Part of the binary (`builtin:NAME`).
    Static(&'static [u8]),
    /// Built or read into memory.
    Owned(Vec<u8>),
    /// A file mapped private and read-only, unmapped on drop.
    Mapped(MappedFile),
}

impl ImageBytes {
    /// Map the file at `path`; read it instead where it cannot be mapped
    /// (a pipe such as `<(xzcat …)`, a file system without mmap). An empty
    /// file is an empty image. An image longer than `max` bytes (the guest
    /// RAM it must fit in) is refused before it is read, a stream is read
    /// no further than `max` + 1 bytes, and a character device is refused.
    pub fn map(path: &Path, max: u64) -> Result<ImageBytes, ImageReadError> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.file_type().is_char_device() {
            return Err(ImageReadError::CharDevice);
        }
        if meta.is_file() && meta.len() > max {
            return Err(ImageReadError::TooLarge {
                len: meta.len(),
                max,
            });
        }
        let len = usize::try_from(meta.len()).ok().filter(|&l| l > 0);
        if let (true, Some(len)) = (meta.is_file(), len) {
            if let Ok(m) = MappedFile::new(&file, len) {
                return Ok(ImageBytes::Mapped(m));
            }
        }
        let mut v = Vec::new();
        file.take(max.saturating_add(1)).read_to_end(&mut v)?;
        if v.len() as u64 > max {
            return Err(ImageReadError::StreamTooLarge { max });
        }
        Ok(ImageBytes::Owned(v))
    }
}

impl Deref for ImageBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            ImageBytes::Static(b) => b,
            ImageBytes::Owned(v) => v,
            ImageBytes::Mapped(m) => m.bytes(),
        }
    }
}

impl From<&'static [u8]> for ImageBytes {
    fn from(b: &'static [u8]) -> Self {
        ImageBytes::Static(b)
    }
}

impl From<Vec<u8>> for ImageBytes {
    fn from(v: Vec<u8>) -> Self {
        ImageBytes::Owned(v)
    }
}

impl From<std::borrow::Cow<'static, [u8]>> for ImageBytes {
    fn from(c: std::borrow::Cow<'static, [u8]>) -> Self {
        match c {
            std::borrow::Cow::Borrowed(b) => ImageBytes::Static(b),
            std::borrow::Cow::Owned(v) => ImageBytes::Owned(v),
        }
    }
}

impl std::fmt::Debug for ImageBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            ImageBytes::Static(_) => "built-in",
            ImageBytes::Owned(_) => "in memory",
            ImageBytes::Mapped(_) => "mapped file",
        };
        write!(f, "ImageBytes({kind}, {} bytes)", self.len())
    }
}

/// A private, read-only mapping of a whole file.
pub struct MappedFile {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value alone (unmapped
// only in Drop); reading it from any thread is as safe as reading a &[u8].
unsafe impl Send for MappedFile {}
// SAFETY: as above: shared access is read-only.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    fn new(file: &File, len: usize) -> std::io::Result<MappedFile> {
        // SAFETY: a fresh mapping chosen by the kernel (no address given),
        // of an open file's first `len` bytes (`len` > 0), read-only and
        // private: it aliases no Rust object. The file may still change
        // under it (another process writing it): the image's bytes are then
        // whatever the file holds, as with read(); truncating it while the
        // image loads ends the process with SIGBUS (docs/run.md#guest-images).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(MappedFile {
            ptr: ptr.cast(),
            len,
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes until drop, and nothing
        // writes them through this process (PROT_READ).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `new`; no slice of it outlives
        // `self` (bytes() borrows self).
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_file_reads_as_its_bytes() {
        let dir = std::env::temp_dir().join(format!("tl-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("img");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&f, &data).unwrap();
        let m = ImageBytes::map(&f, 10_000).unwrap();
        assert!(matches!(m, ImageBytes::Mapped(_)));
        assert_eq!(&m[..], &data[..]);
        // An empty file is an empty image; a missing one an error.
        let e = dir.join("empty");
        std::fs::write(&e, b"").unwrap();
        assert!(ImageBytes::map(&e, 1).unwrap().is_empty());
        assert!(ImageBytes::map(&dir.join("none"), 1).is_err());
        // A directory is refused as read() refuses it.
        assert!(ImageBytes::map(&dir, 1).is_err());
        // One byte over the limit is refused from the length alone.
        let big = ImageBytes::map(&f, 9_999).unwrap_err();
        assert!(matches!(big, ImageReadError::TooLarge { len: 10_000, .. }));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn character_devices_are_refused_and_streams_read_to_the_limit() {
        for dev in ["/dev/zero", "/dev/null", "/dev/urandom"] {
            let e = ImageBytes::map(Path::new(dev), 1 << 20).unwrap_err();
            assert!(matches!(e, ImageReadError::CharDevice), "{dev}: {e}");
            assert!(e.to_string().contains("character device"), "{e}");
        }
        // A pipe that never ends: read to the limit and one byte, no more.
        let (r, mut w) = std::io::pipe().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write as _;
            let chunk = [7u8; 4096];
            while w.write_all(&chunk).is_ok() {}
        });
        let path = format!("/proc/self/fd/{}", r.as_raw_fd());
        let e = ImageBytes::map(Path::new(&path), 1 << 20).unwrap_err();
        assert!(matches!(e, ImageReadError::StreamTooLarge { .. }), "{e}");
        assert!(e.to_string().contains("1 MiB"), "{e}");
        drop(r);
        writer.join().unwrap();
        // A pipe within the limit is the image.
        let (r, mut w) = std::io::pipe().unwrap();
        {
            use std::io::Write as _;
            w.write_all(b"image").unwrap();
        }
        drop(w);
        let path = format!("/proc/self/fd/{}", r.as_raw_fd());
        let b = ImageBytes::map(Path::new(&path), 5).unwrap();
        assert_eq!(&b[..], b"image");
    }

    #[test]
    fn conversions_keep_the_bytes() {
        static B: [u8; 3] = [1, 2, 3];
        assert_eq!(&ImageBytes::from(&B[..])[..], &B);
        assert_eq!(&ImageBytes::from(vec![4, 5])[..], &[4, 5]);
        let c: std::borrow::Cow<'static, [u8]> = std::borrow::Cow::Borrowed(&B);
        assert!(matches!(ImageBytes::from(c), ImageBytes::Static(_)));
    }
}
