//! KVM ioeventfd registrations.

use std::sync::Arc;

use std::os::fd::AsRawFd;

use kvm_ioctls::{IoEventAddress, NoDatamatch, VmFd};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use crate::FastpathError;

/// The address space an ioeventfd or coalesced zone lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Port I/O.
    Pio,
    /// Memory-mapped I/O.
    Mmio,
}

impl Space {
    /// "pio" or "mmio".
    pub fn name(self) -> &'static str {
        match self {
            Space::Pio => "pio",
            Space::Mmio => "mmio",
        }
    }

    pub(crate) fn address(self, addr: u64) -> IoEventAddress {
        match self {
            Space::Pio => IoEventAddress::Pio(addr),
            Space::Mmio => IoEventAddress::Mmio(addr),
        }
    }
}

/// What a write must look like for KVM to signal the eventfd. The width of
/// the match is the width of the access KVM compares against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datamatch {
    /// Any write at the address, of any length (KVM length 0: on MMIO this
    /// is the "fast MMIO" bus that VMX completes without decoding).
    Any,
    /// A 1-byte write of this value.
    U8(u8),
    /// A 2-byte write of this value.
    U16(u16),
    /// A 4-byte write of this value.
    U32(u32),
    /// An 8-byte write of this value.
    U64(u64),
    /// Any value written with exactly this access length (1, 2, 4 or 8):
    /// the wildcard QEMU registers on ports. Unlike [`Datamatch::Any`]
    /// (length 0) it does not mix zero-length entries into KVM's PIO bus,
    /// whose ordered lookup can then miss other ioeventfds on nearby ports
    /// (seen here with coalesced PIO zones, length-0 wildcards and two
    /// datamatch ioeventfds sharing a port).
    AnyOfLen(u32),
}

impl Datamatch {
    /// The access length KVM registers (0 = any).
    pub fn len(self) -> u32 {
        match self {
            Datamatch::Any => 0,
            Datamatch::U8(_) => 1,
            Datamatch::U16(_) => 2,
            Datamatch::U32(_) => 4,
            Datamatch::U64(_) => 8,
            Datamatch::AnyOfLen(l) => l,
        }
    }

    /// True when KVM matches any length (length 0).
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// True for [`Datamatch::Any`].
    pub fn is_any(self) -> bool {
        self == Datamatch::Any
    }
}

// kvm-ioctls derives the length and the DATAMATCH flag from the Rust type of
// the datamatch argument, so each case is its own call.
fn assign(
    vm: &VmFd,
    fd: &EventFd,
    addr: &IoEventAddress,
    m: Datamatch,
    on: bool,
) -> Result<(), kvm_ioctls::Error> {
    match (m, on) {
        (Datamatch::Any, true) => vm.register_ioevent(fd, addr, NoDatamatch),
        (Datamatch::Any, false) => vm.unregister_ioevent(fd, addr, NoDatamatch),
        (Datamatch::U8(v), true) => vm.register_ioevent(fd, addr, v),
        (Datamatch::U8(v), false) => vm.unregister_ioevent(fd, addr, v),
        (Datamatch::U16(v), true) => vm.register_ioevent(fd, addr, v),
        (Datamatch::U16(v), false) => vm.unregister_ioevent(fd, addr, v),
        (Datamatch::U32(v), true) => vm.register_ioevent(fd, addr, v),
        (Datamatch::U32(v), false) => vm.unregister_ioevent(fd, addr, v),
        (Datamatch::U64(v), true) => vm.register_ioevent(fd, addr, v),
        (Datamatch::U64(v), false) => vm.unregister_ioevent(fd, addr, v),
        (Datamatch::AnyOfLen(len), on) => raw_wildcard(vm, fd, addr, len, on),
    }
}

vmm_sys_util::ioctl_iow_nr!(
    KVM_IOEVENTFD,
    kvm_bindings::KVMIO,
    0x79,
    kvm_bindings::kvm_ioeventfd
);

