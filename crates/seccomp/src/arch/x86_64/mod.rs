//! x86_64: the BPF target, the signal frame, the syscalls only x86_64 has,
//! its register ioctls and its pieces of the allow-lists.

use seccompiler::TargetArch;

pub mod ioctls;
mod rules;

pub(crate) use rules::*;

/// The architecture the filters are compiled for.
pub(crate) const TARGET: TargetArch = TargetArch::x86_64;

/// Whether the crate README's tables are this architecture's lists (they
/// are x86_64's: syscall numbers and ioctls differ on aarch64).
#[cfg(test)]
pub(crate) const README_TABLES: bool = true;

/// The second argument of the trapped syscall (an ioctl's request): RSI in
/// the x86_64 syscall convention.
///
/// # Safety
/// `ctx` must point at the ucontext_t of a signal frame.
pub(crate) unsafe fn second_argument(ctx: *mut libc::c_void) -> u64 {
    // SAFETY: the caller promises the signal frame's ucontext_t, valid for
    // the handler's duration.
    let uc = unsafe { &*ctx.cast::<libc::ucontext_t>() };
    uc.uc_mcontext.gregs[libc::REG_RSI as usize] as u64
}

crate::sigsys::names!(
    arch_syscall_name,
    SYS_open,
    SYS_stat,
    SYS_lstat,
    SYS_poll,
    SYS_access,
    SYS_pipe,
    SYS_select,
    SYS_dup2,
    SYS_fork,
    SYS_vfork,
    SYS_rename,
    SYS_mkdir,
    SYS_rmdir,
    SYS_creat,
    SYS_link,
    SYS_unlink,
    SYS_symlink,
    SYS_readlink,
    SYS_chmod,
    SYS_chown,
    SYS_arch_prctl,
    SYS_epoll_create,
    SYS_getdents,
    SYS_epoll_wait,
    SYS_eventfd,
);
