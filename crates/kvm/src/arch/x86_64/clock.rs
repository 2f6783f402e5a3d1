//! The guest's TSC against the host's: KVM_VCPU_TSC_OFFSET (group
//! KVM_VCPU_TSC_CTRL of the vCPU's device attributes, Linux 5.16 and
//! later), so an exit's host stamps can be put on the guest's time line.

use kvm_bindings::{kvm_device_attr, KVM_VCPU_TSC_CTRL, KVM_VCPU_TSC_OFFSET};
use kvm_ioctls::VcpuFd;
use trapline_abi::ClockAlign;
use vmm_sys_util::ioctl::ioctl_with_ref;
use vmm_sys_util::ioctl_iow_nr;

ioctl_iow_nr!(
    KVM_GET_DEVICE_ATTR,
    kvm_bindings::KVMIO,
    0xe2,
    kvm_device_attr
);
ioctl_iow_nr!(
    KVM_HAS_DEVICE_ATTR,
    kvm_bindings::KVMIO,
    0xe3,
    kvm_device_attr
);

/// The guest's clock minus the host's (mod 2^64), its uncertainty in
/// ticks and how it was found; or why it could not be.
///
/// KVM's offset is exact as long as the guest's TSC runs at the host's
/// rate: trapline never sets KVM_SET_TSC_KHZ, so it does (with TSC
/// scaling the guest's TSC would be `host * ratio + offset` and the
/// offset alone would not do; the guest's ordering check, every leg
/// non-negative, catches that).
pub fn clock_offset(vcpu: &VcpuFd) -> Result<(u64, u64, ClockAlign), String> {
    let mut offset = 0u64;
    let attr = kvm_device_attr {
        flags: 0,
        group: KVM_VCPU_TSC_CTRL,
        attr: KVM_VCPU_TSC_OFFSET.into(),
        addr: &mut offset as *mut u64 as u64,
    };
    // SAFETY: KVM_HAS_DEVICE_ATTR reads the attribute descriptor only.
    if unsafe { ioctl_with_ref(vcpu, KVM_HAS_DEVICE_ATTR(), &attr) } != 0 {
        return Err(format!(
            "this kernel's KVM has no KVM_VCPU_TSC_OFFSET ({})",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: KVM_GET_DEVICE_ATTR writes one u64 to `addr`, which points
    // at `offset`, alive for the call.
    if unsafe { ioctl_with_ref(vcpu, KVM_GET_DEVICE_ATTR(), &attr) } != 0 {
        return Err(format!(
            "KVM_GET_DEVICE_ATTR(KVM_VCPU_TSC_OFFSET): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok((offset, 0, ClockAlign::TscOffset))
}
