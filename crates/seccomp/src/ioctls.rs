//! The KVM ioctl request numbers the filters match on.
//!
//! kvm-ioctls keeps its numbers private, so they are rebuilt here with
//! vmm-sys-util's `ioctl_expr`, the kernel's encoding
//! (`include/uapi/asm-generic/ioctl.h`). Argument sizes come from
//! kvm-bindings, so a struct that grows changes the number the same way it
//! does in the kernel. A unit test pins every value against `<linux/kvm.h>`
//! on x86_64 and on aarch64.

use std::mem::size_of;

#[cfg(target_arch = "aarch64")]
use kvm_bindings::kvm_one_reg;
use kvm_bindings::{
    kvm_coalesced_mmio_zone, kvm_ioeventfd, kvm_irq_level, kvm_irqfd, kvm_mp_state, kvm_msi,
    kvm_userspace_memory_region,
};
#[cfg(target_arch = "x86_64")]
use kvm_bindings::{kvm_regs, kvm_sregs, kvm_translation};
#[cfg(target_arch = "x86_64")]
use vmm_sys_util::ioctl::_IOC_READ;
use vmm_sys_util::ioctl::{ioctl_expr, _IOC_NONE, _IOC_WRITE};

const KVMIO: u32 = 0xAE;

/// Request numbers fit in 32 bits (the filter compares the low 32 bits of
/// the ioctl argument), and every argument size here is far below the
/// 14-bit size field.
const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
    ioctl_expr(dir, KVMIO, nr, size as u32) as u32
}
const fn io(nr: u32) -> u32 {
    ioc(_IOC_NONE, nr, 0)
}
#[cfg(target_arch = "x86_64")]
const fn ior(nr: u32, size: usize) -> u32 {
    ioc(_IOC_READ, nr, size)
}
const fn iow(nr: u32, size: usize) -> u32 {
    ioc(_IOC_WRITE, nr, size)
}
#[cfg(target_arch = "x86_64")]
const fn iowr(nr: u32, size: usize) -> u32 {
    ioc(_IOC_READ | _IOC_WRITE, nr, size)
}

/// Enter the guest (vCPU fd).
pub const KVM_RUN: u32 = io(0x80);
#[cfg(target_arch = "x86_64")]
/// Read the general registers (vCPU fd).
pub const KVM_GET_REGS: u32 = ior(0x81, size_of::<kvm_regs>());
#[cfg(target_arch = "x86_64")]
/// Read the special registers (vCPU fd).
pub const KVM_GET_SREGS: u32 = ior(0x83, size_of::<kvm_sregs>());
#[cfg(target_arch = "x86_64")]
/// Write the general registers (vCPU fd).
pub const KVM_SET_REGS: u32 = iow(0x82, size_of::<kvm_regs>());
#[cfg(target_arch = "x86_64")]
/// Write the special registers (vCPU fd).
pub const KVM_SET_SREGS: u32 = iow(0x84, size_of::<kvm_sregs>());
/// Read one register by its id (vCPU fd; arm64's only register access).
#[cfg(target_arch = "aarch64")]
pub const KVM_GET_ONE_REG: u32 = iow(0xab, size_of::<kvm_one_reg>());
/// Write one register by its id (vCPU fd).
#[cfg(target_arch = "aarch64")]
pub const KVM_SET_ONE_REG: u32 = iow(0xac, size_of::<kvm_one_reg>());
/// Set the vCPU's multiprocessing state (vCPU fd).
pub const KVM_SET_MP_STATE: u32 = iow(0x99, size_of::<kvm_mp_state>());
#[cfg(target_arch = "x86_64")]
/// Translate a guest-virtual address through the vCPU's page tables (vCPU fd).
pub const KVM_TRANSLATE: u32 = iowr(0x85, size_of::<kvm_translation>());
/// Add, move or delete a memslot (VM fd).
pub const KVM_SET_USER_MEMORY_REGION: u32 = iow(0x46, size_of::<kvm_userspace_memory_region>());
/// Raise or lower an irqchip input (VM fd).
pub const KVM_IRQ_LINE: u32 = iow(0x61, size_of::<kvm_irq_level>());
/// Add a coalesced MMIO/PIO zone (VM fd).
pub const KVM_REGISTER_COALESCED_MMIO: u32 = iow(0x67, size_of::<kvm_coalesced_mmio_zone>());
/// Remove a coalesced MMIO/PIO zone (VM fd).
pub const KVM_UNREGISTER_COALESCED_MMIO: u32 = iow(0x68, size_of::<kvm_coalesced_mmio_zone>());
/// Bind or unbind an irqfd (VM fd).
pub const KVM_IRQFD: u32 = iow(0x76, size_of::<kvm_irqfd>());
/// Bind or unbind an ioeventfd (VM fd).
pub const KVM_IOEVENTFD: u32 = iow(0x79, size_of::<kvm_ioeventfd>());
/// Inject an MSI (VM fd).
pub const KVM_SIGNAL_MSI: u32 = iow(0xa5, size_of::<kvm_msi>());

