//! aarch64's own KVM ioctls: registers one at a time, by id (arm64 has no
//! whole-file register access).

use std::mem::size_of;

use kvm_bindings::kvm_one_reg;

use crate::kvm_ioctl::{iow, kvm_ioctl, KvmIoctl};

/// Read one register by its id (vCPU fd; arm64's only register access).
pub const KVM_GET_ONE_REG: u32 = iow(0xab, size_of::<kvm_one_reg>());
/// Write one register by its id (vCPU fd).
pub const KVM_SET_ONE_REG: u32 = iow(0xac, size_of::<kvm_one_reg>());

pub(crate) const GET_ONE_REG: KvmIoctl = kvm_ioctl!(KVM_GET_ONE_REG);
pub(crate) const SET_ONE_REG: KvmIoctl = kvm_ioctl!(KVM_SET_ONE_REG);

/// This architecture's own ioctls, for name lookups.
pub(crate) const ARCH_IOCTLS: &[KvmIoctl] = &[GET_ONE_REG, SET_ONE_REG];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_match_linux_kvm_h() {
        // <linux/kvm.h>'s _IOW encodings with arm64's struct sizes
        // (kvm_one_reg is 16 bytes; the rest as on x86_64).
        let expected = [
            (KVM_GET_ONE_REG, 0x4010_aeab),
            (KVM_SET_ONE_REG, 0x4010_aeac),
        ];
        for (got, want) in expected {
            assert_eq!(got, want, "{got:#x} != {want:#x}");
        }
    }
}
