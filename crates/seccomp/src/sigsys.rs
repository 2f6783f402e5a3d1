//! The SIGSYS reporter: what a vCPU or helper thread prints when its filter
//! traps a syscall, before the process exits with [`BAD_SYSCALL_STATUS`].
//!
//! The handler runs on the offending thread, under that thread's filter, so
//! it only makes syscalls every trapping kind allows (`write`, `exit_group`)
//! and touches no lock and no allocator: the message is assembled in a
//! stack buffer.

use std::cell::Cell;
use std::io;
use std::sync::Once;

use crate::arch;
use crate::ioctls;
use crate::ThreadKind;

/// Exit status of a process whose vCPU or helper thread made a forbidden
/// syscall: 128 + SIGSYS, what a shell reports for "Bad system call".
pub const BAD_SYSCALL_STATUS: i32 = 128 + libc::SIGSYS;

const LABEL_MAX: usize = 48;

thread_local! {
    // "vcpu0 (vcpu filter)" for the message; empty until install.
    static LABEL: Cell<([u8; LABEL_MAX], usize)> = const { Cell::new(([0; LABEL_MAX], 0)) };
}

/// Remember, for the handler, which thread this is.
pub(crate) fn set_label(kind: ThreadKind, thread: &str) {
    let mut buf = [0u8; LABEL_MAX];
    let mut w = Writer::new(&mut buf);
    w.str(thread);
    w.str(" (");
    w.str(kind.name());
    w.str(" filter)");
    let len = w.len;
    LABEL.with(|l| l.set((buf, len)));
}

/// Install the process-wide SIGSYS handler (once).
pub(crate) fn install_reporter() -> io::Result<()> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        // vmm-sys-util's registration is the sigaction this needs:
        // SA_SIGINFO, every other signal blocked while the handler runs. The
        // handler is async-signal-safe (no locks, no allocation, only write
        // and _exit).
        result = vmm_sys_util::signal::register_signal_handler(libc::SIGSYS, on_sigsys)
            .map_err(io::Error::from);
    });
    result
}

extern "C" fn on_sigsys(_: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let mut buf = [0u8; 640];
    let mut w = Writer::new(&mut buf);
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let (code, nr) = unsafe { ((*info).si_code, si_syscall(info)) };
    w.str("\ntrapline: seccomp: thread ");
    let (label, len) = LABEL.with(Cell::get);
    if len == 0 {
        w.str("(unlabelled)");
    } else {
        w.bytes(&label[..len]);
    }
    w.str(" made a system call its filter forbids: ");
    if code == SYS_SECCOMP {
        match syscall_name(nr) {
            Some(n) => w.str(n),
            None => w.str("syscall"),
        }
        w.str(" (#");
        w.dec(nr as u64);
        w.str(")");
        if nr == libc::SYS_ioctl && !ctx.is_null() {
            // SAFETY: ctx is the ucontext the kernel built for this signal.
            let req = unsafe { ioctl_request(ctx) };
            w.str(" request ");
            w.hex(req as u64);
            if let Some(k) = ioctls::all().find(|k| k.request == req) {
                w.str(" = ");
                w.str(k.name);
            }
        }
    } else {
        w.str("(SIGSYS not from seccomp)");
    }
    w.str(
        ".\ntrapline: this is a trapline bug (or a guest exploiting one). Rerun with \
           --no-seccomp to confirm, and under `strace -f` to see the call in context; \
           the allow-lists are in crates/seccomp. Exiting with status ",
    );
    w.dec(BAD_SYSCALL_STATUS as u64);
    w.str(".\n");
    let len = w.len;
    let mut off = 0;
    while off < len {
        // SAFETY: writing our own stack buffer to stderr.
        let n = unsafe { libc::write(2, buf[off..].as_ptr().cast(), len - off) };
        if n <= 0 {
            break;
        }
        off += n as usize;
    }
    // SAFETY: _exit is async-signal-safe (exit_group).
    unsafe { libc::_exit(BAD_SYSCALL_STATUS) }
}

/// `si_code` of a SIGSYS sent by seccomp.
const SYS_SECCOMP: libc::c_int = 1;

/// `si_syscall` of a SIGSYS siginfo: after the three ints and padding,
/// `_sigsys` is `{ void *_call_addr; int _syscall; unsigned _arch; }`.
///
/// # Safety
/// `info` must point at a siginfo_t.
unsafe fn si_syscall(info: *const libc::siginfo_t) -> i64 {
    let base = info.cast::<u8>();
    let off = 16 + std::mem::size_of::<*const libc::c_void>();
    // SAFETY: the caller promises a siginfo_t (128 bytes); `_syscall` lies
    // at `off` < 128 inside it, read unaligned as the union has no Rust type.
    i64::from(unsafe { std::ptr::read_unaligned(base.add(off).cast::<i32>()) })
}

/// The second argument of the trapped syscall (an ioctl's request).
///
/// # Safety
/// `ctx` must point at the ucontext_t of a signal frame.
unsafe fn ioctl_request(ctx: *mut libc::c_void) -> u32 {
    // SAFETY: the caller's promise, passed on; the request is the low 32
    // bits, as the filter compares it.
    unsafe { arch::second_argument(ctx) as u32 }
}

