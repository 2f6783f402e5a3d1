//! The bytes of a guest image (kernel or initrd) as the machine reads
//! them: borrowed from the binary (a built-in payload), owned (built in
//! memory), or a file mapped read-only. Mapping a file instead of reading
//! it spares one whole copy: the loader's copy into guest RAM is then the
//! only one (page cache → guest RAM). For a 32 MiB Linux image that is one
//! 32 MiB memcpy and 8,192 page faults fewer — seconds under an emulated
//! host (docs/run.md#guest-images).

use std::fs::File;
use std::ops::Deref;
use std::os::fd::AsRawFd;
use std::path::Path;

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
    /// file is an empty image.
    pub fn map(path: &Path) -> std::io::Result<ImageBytes> {
        use std::io::Read;
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        let len = usize::try_from(meta.len()).ok().filter(|&l| l > 0);
        if let (true, Some(len)) = (meta.is_file(), len) {
            if let Ok(m) = MappedFile::new(&file, len) {
                return Ok(ImageBytes::Mapped(m));
            }
        }
        let mut v = Vec::new();
        file.read_to_end(&mut v)?;
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
        let m = ImageBytes::map(&f).unwrap();
        assert!(matches!(m, ImageBytes::Mapped(_)));
        assert_eq!(&m[..], &data[..]);
        // An empty file is an empty image; a missing one an error.
        let e = dir.join("empty");
        std::fs::write(&e, b"").unwrap();
        assert!(ImageBytes::map(&e).unwrap().is_empty());
        assert!(ImageBytes::map(&dir.join("none")).is_err());
        // A directory is refused as read() refuses it; a pipe is read.
        assert!(ImageBytes::map(&dir).is_err());
        let p = ImageBytes::map(Path::new("/dev/null")).unwrap();
        assert!(matches!(p, ImageBytes::Owned(_)) && p.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
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
