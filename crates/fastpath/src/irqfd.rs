//! KVM irqfd registrations.

use std::sync::Arc;

use kvm_ioctls::VmFd;
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use crate::FastpathError;

/// An eventfd bound to a GSI: a write to it injects the interrupt without
/// entering trapline. Dropping it unbinds it.
pub struct IrqFd {
    vm: Arc<VmFd>,
    fd: EventFd,
    gsi: u32,
}

impl IrqFd {
    /// Bind a new eventfd to `gsi` (needs an in-kernel irqchip).
    pub fn register(vm: Arc<VmFd>, gsi: u32) -> Result<Self, FastpathError> {
        let fd = EventFd::new(EFD_NONBLOCK).map_err(|source| FastpathError::Host {
            what: "eventfd",
            source,
        })?;
        vm.register_irqfd(&fd, gsi)
            .map_err(|source| FastpathError::IrqFd { gsi, source })?;
        Ok(Self { vm, fd, gsi })
    }

    /// Raise the interrupt (edge: one injection per write).
    pub fn trigger(&self) -> std::io::Result<()> {
        self.fd.write(1)
    }

    /// The eventfd (for handing to another thread).
    pub fn eventfd(&self) -> &EventFd {
        &self.fd
    }

    /// The GSI.
    pub fn gsi(&self) -> u32 {
        self.gsi
    }
}

impl Drop for IrqFd {
    fn drop(&mut self) {
        // Fails only when the VM is already gone.
        let _ = self.vm.unregister_irqfd(&self.fd, self.gsi);
    }
}
