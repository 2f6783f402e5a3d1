//! Bounds-checked little-endian reads of untrusted bytes, for the image
//! parsers ([`crate::elf`], `linux::bzimage`): a read past the end
//! is `None`, never a panic.

/// The `N` bytes at `off`, `None` if any is past the end (or `off` does not
/// fit a `usize`).
pub(crate) fn rd<const N: usize>(b: &[u8], off: u64) -> Option<[u8; N]> {
    let start = usize::try_from(off).ok()?;
    let end = start.checked_add(N)?;
    b.get(start..end)?.try_into().ok()
}

/// The byte at `off`.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 loader reads it so far
pub(crate) fn u8_at(b: &[u8], off: u64) -> Option<u8> {
    rd::<1>(b, off).map(u8::from_le_bytes)
}

/// The little-endian u16 at `off`.
pub(crate) fn u16_at(b: &[u8], off: u64) -> Option<u16> {
    rd::<2>(b, off).map(u16::from_le_bytes)
}

/// The little-endian u32 at `off`.
pub(crate) fn u32_at(b: &[u8], off: u64) -> Option<u32> {
    rd::<4>(b, off).map(u32::from_le_bytes)
}

/// The little-endian u64 at `off`.
pub(crate) fn u64_at(b: &[u8], off: u64) -> Option<u64> {
    rd::<8>(b, off).map(u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inside_the_bytes_and_none_past_them() {
        let b = [0x01, 0x02, 0x03, 0x04, 0x05];
        assert_eq!(u8_at(&b, 4), Some(0x05));
        assert_eq!(u16_at(&b, 0), Some(0x0201));
        assert_eq!(u32_at(&b, 1), Some(0x0504_0302));
        assert_eq!(u32_at(&b, 2), None);
        assert_eq!(u64_at(&b, 0), None);
        assert_eq!(u8_at(&b, 5), None);
        assert_eq!(u16_at(&b, u64::MAX), None);
    }
}
