//! aarch64: the BPF target, the signal frame, the syscalls only aarch64 has,
//! its one-register ioctls and its pieces of the allow-lists.
//!
//! arm64 has only the generic syscall table: no `open`, `poll`,
//! `epoll_wait` and the like; glibc reaches them through `openat`,
//! `ppoll`, `epoll_pwait`, which the neutral tables name.

use seccompiler::TargetArch;

pub mod ioctls;
mod rules;

pub(crate) use rules::*;

/// The architecture the filters are compiled for.
pub(crate) const TARGET: TargetArch = TargetArch::aarch64;

/// Whether the crate README's tables are this architecture's lists (they
/// are x86_64's: syscall numbers and ioctls differ on aarch64).
#[cfg(test)]
pub(crate) const README_TABLES: bool = false;

/// The second argument of the trapped syscall (an ioctl's request): x1 in
/// the arm64 syscall convention.
///
/// # Safety
/// `ctx` must point at the ucontext_t of a signal frame.
pub(crate) unsafe fn second_argument(ctx: *mut libc::c_void) -> u64 {
    // SAFETY: the caller promises the signal frame's ucontext_t, valid for
    // the handler's duration.
    let uc = unsafe { &*ctx.cast::<libc::ucontext_t>() };
    uc.uc_mcontext.regs[1]
}

/// None: every syscall arm64 has is in the neutral table.
pub(crate) fn arch_syscall_name(_nr: i64) -> Option<&'static str> {
    None
}
