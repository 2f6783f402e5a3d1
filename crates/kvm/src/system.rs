//! Opening /dev/kvm and asking what it can do.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::os::fd::{FromRawFd, IntoRawFd};

use kvm_ioctls::{Cap, Kvm};

use crate::KvmError;

/// KVM_CAP_IOEVENTFD_ANY_LENGTH, which kvm-ioctls has no name for.
pub const KVM_CAP_IOEVENTFD_ANY_LENGTH: libc::c_ulong = 122;

/// The KVM device node.
pub const KVM_PATH: &str = "/dev/kvm";

/// The error for a failed open of the KVM node, by what went wrong.
fn open_error(path: &str, e: std::io::Error) -> KvmError {
    match e.kind() {
        std::io::ErrorKind::NotFound => KvmError::NoKvm { path: path.into() },
        std::io::ErrorKind::PermissionDenied => KvmError::KvmPermission { path: path.into() },
        _ => KvmError::KvmOpen {
            path: path.into(),
            source: e,
        },
    }
}

/// An open /dev/kvm.
pub struct HostKvm {
    kvm: Kvm,
}

impl HostKvm {
    /// Open [`KVM_PATH`], with an actionable error for the common failures.
    pub fn open() -> Result<Self, KvmError> {
        Self::open_path(KVM_PATH)
    }

    /// Open the node named by the `TRAPLINE_KVM` environment variable, or
    /// [`KVM_PATH`] when it is unset: an alternate node, and how the tests
    /// check the "no KVM" error.
    pub fn open_from_env() -> Result<Self, KvmError> {
        match std::env::var("TRAPLINE_KVM") {
            // Errors name the variable, so a stale setting is found.
            Ok(path) => Self::open_named(&path, &format!("TRAPLINE_KVM={path}")),
            Err(_) => Self::open(),
        }
    }

    /// Open a KVM device node at `path` (tests use a path that does not
    /// exist to check the error).
    pub fn open_path(path: &str) -> Result<Self, KvmError> {
        Self::open_named(path, path)
    }

    /// Opens `path`; errors call it `name`.
    fn open_named(path: &str, name: &str) -> Result<Self, KvmError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| open_error(name, e))?;
        Self::from_file(file, name)
    }

    fn from_file(file: std::fs::File, name: &str) -> Result<Self, KvmError> {
        // SAFETY: the fd was just opened and is owned by nothing else; Kvm
        // takes ownership of it (and closes it on an error below).
        let kvm = unsafe { Kvm::from_raw_fd(file.into_raw_fd()) };
        let version = kvm.get_api_version();
        if version < 0 {
            // The ioctl failed: a regular file, another device.
            return Err(KvmError::NotKvm { path: name.into() });
        }
        if version != 12 {
            return Err(KvmError::ApiVersion(version));
        }
        Ok(Self { kvm })
    }

    /// The underlying handle.
    pub fn kvm(&self) -> &Kvm {
        &self.kvm
    }

    /// The KVM API version.
    pub fn api_version(&self) -> i32 {
        self.kvm.get_api_version()
    }

    /// Capabilities the lab reports, by name (the architecture's own with
    /// them: [`crate::arch::CAPABILITIES`]).
    pub fn capabilities(&self) -> BTreeMap<String, i64> {
        let caps: &[(&str, Cap)] = &[
            ("irqchip", Cap::Irqchip),
            ("ioeventfd", Cap::Ioeventfd),
            ("irqfd", Cap::Irqfd),
            ("coalesced-mmio", Cap::CoalescedMmio),
            ("coalesced-pio", Cap::CoalescedPio),
            ("readonly-mem", Cap::ReadonlyMem),
            ("immediate-exit", Cap::ImmediateExit),
            ("tsc-control", Cap::TscControl),
            ("get-tsc-khz", Cap::GetTscKhz),
            ("max-vcpus", Cap::MaxVcpus),
            ("nr-memslots", Cap::NrMemslots),
        ];
        let mut out: BTreeMap<String, i64> = caps
            .iter()
            .chain(crate::arch::CAPABILITIES)
            .map(|(n, c)| (n.to_string(), self.kvm.check_extension_int(*c) as i64))
            .collect();
        out.insert(
            "ioeventfd-any-length".into(),
            self.kvm.check_extension_raw(KVM_CAP_IOEVENTFD_ANY_LENGTH) as i64,
        );
        out
    }

    /// Whether ioeventfds of length 0 ("any length") are allowed.
    pub fn has_ioeventfd_any_length(&self) -> bool {
        self.kvm.check_extension_raw(KVM_CAP_IOEVENTFD_ANY_LENGTH) > 0
    }

    /// Whether a capability is present.
    pub fn has(&self, cap: Cap) -> bool {
        self.kvm.check_extension(cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    #[test]
    fn open_errors_say_what_to_do() {
        let missing = open_error("/dev/kvm", Error::from(ErrorKind::NotFound)).to_string();
        assert!(
            missing.contains("does not exist: this host has no KVM"),
            "{missing}"
        );
        // Root cannot be denied /dev/kvm, so the mapping itself is tested.
        let denied = open_error("/dev/kvm", Error::from(ErrorKind::PermissionDenied)).to_string();
        assert!(
            denied.contains("permission denied") && denied.contains("kvm group"),
            "{denied}"
        );
        let other = open_error("/dev/kvm", Error::from(ErrorKind::InvalidInput)).to_string();
        assert!(other.starts_with("cannot open /dev/kvm"), "{other}");
        assert!(matches!(
            HostKvm::open_path("/nonexistent/kvm"),
            Err(KvmError::NoKvm { .. })
        ));
        // A file that opens but is not KVM says so.
        let file = std::env::temp_dir().join(format!("trapline-not-kvm-{}", std::process::id()));
        std::fs::write(&file, "not a device").unwrap();
        let e = HostKvm::open_path(file.to_str().unwrap()).err().unwrap();
        assert!(
            e.to_string()
                .ends_with("is not a KVM device (it does not answer KVM_GET_API_VERSION)"),
            "{e}"
        );
        let _ = std::fs::remove_file(&file);
    }
}
