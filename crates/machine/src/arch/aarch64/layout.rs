//! Where things go on `virt` (the addresses themselves are
//! `trapline_abi::virt`'s).

use trapline_abi as abi;

/// Most RAM trapline maps, in MiB (the same limit as on x86: RAM runs from
/// 1 GiB to at most 4 GiB, below the high MMIO windows).
pub const MAX_MEM_MIB: u64 = abi::MAX_RAM_MIB;

/// virtio-mmio's transport window and SPIs on `virt` (QEMU: 32 transports
/// of 0x200 bytes from 0x0A00_0000, SPI 16 + n). Named as on the PC so the
/// shared virtio code builds; `--disk` is refused on arm64 until the
/// transports are wired (issue 26).
pub use abi::VIRT_VIRTIO_MMIO_BASE as VIRTIO_MMIO_BASE;
/// See [`VIRTIO_MMIO_BASE`].
pub const VIRTIO_GSIS: [u32; 8] = {
    let f = abi::VIRT_VIRTIO_MMIO_FIRST_SPI;
    [f, f + 1, f + 2, f + 3, f + 4, f + 5, f + 6, f + 7]
};

/// Where the device tree goes: the first 8-byte boundary at or above
/// `image_end` (arm64 booting.rst asks for 8 bytes), if `len` bytes fit
/// there before `ram_end`.
pub fn dtb_address(image_end: u64, len: u64, ram_end: u64) -> Option<u64> {
    let at = image_end.checked_add(7)? & !7;
    (at.checked_add(len)? <= ram_end).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_tree_goes_above_the_image_aligned_and_inside_ram() {
        assert_eq!(
            dtb_address(0x4020_1001, 0x100, 0x5000_0000),
            Some(0x4020_1008)
        );
        assert_eq!(
            dtb_address(0x4020_1000, 0x100, 0x5000_0000),
            Some(0x4020_1000)
        );
        assert_eq!(dtb_address(0x4fff_ff00, 0x200, 0x5000_0000), None);
    }
}