/// A fixed buffer writer that silently truncates.
struct Writer<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Writer<'a> {
    fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }
    fn bytes(&mut self, b: &[u8]) {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn dec(&mut self, mut v: u64) {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.bytes(&d[i..]);
    }
    fn hex(&mut self, mut v: u64) {
        let mut d = [0u8; 16];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b"0123456789abcdef"[(v & 0xf) as usize];
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        self.str("0x");
        self.bytes(&d[i..]);
    }
}

/// Defines `fn $name(nr) -> Option<&str>`, the names of the listed libc
/// `SYS_*` constants; the neutral list is below, each architecture adds
/// the syscalls only it has (crate::arch).
macro_rules! names {
    ($name:ident, $($sys:ident),* $(,)?) => {
        pub(crate) fn $name(nr: i64) -> Option<&'static str> {
            $(
                if nr == libc::$sys {
                    let s = stringify!($sys);
                    return Some(s.strip_prefix("SYS_").unwrap_or(s));
                }
            )*
            None
        }
    };
}
// For the arch modules' own names; aarch64 adds none (crate::arch::aarch64),
// so there the re-export is unused.
#[allow(unused_imports)]
pub(crate) use names;

/// The name of syscall `nr` on this architecture, for the syscalls
/// trapline allows and the ones most likely to be refused.
pub fn syscall_name(nr: i64) -> Option<&'static str> {
    neutral_syscall_name(nr).or_else(|| arch::arch_syscall_name(nr))
}

names!(
    neutral_syscall_name,
    SYS_read,
    SYS_write,
    SYS_close,
    SYS_fstat,
    SYS_lseek,
    SYS_mmap,
    SYS_mprotect,
    SYS_munmap,
    SYS_brk,
    SYS_rt_sigaction,
    SYS_rt_sigprocmask,
    SYS_rt_sigreturn,
    SYS_ioctl,
    SYS_pread64,
    SYS_pwrite64,
    SYS_readv,
    SYS_writev,
    SYS_sched_yield,
    SYS_mremap,
    SYS_msync,
    SYS_madvise,
    SYS_dup,
    SYS_nanosleep,
    SYS_getpid,
    SYS_socket,
    SYS_connect,
    SYS_accept,
    SYS_sendto,
    SYS_recvfrom,
    SYS_sendmsg,
    SYS_recvmsg,
    SYS_bind,
    SYS_listen,
    SYS_socketpair,
    SYS_clone,
    SYS_execve,
    SYS_exit,
    SYS_wait4,
    SYS_kill,
    SYS_uname,
    SYS_fcntl,
    SYS_flock,
    SYS_fsync,
    SYS_fdatasync,
    SYS_truncate,
    SYS_ftruncate,
    SYS_getdents64,
    SYS_getcwd,
    SYS_chdir,
    SYS_umask,
    SYS_getrlimit,
    SYS_getrusage,
    SYS_sysinfo,
    SYS_ptrace,
    SYS_getuid,
    SYS_getgid,
    SYS_setuid,
    SYS_setgid,
    SYS_geteuid,
    SYS_getppid,
    SYS_sigaltstack,
    SYS_prctl,
    SYS_mount,
    SYS_umount2,
    SYS_gettid,
    SYS_tkill,
    SYS_futex,
    SYS_sched_setaffinity,
    SYS_sched_getaffinity,
    SYS_set_tid_address,
    SYS_restart_syscall,
    SYS_clock_gettime,
    SYS_clock_nanosleep,
    SYS_exit_group,
    SYS_epoll_ctl,
    SYS_tgkill,
    SYS_openat,
    SYS_mkdirat,
    SYS_newfstatat,
    SYS_unlinkat,
    SYS_renameat,
    SYS_readlinkat,
    SYS_pselect6,
    SYS_ppoll,
    SYS_set_robust_list,
    SYS_epoll_pwait,
    SYS_timerfd_create,
    SYS_eventfd2,
    SYS_epoll_create1,
    SYS_dup3,
    SYS_pipe2,
    SYS_prlimit64,
    SYS_getrandom,
    SYS_memfd_create,
    SYS_execveat,
    SYS_statx,
    SYS_rseq,
    SYS_clone3,
    SYS_openat2,
    SYS_pidfd_open,
    SYS_io_uring_setup,
    SYS_io_uring_enter,
    SYS_seccomp,
    SYS_bpf,
    SYS_perf_event_open,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_pkey_mprotect,
    SYS_userfaultfd,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_formats_and_truncates() {
        let mut buf = [0u8; 32];
        let mut w = Writer::new(&mut buf);
        w.str("n=");
        w.dec(0);
        w.str(" ");
        w.dec(12345);
        w.str(" ");
        w.hex(0xae80);
        let len = w.len;
        assert_eq!(&buf[..len], b"n=0 12345 0xae80");
        let mut small = [0u8; 4];
        let mut w = Writer::new(&mut small);
        w.str("abcdef");
        assert_eq!(w.len, 4);
    }

    #[test]
    fn names_known_syscalls() {
        assert_eq!(syscall_name(libc::SYS_socket), Some("socket"));
        assert_eq!(syscall_name(libc::SYS_ioctl), Some("ioctl"));
        assert_eq!(syscall_name(100_000), None);
    }

    #[test]
    fn bad_syscall_status_is_128_plus_sigsys() {
        assert_eq!(BAD_SYSCALL_STATUS, 159);
    }
}