/// A KVM ioctl an allow-list names, for documentation and error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvmIoctl {
    /// Its name in `<linux/kvm.h>`.
    pub name: &'static str,
    /// The request number.
    pub request: u32,
}

macro_rules! kvm_ioctl {
    ($name:ident) => {
        KvmIoctl {
            name: stringify!($name),
            request: $name,
        }
    };
}

pub(crate) const RUN: KvmIoctl = kvm_ioctl!(KVM_RUN);
#[cfg(target_arch = "x86_64")]
pub(crate) const GET_REGS: KvmIoctl = kvm_ioctl!(KVM_GET_REGS);
#[cfg(target_arch = "x86_64")]
pub(crate) const GET_SREGS: KvmIoctl = kvm_ioctl!(KVM_GET_SREGS);
#[cfg(target_arch = "x86_64")]
pub(crate) const SET_REGS: KvmIoctl = kvm_ioctl!(KVM_SET_REGS);
#[cfg(target_arch = "x86_64")]
pub(crate) const SET_SREGS: KvmIoctl = kvm_ioctl!(KVM_SET_SREGS);
#[cfg(target_arch = "aarch64")]
pub(crate) const GET_ONE_REG: KvmIoctl = kvm_ioctl!(KVM_GET_ONE_REG);
#[cfg(target_arch = "aarch64")]
pub(crate) const SET_ONE_REG: KvmIoctl = kvm_ioctl!(KVM_SET_ONE_REG);
pub(crate) const SET_MP_STATE: KvmIoctl = kvm_ioctl!(KVM_SET_MP_STATE);
#[cfg(target_arch = "x86_64")]
pub(crate) const TRANSLATE: KvmIoctl = kvm_ioctl!(KVM_TRANSLATE);
pub(crate) const SET_USER_MEMORY_REGION: KvmIoctl = kvm_ioctl!(KVM_SET_USER_MEMORY_REGION);
pub(crate) const IRQ_LINE: KvmIoctl = kvm_ioctl!(KVM_IRQ_LINE);
pub(crate) const REGISTER_COALESCED_MMIO: KvmIoctl = kvm_ioctl!(KVM_REGISTER_COALESCED_MMIO);
pub(crate) const UNREGISTER_COALESCED_MMIO: KvmIoctl = kvm_ioctl!(KVM_UNREGISTER_COALESCED_MMIO);
pub(crate) const IRQFD: KvmIoctl = kvm_ioctl!(KVM_IRQFD);
pub(crate) const IOEVENTFD: KvmIoctl = kvm_ioctl!(KVM_IOEVENTFD);
pub(crate) const SIGNAL_MSI: KvmIoctl = kvm_ioctl!(KVM_SIGNAL_MSI);
/// Not KVM's: the terminal's TCSETS (`tcsetattr(TCSANOW)`), `<asm/ioctls.h>`.
pub const TCSETS: u32 = 0x5402;
pub(crate) const TCSETS_IOCTL: KvmIoctl = KvmIoctl {
    name: "TCSETS",
    request: TCSETS,
};