/// KVM_IOEVENTFD without DATAMATCH but with a length: kvm-ioctls derives
/// the length from the datamatch type, so a sized wildcard needs the ioctl
/// itself.
fn raw_wildcard(
    vm: &VmFd,
    fd: &EventFd,
    addr: &IoEventAddress,
    len: u32,
    on: bool,
) -> Result<(), kvm_ioctls::Error> {
    let (addr, pio) = match *addr {
        IoEventAddress::Pio(a) => (a, true),
        IoEventAddress::Mmio(a) => (a, false),
    };
    let mut flags = 0;
    if pio {
        flags |= 1 << kvm_bindings::kvm_ioeventfd_flag_nr_pio;
    }
    if !on {
        flags |= 1 << kvm_bindings::kvm_ioeventfd_flag_nr_deassign;
    }
    let req = kvm_bindings::kvm_ioeventfd {
        addr,
        len,
        fd: fd.as_raw_fd(),
        flags,
        ..Default::default()
    };
    // SAFETY: a VM fd, a fully initialised kvm_ioeventfd the kernel only
    // reads, and the return value is checked.
    let r = unsafe { vmm_sys_util::ioctl::ioctl_with_ref(vm, KVM_IOEVENTFD(), &req) };
    if r == 0 {
        Ok(())
    } else {
        Err(kvm_ioctls::Error::last())
    }
}

/// A registered ioeventfd. Dropping it deregisters it.
pub struct IoEvent {
    vm: Arc<VmFd>,
    fd: EventFd,
    space: Space,
    addr: u64,
    datamatch: Datamatch,
}

impl IoEvent {
    /// Register a new non-blocking eventfd at `addr`.
    pub fn register(
        vm: Arc<VmFd>,
        space: Space,
        addr: u64,
        datamatch: Datamatch,
    ) -> Result<Self, FastpathError> {
        let fd = EventFd::new(EFD_NONBLOCK).map_err(|source| FastpathError::Host {
            what: "eventfd",
            source,
        })?;
        assign(&vm, &fd, &space.address(addr), datamatch, true).map_err(|source| {
            FastpathError::IoEvent {
                space: space.name(),
                addr,
                len: datamatch.len(),
                source,
            }
        })?;
        Ok(Self {
            vm,
            fd,
            space,
            addr,
            datamatch,
        })
    }

    /// The eventfd KVM signals.
    pub fn eventfd(&self) -> &EventFd {
        &self.fd
    }

    /// Read and reset the eventfd counter: the number of matching guest
    /// writes since the last call (0 if none).
    pub fn take_count(&self) -> u64 {
        // EAGAIN on a non-blocking eventfd means the counter is zero.
        self.fd.read().unwrap_or(0)
    }

    /// Where it is registered.
    pub fn space(&self) -> Space {
        self.space
    }

    /// Guest address.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// What it matches.
    pub fn datamatch(&self) -> Datamatch {
        self.datamatch
    }
}

impl Drop for IoEvent {
    fn drop(&mut self) {
        // Deassigning can only fail if the registration is already gone
        // (the VM is being torn down); nothing is left to undo then.
        let _ = assign(
            &self.vm,
            &self.fd,
            &self.space.address(self.addr),
            self.datamatch,
            false,
        );
    }
}

impl std::fmt::Debug for IoEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "IoEvent({} {:#x} {:?})",
            self.space.name(),
            self.addr,
            self.datamatch
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datamatch_lengths_follow_the_width() {
        assert_eq!(Datamatch::Any.len(), 0);
        assert_eq!(Datamatch::U8(1).len(), 1);
        assert_eq!(Datamatch::U16(1).len(), 2);
        assert_eq!(Datamatch::U32(1).len(), 4);
        assert_eq!(Datamatch::U64(1).len(), 8);
        assert!(Datamatch::Any.is_any());
        assert_eq!(Datamatch::AnyOfLen(1).len(), 1);
        assert!(!Datamatch::AnyOfLen(4).is_any());
    }
}
