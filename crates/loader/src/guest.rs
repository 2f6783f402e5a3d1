//! Writing into guest memory, for every architecture's loader: each write
//! names what it writes, so a failure (which the placement checks before it
//! should make impossible) is still an error a user can read, never a panic.

use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use crate::error::LoadError;
use crate::image::LoadSegment;

/// Copies `bytes` to guest-physical `addr`.
pub(crate) fn write(
    mem: &GuestMemoryMmap,
    what: &'static str,
    addr: u64,
    bytes: &[u8],
) -> Result<(), LoadError> {
    mem.write_slice(bytes, GuestAddress(addr))
        .map_err(|source| LoadError::GuestMemory { what, addr, source })
}

/// Zeroes `len` bytes of `what` at `addr` in 64 KiB chunks (BSS can be
/// 12 MiB; no need to allocate that much zero on the host).
pub(crate) fn zero(
    mem: &GuestMemoryMmap,
    what: &'static str,
    addr: u64,
    len: u64,
) -> Result<(), LoadError> {
    const CHUNK: u64 = 64 * 1024;
    static ZEROS: [u8; CHUNK as usize] = [0; CHUNK as usize];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(CHUNK);
        write(mem, what, addr + done, &ZEROS[..n as usize])?;
        done += n;
    }
    Ok(())
}

/// Zeroes each segment's BSS (memory size beyond its file size), unless
/// guest RAM is fresh (already zero: writing zeros would only fault its
/// pages in).
pub(crate) fn zero_bss(
    mem: &GuestMemoryMmap,
    segments: &[LoadSegment],
    fresh_memory: bool,
) -> Result<(), LoadError> {
    if fresh_memory {
        return Ok(());
    }
    for seg in segments.iter().filter(|s| s.memsz > s.filesz) {
        zero(
            mem,
            "zeroed BSS",
            seg.paddr + seg.filesz,
            seg.memsz - seg.filesz,
        )?;
    }
    Ok(())
}
