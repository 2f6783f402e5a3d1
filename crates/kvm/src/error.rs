//! Errors from the KVM core, worded so a user knows what to do.

/// Something KVM or the host refused.
#[derive(Debug, thiserror::Error)]
pub enum KvmError {
    /// /dev/kvm is not there.
    #[error("{path} does not exist: this host has no KVM. Load the kvm_intel or kvm_amd module, or enable nested virtualisation for this VM")]
    NoKvm {
        /// The device path.
        path: String,
    },
    /// /dev/kvm exists but may not be opened.
    #[error("permission denied opening {path}: add yourself to the kvm group (sudo usermod -aG kvm $USER, then log in again) or run as root")]
    KvmPermission {
        /// The device path.
        path: String,
    },
    /// Opening /dev/kvm failed otherwise.
    #[error("cannot open {path}: {source}")]
    KvmOpen {
        /// The device path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The node opened, but is not KVM (KVM_GET_API_VERSION failed on it).
    #[error("{path} is not a KVM device (it does not answer KVM_GET_API_VERSION)")]
    NotKvm {
        /// The path, as the user named it.
        path: String,
    },
    /// The KVM API version is not the stable one (12).
    #[error("unsupported KVM API version {0} (trapline needs 12)")]
    ApiVersion(i32),
    /// A KVM ioctl failed.
    #[error("{what} failed: {source}")]
    Ioctl {
        /// Which ioctl and on what.
        what: String,
        /// The errno.
        source: kvm_ioctls::Error,
    },
    /// Guest memory could not be allocated.
    #[error("cannot allocate {mib} MiB of guest memory: {detail}")]
    Memory {
        /// Requested size.
        mib: u64,
        /// What vm-memory said.
        detail: String,
    },
    /// A configuration value out of range.
    #[error("{0}")]
    Config(String),
}

impl KvmError {
    pub(crate) fn ioctl(what: impl Into<String>) -> impl FnOnce(kvm_ioctls::Error) -> KvmError {
        let what = what.into();
        move |source| KvmError::Ioctl { what, source }
    }
}
