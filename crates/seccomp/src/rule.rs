//! One allow-list entry: a syscall, what it may be called with, and why
//! trapline needs it.

use crate::kvm_ioctl::KvmIoctl;

/// What an allow-list entry lets through beyond the syscall number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Only {
    /// Any arguments.
    Any,
    /// `ioctl` with one of these request numbers (argument 1). The fd is not
    /// checked: KVM fds are numbered at run time, and a KVM request on a fd
    /// of another kind fails with ENOTTY.
    Ioctls(&'static [KvmIoctl]),
    /// `mmap`/`mprotect` without `PROT_EXEC` in argument 2: no new code.
    NoExec,
    /// `fcntl` with `F_GETFD` (argument 1) only.
    FcntlGetFd,
    /// `tgkill` whose thread group (argument 0) is this process: signals
    /// only to our own threads. The filter embeds `getpid()`, so build it
    /// in the process that installs it.
    OwnProcess,
}

/// One allowed syscall.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// The libc constant's name (`SYS_futex`).
    pub sys: &'static str,
    /// Number on this architecture.
    pub nr: i64,
    /// Argument restriction.
    pub only: Only,
    /// Why trapline needs it.
    pub why: &'static str,
}

/// The [`Rule`] for libc's `$sys`.
macro_rules! allow {
    ($sys:ident, $only:expr, $why:expr) => {
        $crate::rule::Rule {
            sys: stringify!($sys),
            nr: libc::$sys,
            only: $only,
            why: $why,
        }
    };
}

impl Rule {
    /// The syscall's name, as in `man 2` (`futex`).
    pub fn name(&self) -> &'static str {
        self.sys.strip_prefix("SYS_").unwrap_or(self.sys)
    }
}
