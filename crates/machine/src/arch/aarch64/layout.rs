//! Where things go on `virt` (the addresses themselves are
//! `trapline_abi::virt`'s).

use trapline_abi as abi;

/// Most RAM trapline maps, in MiB (the same limit as on x86: RAM runs from
/// 1 GiB to at most 4 GiB, below the high MMIO windows).
pub const MAX_MEM_MIB: u64 = abi::MAX_RAM_MIB;

/// virtio-mmio's transport window and SPIs on `virt` (QEMU: 32 transports
/// of 0x200 bytes from 0x0A00_0000, SPI 16 + n). Named as on the PC so the
/// shared virtio code serves both; disks take the first transports.
pub use abi::VIRT_VIRTIO_MMIO_BASE as VIRTIO_MMIO_BASE;
/// See [`VIRTIO_MMIO_BASE`].
pub use abi::VIRT_VIRTIO_MMIO_STRIDE as VIRTIO_MMIO_STRIDE;
/// The SPIs of the transports disks may take (an irqfd's GSI is the SPI).
pub const VIRTIO_GSIS: [u32; 8] = {
    let f = abi::VIRT_VIRTIO_MMIO_FIRST_SPI;
    [f, f + 1, f + 2, f + 3, f + 4, f + 5, f + 6, f + 7]
};
