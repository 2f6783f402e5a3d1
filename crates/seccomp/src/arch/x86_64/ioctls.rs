//! x86_64's own KVM ioctls: the general and special registers, read and
//! written whole, and address translation.

use std::mem::size_of;

use kvm_bindings::{kvm_regs, kvm_sregs, kvm_translation};

use crate::kvm_ioctl::{ior, iow, iowr, kvm_ioctl, KvmIoctl};

/// Read the general registers (vCPU fd).
pub const KVM_GET_REGS: u32 = ior(0x81, size_of::<kvm_regs>());
/// Read the special registers (vCPU fd).
pub const KVM_GET_SREGS: u32 = ior(0x83, size_of::<kvm_sregs>());
/// Write the general registers (vCPU fd).
pub const KVM_SET_REGS: u32 = iow(0x82, size_of::<kvm_regs>());
/// Write the special registers (vCPU fd).
pub const KVM_SET_SREGS: u32 = iow(0x84, size_of::<kvm_sregs>());
/// Translate a guest-virtual address through the vCPU's page tables (vCPU fd).
pub const KVM_TRANSLATE: u32 = iowr(0x85, size_of::<kvm_translation>());

pub(crate) const GET_REGS: KvmIoctl = kvm_ioctl!(KVM_GET_REGS);
pub(crate) const GET_SREGS: KvmIoctl = kvm_ioctl!(KVM_GET_SREGS);
pub(crate) const SET_REGS: KvmIoctl = kvm_ioctl!(KVM_SET_REGS);
pub(crate) const SET_SREGS: KvmIoctl = kvm_ioctl!(KVM_SET_SREGS);
pub(crate) const TRANSLATE: KvmIoctl = kvm_ioctl!(KVM_TRANSLATE);

/// This architecture's own ioctls, for name lookups.
pub(crate) const ARCH_IOCTLS: &[KvmIoctl] = &[GET_REGS, GET_SREGS, SET_REGS, SET_SREGS, TRANSLATE];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_match_linux_kvm_h() {
        // Printed by a C program including <linux/kvm.h> (Linux 6.x, x86_64).
        let expected = [
            (KVM_GET_REGS, 0x8090_ae81),
            (KVM_GET_SREGS, 0x8138_ae83),
            (KVM_SET_REGS, 0x4090_ae82),
            (KVM_SET_SREGS, 0x4138_ae84),
            (KVM_TRANSLATE, 0xc018_ae85),
        ];
        for (got, want) in expected {
            assert_eq!(got, want, "{got:#x} != {want:#x}");
        }
    }
}
