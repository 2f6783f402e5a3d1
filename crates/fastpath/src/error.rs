//! Errors from registering fast paths.

/// A fast path could not be set up. Each message names the mechanism and
/// the address so the user can tell which device asked for it.
#[derive(Debug, thiserror::Error)]
pub enum FastpathError {
    /// KVM refused an ioeventfd.
    #[error("KVM_IOEVENTFD at {space} {addr:#x} (len {len}) failed: {source}")]
    IoEvent {
        /// PIO or MMIO.
        space: &'static str,
        /// Guest address.
        addr: u64,
        /// Access length (0 = any).
        len: u32,
        /// The errno.
        source: kvm_ioctls::Error,
    },
    /// KVM refused an irqfd.
    #[error("KVM_IRQFD for GSI {gsi} failed: {source}")]
    IrqFd {
        /// The GSI.
        gsi: u32,
        /// The errno.
        source: kvm_ioctls::Error,
    },
    /// KVM refused a coalesced zone.
    #[error("KVM_REGISTER_COALESCED_MMIO at {space} {addr:#x}+{size:#x} failed: {source} (does this kernel have KVM_CAP_COALESCED_MMIO / KVM_CAP_COALESCED_PIO?)")]
    Coalesced {
        /// PIO or MMIO.
        space: &'static str,
        /// Guest address.
        addr: u64,
        /// Zone size.
        size: u32,
        /// The errno.
        source: kvm_ioctls::Error,
    },
    /// KVM refused a memslot.
    #[error(
        "KVM_SET_USER_MEMORY_REGION (slot {slot}, {gpa:#x}+{size:#x}, read-only) failed: {source}"
    )]
    Memslot {
        /// Slot number.
        slot: u32,
        /// Guest address.
        gpa: u64,
        /// Size.
        size: u64,
        /// The errno.
        source: kvm_ioctls::Error,
    },
    /// An eventfd, mmap or similar host resource could not be created.
    #[error("{what}: {source}")]
    Host {
        /// What was being created.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// A parameter KVM would refuse anyway (unaligned size, zero length…).
    #[error("{0}")]
    Invalid(String),
}
