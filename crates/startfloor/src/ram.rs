//! Guest RAM: one anonymous private mapping, reserved lazily as trapline's
//! (vm-memory's) is, so only the pages the guest and the loader touch
//! become resident.

/// A mapping of guest RAM, unmapped on drop.
pub struct GuestRam {
    ptr: *mut u8,
    len: usize,
}

impl GuestRam {
    /// Map `len` bytes of zeroed, lazily backed memory.
    pub fn map(len: usize) -> Result<Self, String> {
        // SAFETY: an anonymous mapping at an address the kernel picks:
        // nothing else in the process is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(format!(
                "cannot map {} MiB of guest RAM: {}",
                len >> 20,
                std::io::Error::last_os_error()
            ));
        }
        Ok(Self {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The mapping's host address (for KVM's memory slot).
    pub fn host_addr(&self) -> u64 {
        self.ptr as u64
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `[start, end)` host addresses, to leave guest RAM out of the RSS.
    pub fn host_range(&self) -> (u64, u64) {
        (self.host_addr(), self.host_addr() + self.len as u64)
    }

    /// Copy `bytes` to `offset` from the start of guest RAM.
    pub fn write(&self, offset: usize, bytes: &[u8]) -> Result<(), String> {
        if offset
            .checked_add(bytes.len())
            .is_none_or(|end| end > self.len)
        {
            return Err(format!(
                "{} bytes at offset {offset:#x} do not fit {} MiB of guest RAM",
                bytes.len(),
                self.len >> 20
            ));
        }
        // SAFETY: the range was just checked to lie inside the mapping,
        // which is writable and lives as long as `self`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(offset), bytes.len());
        }
        Ok(())
    }
}

impl Drop for GuestRam {
    fn drop(&mut self) {
        // SAFETY: the mapping is ours and nothing borrows it any more (the
        // VM that used it is dropped first: it is created after the RAM).
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_stay_inside_the_mapping() {
        let ram = GuestRam::map(1 << 20).unwrap();
        assert_eq!(ram.len(), 1 << 20);
        ram.write(0x1000, &[0xf4]).unwrap();
        assert!(ram.write((1 << 20) - 1, &[1, 2]).is_err());
        assert!(ram.write(usize::MAX, &[1]).is_err());
        let (a, b) = ram.host_range();
        assert_eq!(b - a, 1 << 20);
    }
}
