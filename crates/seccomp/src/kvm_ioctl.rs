//! What a KVM ioctl is to the filters: a name and a request number, the
//! number built with the kernel's encoding.
//!
//! kvm-ioctls keeps its numbers private, so they are rebuilt here with
//! vmm-sys-util's `ioctl_expr` (`include/uapi/asm-generic/ioctl.h`).
//! Argument sizes come from kvm-bindings, so a struct that grows changes the
//! number the same way it does in the kernel.

use vmm_sys_util::ioctl::{ioctl_expr, _IOC_NONE, _IOC_READ, _IOC_WRITE};

/// A KVM ioctl an allow-list names, for documentation and error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvmIoctl {
    /// Its name in `<linux/kvm.h>`.
    pub name: &'static str,
    /// The request number.
    pub request: u32,
}

const KVMIO: u32 = 0xAE;

/// Request numbers fit in 32 bits (the filter compares the low 32 bits of
/// the ioctl argument), and every argument size here is far below the
/// 14-bit size field.
const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
    ioctl_expr(dir, KVMIO, nr, size as u32) as u32
}
/// `_IO(KVMIO, nr)`.
pub(crate) const fn io(nr: u32) -> u32 {
    ioc(_IOC_NONE, nr, 0)
}
/// `_IOR(KVMIO, nr, size)`.
#[allow(dead_code)] // x86_64's register reads only
pub(crate) const fn ior(nr: u32, size: usize) -> u32 {
    ioc(_IOC_READ, nr, size)
}
/// `_IOW(KVMIO, nr, size)`.
pub(crate) const fn iow(nr: u32, size: usize) -> u32 {
    ioc(_IOC_WRITE, nr, size)
}
/// `_IOWR(KVMIO, nr, size)`.
#[allow(dead_code)] // x86_64's KVM_TRANSLATE only
pub(crate) const fn iowr(nr: u32, size: usize) -> u32 {
    ioc(_IOC_READ | _IOC_WRITE, nr, size)
}

/// The [`KvmIoctl`] of a request-number constant, named as the constant.
macro_rules! kvm_ioctl {
    ($name:ident) => {
        $crate::kvm_ioctl::KvmIoctl {
            name: stringify!($name),
            request: $name,
        }
    };
}
pub(crate) use kvm_ioctl;