/// Every ioctl this module knows, for name lookups.
pub(crate) const ALL: &[KvmIoctl] = &[
    RUN,
    #[cfg(target_arch = "x86_64")]
    GET_REGS,
    #[cfg(target_arch = "x86_64")]
    GET_SREGS,
    #[cfg(target_arch = "x86_64")]
    SET_REGS,
    #[cfg(target_arch = "x86_64")]
    SET_SREGS,
    #[cfg(target_arch = "aarch64")]
    GET_ONE_REG,
    #[cfg(target_arch = "aarch64")]
    SET_ONE_REG,
    SET_MP_STATE,
    #[cfg(target_arch = "x86_64")]
    TRANSLATE,
    SET_USER_MEMORY_REGION,
    IRQ_LINE,
    REGISTER_COALESCED_MMIO,
    UNREGISTER_COALESCED_MMIO,
    IRQFD,
    IOEVENTFD,
    SIGNAL_MSI,
    TCSETS_IOCTL,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn numbers_match_linux_kvm_h() {
        // Printed by a C program including <linux/kvm.h> (Linux 6.x, x86_64).
        let expected = [
            (KVM_RUN, 0x0000_ae80),
            (KVM_GET_REGS, 0x8090_ae81),
            (KVM_GET_SREGS, 0x8138_ae83),
            (KVM_SET_REGS, 0x4090_ae82),
            (KVM_SET_SREGS, 0x4138_ae84),
            (KVM_SET_MP_STATE, 0x4004_ae99),
            (KVM_TRANSLATE, 0xc018_ae85),
            (KVM_SET_USER_MEMORY_REGION, 0x4020_ae46),
            (KVM_IRQ_LINE, 0x4008_ae61),
            (KVM_REGISTER_COALESCED_MMIO, 0x4010_ae67),
            (KVM_UNREGISTER_COALESCED_MMIO, 0x4010_ae68),
            (KVM_IRQFD, 0x4020_ae76),
            (KVM_IOEVENTFD, 0x4040_ae79),
            (KVM_SIGNAL_MSI, 0x4020_aea5),
        ];
        for (got, want) in expected {
            assert_eq!(got, want, "{got:#x} != {want:#x}");
        }
    }

    #[test]
    #[cfg(target_arch = "aarch64")]
    fn numbers_match_linux_kvm_h() {
        // <linux/kvm.h>'s _IOW encodings with arm64's struct sizes
        // (kvm_one_reg is 16 bytes; the rest as on x86_64).
        let expected = [
            (KVM_RUN, 0x0000_ae80),
            (KVM_GET_ONE_REG, 0x4010_aeab),
            (KVM_SET_ONE_REG, 0x4010_aeac),
            (KVM_SET_MP_STATE, 0x4004_ae99),
            (KVM_SET_USER_MEMORY_REGION, 0x4020_ae46),
            (KVM_IRQ_LINE, 0x4008_ae61),
            (KVM_REGISTER_COALESCED_MMIO, 0x4010_ae67),
            (KVM_UNREGISTER_COALESCED_MMIO, 0x4010_ae68),
            (KVM_IRQFD, 0x4020_ae76),
            (KVM_IOEVENTFD, 0x4040_ae79),
            (KVM_SIGNAL_MSI, 0x4020_aea5),
        ];
        for (got, want) in expected {
            assert_eq!(got, want, "{got:#x} != {want:#x}");
        }
    }

    #[test]
    fn names_are_unique_and_numbers_distinct() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.request, b.request, "{} and {}", a.name, b.name);
            }
        }
    }
}
