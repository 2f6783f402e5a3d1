//! What a person needs when KVM cannot run a guest: the internal error's
//! suberror by name and the vCPU's state as text. The state itself (which
//! registers, how the code at the PC is shown) is the architecture's
//! (`arch::<arch>::crash`, re-exported here). Captured once, on the vCPU
//! thread, after the final exit: never on the hot path.

use kvm_bindings::{
    KVM_INTERNAL_ERROR_DELIVERY_EV, KVM_INTERNAL_ERROR_EMULATION, KVM_INTERNAL_ERROR_SIMUL_EX,
    KVM_INTERNAL_ERROR_UNEXPECTED_EXIT_REASON,
};

pub use crate::arch::crash::*;

/// The suberror of KVM_EXIT_INTERNAL_ERROR in words.
pub fn suberror_name(suberror: u32) -> &'static str {
    match suberror {
        KVM_INTERNAL_ERROR_EMULATION => "emulation failure",
        KVM_INTERNAL_ERROR_SIMUL_EX => "exception while delivering an exception",
        KVM_INTERNAL_ERROR_DELIVERY_EV => "event delivery failed (exit during IDT vectoring)",
        KVM_INTERNAL_ERROR_UNEXPECTED_EXIT_REASON => "unexpected exit reason",
        _ => "unknown suberror",
    }
}

/// A vCPU's state, rendered for people (registers, segments, control
/// registers, code bytes around RIP).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuDump(pub String);

impl std::fmt::Display for CpuDump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suberrors_have_names() {
        assert_eq!(suberror_name(1), "emulation failure");
        assert_eq!(
            suberror_name(3),
            "event delivery failed (exit during IDT vectoring)"
        );
        assert_eq!(suberror_name(99), "unknown suberror");
    }
}
