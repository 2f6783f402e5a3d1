//! arm64's exit hook: the exits only arm64 has. An SMCCC call KVM's filter
//! forwarded (KVM_EXIT_HYPERCALL) is answered in x0; an MMIO access KVM
//! cannot decode (KVM_EXIT_ARM_NISV, or KVM_RUN failing with ENOSYS where
//! that exit is not enabled) ends the vCPU with a line naming it.

use kvm_bindings::{kvm_run, KVM_EXIT_ARM_NISV};
use kvm_ioctls::{VcpuExit, VcpuFd};
use trapline_bus::ExitKind;

use super::{crash, regs, smccc};
use crate::dispatch::ExitOutcome;
use crate::exit::Exit;
use crate::vcpu::{VcpuContext, VcpuEnd};

/// An exit only arm64 has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchExit {
    /// An SMCCC call KVM's filter forwarded (`None`: one that did not
    /// decode as an AArch64 call).
    Smccc(Option<smccc::SmcccCall>),
    /// An MMIO access KVM cannot decode (no valid syndrome, e.g. a
    /// load/store pair or one with writeback).
    Undecodable,
}

impl ArchExit {
    /// What the exit profile keys it as.
    #[inline(always)]
    pub fn kind(self) -> ExitKind {
        match self {
            ArchExit::Smccc(_) => ExitKind::Hypercall,
            ArchExit::Undecodable => ExitKind::Other,
        }
    }
}

/// What only the vCPU can do after an arm64 exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VcpuAction {
    /// Put this answer in x0 (the PC is already past the call) and resume.
    SmcccReturn(u64),
    /// End with the line naming the access KVM could not decode.
    Undecodable,
}

/// Decode the exits [`Exit::decode`] does not know.
#[inline]
pub fn decode_exit(exit: Result<VcpuExit<'_>, kvm_ioctls::Error>) -> Exit<'_> {
    match exit {
        // kvm-ioctls names arm64's `flags` by x86's `longmode` (a union).
        Ok(VcpuExit::Hypercall(h)) => {
            Exit::Arch(ArchExit::Smccc(smccc::decode(h.nr, h.longmode.into())))
        }
        Ok(VcpuExit::Unsupported(KVM_EXIT_ARM_NISV)) => Exit::Arch(ArchExit::Undecodable),
        Err(e) if e.errno() == libc::ENOSYS => Exit::Arch(ArchExit::Undecodable),
        other => Exit::unknown(other),
    }
}

/// Handle an arm64 exit: count it and say what the loop does next.
#[inline]
pub fn handle_exit(ctx: &VcpuContext, exit: ArchExit) -> ExitOutcome {
    match exit {
        ArchExit::Smccc(call) => {
            ctx.counters.bump(ExitKind::Hypercall);
            ExitOutcome::Arch(VcpuAction::SmcccReturn(smccc::answer(call)))
        }
        ArchExit::Undecodable => ExitOutcome::Arch(VcpuAction::Undecodable),
    }
}

/// Do what `action` asks of the vCPU: `None` resumes the guest, else the
/// loop ends with the end returned.
///
/// # Safety
/// `run` must be `vcpu`'s kvm_run mapping, holding the exit (or failed
/// KVM_RUN) `action` came from.
#[inline]
pub unsafe fn finish_exit(
    vcpu: &mut VcpuFd,
    run: *const kvm_run,
    ctx: &VcpuContext,
    action: VcpuAction,
) -> Option<VcpuEnd> {
    match action {
        VcpuAction::SmcccReturn(x0) => match vcpu.set_one_reg(regs::x(0), &x0.to_le_bytes()) {
            Ok(_) => None,
            Err(e) => Some(VcpuEnd::RunError { errno: e.errno() }),
        },
        VcpuAction::Undecodable => Some(VcpuEnd::Undecodable {
            // SAFETY: the caller promises `run` is this vCPU's kvm_run,
            // holding the exit `action` came from.
            what: unsafe { crash::undecodable(vcpu, run, ctx.memory.as_ref()) },
        }),
    }
}

#[cfg(test)]
mod tests {
    use kvm_ioctls::HypercallExit;
    use trapline_abi as abi;

    use super::*;
    use crate::dispatch::tests::{errno, Fixture};

    /// An SMCCC call KVM's filter forwarded: counted as a hypercall exit,
    /// answered in x0 by the loop (the probe's call gets the probe's answer).
    #[test]
    fn forwarded_smccc_calls_are_answered_and_counted() {
        let f = Fixture::new();
        for (nr, flags, x0) in [
            (abi::SMCCC_PROBE_USER_FN, 0, abi::SMCCC_PROBE_USER_RET),
            (abi::SMCCC_PROBE_UNKNOWN_FN, 0, abi::SMCCC_RET_NOT_SUPPORTED),
            (
                abi::SMCCC_PROBE_USER_FN,
                kvm_bindings::KVM_HYPERCALL_EXIT_SMC,
                abi::SMCCC_RET_NOT_SUPPORTED,
            ),
        ] {
            let mut ret = 0;
            let exit = VcpuExit::Hypercall(HypercallExit {
                nr: nr.into(),
                args: [0; 6],
                ret: &mut ret,
                longmode: flags,
            });
            assert_eq!(
                f.dispatch(Ok(exit), 1),
                ExitOutcome::Arch(VcpuAction::SmcccReturn(x0))
            );
        }
        assert_eq!(f.count(ExitKind::Hypercall), 3);
    }

    #[test]
    fn undecodable_accesses_are_crashes_for_the_loop() {
        let f = Fixture::new();
        // KVM_EXIT_ARM_NISV (with KVM_CAP_ARM_NISV_TO_USER) and KVM_RUN
        // failing with ENOSYS (without it) both name the access.
        assert_eq!(
            f.dispatch(Ok(VcpuExit::Unsupported(KVM_EXIT_ARM_NISV)), 1),
            ExitOutcome::Arch(VcpuAction::Undecodable)
        );
        assert_eq!(
            f.dispatch(Err(errno(libc::ENOSYS)), 1),
            ExitOutcome::Arch(VcpuAction::Undecodable)
        );
        assert_eq!(f.ctx.counters.snapshot().total_exits(), 0);
    }

    #[test]
    fn the_profile_keys_smccc_calls_as_hypercalls() {
        let mut ret = 0;
        let exit = VcpuExit::Hypercall(HypercallExit {
            nr: abi::SMCCC_PROBE_USER_FN.into(),
            args: [0; 6],
            ret: &mut ret,
            longmode: 0,
        });
        assert_eq!(Exit::decode(Ok(exit), 1).key(), (ExitKind::Hypercall, 0));
        assert_eq!(
            Exit::decode(Err(errno(libc::ENOSYS)), 1).key(),
            (ExitKind::Other, 0)
        );
    }
}
