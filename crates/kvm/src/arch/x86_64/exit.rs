//! x86's exit hook: the exits only x86 has. An IOAPIC EOI (split irqchip
//! only) is counted and resumed: trapline has no user-space IOAPIC, so no
//! level-triggered pin ever waits for one.

use kvm_bindings::kvm_run;
use kvm_ioctls::{VcpuExit, VcpuFd};
use trapline_bus::ExitKind;

use crate::dispatch::ExitOutcome;
use crate::exit::Exit;
use crate::vcpu::{VcpuContext, VcpuEnd};

/// An exit only x86 has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchExit {
    /// KVM_EXIT_IOAPIC_EOI: an EOI for a level-triggered vector, for a
    /// user-space IOAPIC.
    IoapicEoi,
}

impl ArchExit {
    /// What the exit profile keys it as.
    #[inline(always)]
    pub fn kind(self) -> ExitKind {
        match self {
            ArchExit::IoapicEoi => ExitKind::Other,
        }
    }
}

/// What only the vCPU can do after an x86 exit: nothing (no x86 exit asks
/// for it), so no value exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VcpuAction {}

/// Decode the exits [`Exit::decode`] does not know.
#[inline]
pub fn decode_exit(exit: Result<VcpuExit<'_>, kvm_ioctls::Error>) -> Exit<'_> {
    match exit {
        Ok(VcpuExit::IoapicEoi(_)) => Exit::Arch(ArchExit::IoapicEoi),
        other => Exit::unknown(other),
    }
}

/// Handle an x86 exit: count it and say what the loop does next.
#[inline]
pub fn handle_exit(ctx: &VcpuContext, exit: ArchExit) -> ExitOutcome {
    match exit {
        ArchExit::IoapicEoi => {
            ctx.counters.bump(ExitKind::Other);
            ExitOutcome::Resume
        }
    }
}

/// Do what `action` asks of the vCPU (never called: no value exists).
///
/// # Safety
/// None needed; the signature is arm64's, whose version reads `run`.
#[inline]
pub unsafe fn finish_exit(
    _vcpu: &mut VcpuFd,
    _run: *const kvm_run,
    _ctx: &VcpuContext,
    action: VcpuAction,
) -> Option<VcpuEnd> {
    match action {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::tests::Fixture;

    #[test]
    fn an_ioapic_eoi_resumes_and_is_counted() {
        let f = Fixture::new();
        assert_eq!(
            f.dispatch(Ok(VcpuExit::IoapicEoi(0x30)), 1),
            ExitOutcome::Resume
        );
        assert_eq!(f.count(ExitKind::Other), 1);
        assert_eq!(
            Exit::decode(Ok(VcpuExit::IoapicEoi(0x30)), 1).key(),
            (ExitKind::Other, 0)
        );
    }
}
