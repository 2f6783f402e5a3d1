//! SMCCC calls answered by trapline: KVM's SMCCC filter (the VM device
//! attribute group `KVM_ARM_VM_SMCCC_CTRL`, attribute
//! `KVM_ARM_VM_SMCCC_FILTER`, Linux 6.4+) forwards a range of function ids
//! to user space as `KVM_EXIT_HYPERCALL` (action `FWD_TO_USER`); the vCPU's
//! PC is already past the HVC/SMC, and the results go back in x0–x3.
//!
//! [`decode`] and [`answer`] are plain logic (unit-tested without KVM);
//! [`filter_offered`] and [`forward_to_user`] talk to the VM fd.

use kvm_bindings::{
    kvm_device_attr, kvm_smccc_filter, kvm_smccc_filter_action_KVM_SMCCC_FILTER_FWD_TO_USER,
    KVM_ARM_VM_SMCCC_CTRL, KVM_ARM_VM_SMCCC_FILTER, KVM_HYPERCALL_EXIT_16BIT,
    KVM_HYPERCALL_EXIT_SMC,
};
use kvm_ioctls::VmFd;
use trapline_abi as abi;

use crate::KvmError;

/// How the guest made the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conduit {
    /// `HVC`.
    Hvc,
    /// `SMC`.
    Smc,
}

/// One SMCCC call KVM forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmcccCall {
    /// The function id (w0).
    pub function: u32,
    /// HVC or SMC.
    pub conduit: Conduit,
}

/// Decode `kvm_run.hypercall` as arm64 fills it: `nr` is the function id,
/// `flags` says SMC (bit 0) and a 16-bit (AArch32 Thumb) instruction
/// (bit 1), which an AArch64 guest never uses. `None` for an id wider than
/// 32 bits or a 16-bit instruction (not an AArch64 SMCCC call).
pub fn decode(nr: u64, flags: u64) -> Option<SmcccCall> {
    if flags & u64::from(KVM_HYPERCALL_EXIT_16BIT) != 0 {
        return None;
    }
    let function = u32::try_from(nr).ok()?;
    let conduit = if flags & u64::from(KVM_HYPERCALL_EXIT_SMC) != 0 {
        Conduit::Smc
    } else {
        Conduit::Hvc
    };
    Some(SmcccCall { function, conduit })
}

/// trapline's answer in x0: the lab's probe call gets
/// [`abi::SMCCC_PROBE_USER_RET`]; anything else (a call the filter
/// forwarded that trapline has no service for, or one that did not decode)
/// NOT_SUPPORTED, as SMCCC asks of an unknown function.
pub fn answer(call: Option<SmcccCall>) -> u64 {
    match call {
        Some(SmcccCall {
            function: abi::SMCCC_PROBE_USER_FN,
            conduit: Conduit::Hvc,
        }) => abi::SMCCC_PROBE_USER_RET,
        _ => abi::SMCCC_RET_NOT_SUPPORTED,
    }
}

fn filter_attr(filter: Option<&kvm_smccc_filter>) -> kvm_device_attr {
    kvm_device_attr {
        flags: 0,
        group: KVM_ARM_VM_SMCCC_CTRL,
        attr: KVM_ARM_VM_SMCCC_FILTER.into(),
        addr: filter.map_or(0, |f| f as *const kvm_smccc_filter as u64),
    }
}

/// Why this host's KVM cannot forward SMCCC calls to trapline, or `None`
/// when it can (KVM_HAS_DEVICE_ATTR on the VM fd).
pub fn filter_offered(vm: &VmFd) -> Option<String> {
    match vm.has_device_attr(&filter_attr(None)) {
        Ok(()) => None,
        Err(e) => Some(format!(
            "this host's KVM has no SMCCC filter (KVM_HAS_DEVICE_ATTR KVM_ARM_VM_SMCCC_CTRL/\
             KVM_ARM_VM_SMCCC_FILTER on the VM fd: {e}; Linux 6.4 and later have it), so an \
             HVC cannot be forwarded to user space"
        )),
    }
}

/// The filter entry forwarding `n` function ids from `base` to user space.
pub fn forward_filter(base: u32, n: u32) -> kvm_smccc_filter {
    kvm_smccc_filter {
        base,
        nr_functions: n,
        action: kvm_smccc_filter_action_KVM_SMCCC_FILTER_FWD_TO_USER as u8,
        pad: [0; 15],
    }
}

/// Have KVM forward `n` function ids from `base` to trapline (before the
/// VM's first KVM_RUN).
pub fn forward_to_user(vm: &VmFd, base: u32, n: u32) -> Result<(), KvmError> {
    let filter = forward_filter(base, n);
    vm.set_device_attr(&filter_attr(Some(&filter)))
        .map_err(KvmError::ioctl(
            "KVM_SET_DEVICE_ATTR (KVM_ARM_VM_SMCCC_FILTER)",
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hvc_of_the_probe_s_function_is_answered_and_anything_else_is_not_supported() {
        let hvc = decode(abi::SMCCC_PROBE_USER_FN.into(), 0);
        assert_eq!(
            hvc,
            Some(SmcccCall {
                function: abi::SMCCC_PROBE_USER_FN,
                conduit: Conduit::Hvc
            })
        );
        assert_eq!(answer(hvc), abi::SMCCC_PROBE_USER_RET);
        let smc = decode(
            abi::SMCCC_PROBE_USER_FN.into(),
            KVM_HYPERCALL_EXIT_SMC.into(),
        );
        assert_eq!(smc.map(|c| c.conduit), Some(Conduit::Smc));
        assert_eq!(answer(smc), abi::SMCCC_RET_NOT_SUPPORTED);
        let other = decode(abi::SMCCC_PROBE_UNKNOWN_FN.into(), 0);
        assert_eq!(answer(other), abi::SMCCC_RET_NOT_SUPPORTED);
        // Not AArch64 SMCCC calls.
        assert_eq!(decode(1 << 32, 0), None);
        assert_eq!(
            decode(
                abi::SMCCC_PROBE_USER_FN.into(),
                KVM_HYPERCALL_EXIT_16BIT.into()
            ),
            None
        );
        assert_eq!(answer(None), abi::SMCCC_RET_NOT_SUPPORTED);
    }

    #[test]
    fn the_filter_forwards_exactly_the_range_asked_for() {
        let f = forward_filter(abi::SMCCC_PROBE_USER_FN, 1);
        assert_eq!(f.base, 0x8200_ff11);
        assert_eq!(f.nr_functions, 1);
        assert_eq!(f.action, 2, "KVM_SMCCC_FILTER_FWD_TO_USER");
        let a = filter_attr(Some(&f));
        assert_eq!((a.group, a.attr), (0, 0));
        assert_ne!(a.addr, 0);
        assert_eq!(filter_attr(None).addr, 0);
    }
}
