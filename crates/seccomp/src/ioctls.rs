//! The KVM ioctl request numbers the filters match on: those both
//! architectures have here, each architecture's own (the register access)
//! in `arch`, re-exported here under the same names.
//!
//! A unit test pins every value against `<linux/kvm.h>` on x86_64 and on
//! aarch64 (the per-architecture one beside that architecture's numbers).

use std::mem::size_of;

use kvm_bindings::{
    kvm_coalesced_mmio_zone, kvm_ioeventfd, kvm_irq_level, kvm_irqfd, kvm_mp_state, kvm_msi,
    kvm_userspace_memory_region,
};

pub use crate::arch::ioctls::*;
pub use crate::kvm_ioctl::KvmIoctl;
use crate::kvm_ioctl::{io, iow, kvm_ioctl};

/// Enter the guest (vCPU fd).
pub const KVM_RUN: u32 = io(0x80);
/// Set the vCPU's multiprocessing state (vCPU fd).
pub const KVM_SET_MP_STATE: u32 = iow(0x99, size_of::<kvm_mp_state>());
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

pub(crate) const RUN: KvmIoctl = kvm_ioctl!(KVM_RUN);
pub(crate) const SET_MP_STATE: KvmIoctl = kvm_ioctl!(KVM_SET_MP_STATE);
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

/// vhost-net's requests (`<linux/vhost.h>`, type 0xAF; not KVM's, the same
/// numbers on both architectures), made by the device's `vhost` back end
/// when the driver sets DRIVER_OK or resets the device.
pub const VHOST_GET_FEATURES: u32 = 0x8008_af00;
/// `VHOST_SET_FEATURES`.
pub const VHOST_SET_FEATURES: u32 = 0x4008_af00;
/// `VHOST_SET_MEM_TABLE`.
pub const VHOST_SET_MEM_TABLE: u32 = 0x4008_af03;
/// `VHOST_SET_VRING_NUM`.
pub const VHOST_SET_VRING_NUM: u32 = 0x4008_af10;
/// `VHOST_SET_VRING_ADDR`.
pub const VHOST_SET_VRING_ADDR: u32 = 0x4028_af11;
/// `VHOST_SET_VRING_BASE`.
pub const VHOST_SET_VRING_BASE: u32 = 0x4008_af12;
/// `VHOST_SET_VRING_KICK`.
pub const VHOST_SET_VRING_KICK: u32 = 0x4008_af20;
/// `VHOST_SET_VRING_CALL`.
pub const VHOST_SET_VRING_CALL: u32 = 0x4008_af21;
/// `VHOST_NET_SET_BACKEND` (also detaches the TAP on reset and drop).
pub const VHOST_NET_SET_BACKEND: u32 = 0x4008_af30;
/// What the vhost back end asks at DRIVER_OK and reset (on the vCPU thread
/// that took the status write).
pub(crate) const VHOST_NET: &[KvmIoctl] = &[
    kvm_ioctl!(VHOST_GET_FEATURES),
    kvm_ioctl!(VHOST_SET_FEATURES),
    kvm_ioctl!(VHOST_SET_MEM_TABLE),
    kvm_ioctl!(VHOST_SET_VRING_NUM),
    kvm_ioctl!(VHOST_SET_VRING_ADDR),
    kvm_ioctl!(VHOST_SET_VRING_BASE),
    kvm_ioctl!(VHOST_SET_VRING_KICK),
    kvm_ioctl!(VHOST_SET_VRING_CALL),
    VHOST_DETACH,
];
/// Detaching the TAP, when the device is dropped at the end of the run.
pub(crate) const VHOST_DETACH: KvmIoctl = kvm_ioctl!(VHOST_NET_SET_BACKEND);

/// The ioctls both architectures have.
const SHARED: &[KvmIoctl] = &[
    RUN,
    SET_MP_STATE,
    SET_USER_MEMORY_REGION,
    IRQ_LINE,
    REGISTER_COALESCED_MMIO,
    UNREGISTER_COALESCED_MMIO,
    IRQFD,
    IOEVENTFD,
    SIGNAL_MSI,
    TCSETS_IOCTL,
];

/// Every ioctl this module knows, for name lookups.
pub(crate) fn all() -> impl Iterator<Item = &'static KvmIoctl> {
    SHARED.iter().chain(ARCH_IOCTLS).chain(VHOST_NET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_numbers_match_linux_kvm_h() {
        // Printed by a C program including <linux/kvm.h> (Linux 6.x); the
        // same on x86_64 and aarch64.
        let expected = [
            (KVM_RUN, 0x0000_ae80),
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
        let all: Vec<_> = all().collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.request, b.request, "{} and {}", a.name, b.name);
            }
        }
    }
}
