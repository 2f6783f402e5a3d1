//! Errors while building or running a machine.

use trapline_bus::BusError;
use trapline_fastpath::FastpathError;
use trapline_kvm::KvmError;
use trapline_loader::LoadError;

/// A machine could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// KVM or the host refused something.
    #[error(transparent)]
    Kvm(#[from] KvmError),
    /// The guest image could not be loaded.
    #[error("cannot load the guest image: {0}")]
    Load(#[from] LoadError),
    /// Two devices claim the same addresses (a trapline bug or a bad
    /// combination of options).
    #[error("device map: {0}")]
    Bus(#[from] BusError),
    /// A fast path could not be registered.
    #[error(transparent)]
    Fastpath(#[from] FastpathError),
    /// A configuration value is out of range.
    #[error("{0}")]
    Config(String),
    /// A host resource (thread, file) could not be created.
    #[error("{what}: {source}")]
    Host {
        /// What was being created.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// A seccomp filter could not be built or installed.
    #[error(transparent)]
    Seccomp(#[from] trapline_seccomp::SeccompError),
    /// A vCPU did not stop when kicked.
    #[error("vCPU {0} did not stop within 5 s of being kicked; giving up on it")]
    VcpuStuck(usize),
}

impl MachineError {
    /// True when the image itself is at fault (as opposed to the host).
    pub fn is_image_error(&self) -> bool {
        matches!(self, MachineError::Load(_))
    }

    /// True when /dev/kvm is missing or not accessible.
    pub fn is_kvm_unavailable(&self) -> bool {
        matches!(
            self,
            MachineError::Kvm(
                KvmError::NoKvm { .. }
                    | KvmError::KvmPermission { .. }
                    | KvmError::KvmOpen { .. }
                    | KvmError::NotKvm { .. }
            )
        )
    }
}
