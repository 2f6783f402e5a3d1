//! seccomp-bpf allow-lists for trapline's threads.
//!
//! Each kind of thread gets its own filter, installed on that thread only
//! ([`install`]; seccompiler's `apply_filter`, which also sets
//! `no_new_privs`). A filter lasts as long as its thread and is inherited by
//! threads it spawns afterwards, so a thread installs its filter once it has
//! spawned everything it will spawn.
//!
//! | kind | when | default action |
//! |------|------|----------------|
//! | [`ThreadKind::Vcpu`] | on the vCPU thread, right before its first `KVM_RUN` | **trap**: report, exit 159 |
//! | [`ThreadKind::Helper`] | on the helper thread, before its loop | **trap**: report, exit 159 |
//! | [`ThreadKind::VirtioWorker`] | on the virtio notify worker, before its loop | **trap**: report, exit 159 |
//! | [`ThreadKind::VmmMain`] | on the controller, after the last vCPU thread is spawned | **`EPERM`** |
//!
//! # Why these default actions
//!
//! Firecracker kills the process (its filters trap into a handler that
//! logs and exits). trapline does the same where a refused syscall can only
//! mean a bug or an exploit: a vCPU thread runs guest-driven device code
//! and makes a short, known set of syscalls, so anything else is a device
//! bug or a guest exploiting one, and continuing would hide it. The trap
//! lands in a SIGSYS handler that prints which thread made which syscall
//! (an ioctl with its request number) and how to debug it, then exits with
//! [`BAD_SYSCALL_STATUS`] (159 = 128 + SIGSYS). Helpers are as small and
//! as fixed, and are treated alike.
//!
//! The controller instead gets `EPERM`: trapline is a measuring tool, the
//! controller is the thread that reports, and every syscall it makes has an
//! error path that ends in a message ("… Operation not permitted") and a
//! clean exit status, rather than the run dying without its report.
//!
//! # Cost
//!
//! A filter runs on every syscall of its thread, `KVM_RUN` included. The
//! vCPU list keeps `ioctl` early (syscall 16 on x86_64, 29 on aarch64; the program tests
//! numbers in ascending order) and `KVM_RUN` first among its requests. The
//! lab's numbers with and without it differ by that program's run time per
//! exit; the crate README links a measurement.
//!
//! # Disabling
//!
//! Nothing here is automatic: the machine calls [`install`] only when asked
//! (`--no-seccomp` turns it off). To find a missing syscall, rerun with
//! `--no-seccomp` under `strace -f`; the reporter's message names it.

#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::fmt;

use seccompiler::{
    BackendError, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

// `allow!` (an allow-list entry) for the lists here and under arch/: a
// macro named as the attribute cannot be imported by path.
#[macro_use]
mod rule;
mod arch;
pub mod ioctls;
mod kvm_ioctl;
mod list;
pub mod rules;
mod sigsys;

pub use ioctls::KvmIoctl;
pub use rules::{Only, Rule};
pub use seccompiler::BpfProgram;
pub use sigsys::{syscall_name, BAD_SYSCALL_STATUS};

/// Which of trapline's threads a filter is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadKind {
    /// A vCPU thread: KVM_RUN and the device code its exits call.
    Vcpu,
    /// The controller (the thread that runs `Machine::run`) once the vCPU
    /// threads are spawned: waits, kicks, joins, tears down, reports.
    VmmMain,
    /// A helper thread: an eventfd consumer or irqfd writer.
    Helper,
    /// The virtio notify worker: serves queues signalled by ioeventfds.
    VirtioWorker,
}

impl ThreadKind {
    /// Every kind.
    pub const ALL: [ThreadKind; 4] = [
        ThreadKind::Vcpu,
        ThreadKind::VmmMain,
        ThreadKind::Helper,
        ThreadKind::VirtioWorker,
    ];

    /// Short name (`vcpu`, `vmm-main`, `helper`, `virtio-worker`).
    pub fn name(self) -> &'static str {
        match self {
            ThreadKind::Vcpu => "vcpu",
            ThreadKind::VmmMain => "vmm-main",
            ThreadKind::Helper => "helper",
            ThreadKind::VirtioWorker => "virtio-worker",
        }
    }
}

impl fmt::Display for ThreadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a filter could not be built or installed.
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    /// seccompiler rejected the rules (a bug in this crate's tables).
    #[error("cannot build the {kind} seccomp filter: {source} (a bug in crates/seccomp's allow-list; --no-seccomp runs without filters)")]
    Build {
        /// The filter's kind.
        kind: ThreadKind,
        /// seccompiler's error.
        #[source]
        source: BackendError,
    },
    /// prctl(PR_SET_NO_NEW_PRIVS) or seccomp(2) failed.
    #[error("cannot install the {kind} seccomp filter on thread '{thread}': {source}. The host kernel needs CONFIG_SECCOMP_FILTER, and a container runtime's own seccomp profile may refuse seccomp(2); rerun with --no-seccomp to run without filters")]
    Install {
        /// The filter's kind.
        kind: ThreadKind,
        /// The thread's name.
        thread: String,
        /// seccompiler's error (prctl or seccomp errno).
        #[source]
        source: seccompiler::Error,
    },
    /// sigaction(SIGSYS) failed.
    #[error("cannot install the SIGSYS handler that reports refused syscalls: {0}; rerun with --no-seccomp to run without filters")]
    Reporter(#[source] std::io::Error),
}

/// What a filter does with a syscall that is not on its list.
pub fn default_action(kind: ThreadKind) -> SeccompAction {
    match kind {
        ThreadKind::Vcpu | ThreadKind::Helper | ThreadKind::VirtioWorker => SeccompAction::Trap,
        ThreadKind::VmmMain => SeccompAction::Errno(libc::EPERM as u32),
    }
}

/// The allow-list of `kind`, with the reason for each entry.
pub fn allow_list(kind: ThreadKind) -> Vec<&'static Rule> {
    rules::rules(kind)
}

/// Names of the syscalls `kind` may make (some with argument limits: see
/// [`allow_list`]).
pub fn allowed_syscalls(kind: ThreadKind) -> Vec<&'static str> {
    rules::rules(kind).iter().map(|r| r.name()).collect()
}

/// The KVM ioctls `kind` may make.
pub fn allowed_ioctls(kind: ThreadKind) -> Vec<KvmIoctl> {
    rules::rules(kind)
        .iter()
        .filter_map(|r| match r.only {
            Only::Ioctls(list) => Some(list),
            _ => None,
        })
        .flatten()
        .copied()
        .collect()
}

fn cond(
    kind: ThreadKind,
    arg: u8,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, SeccompError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
        .map_err(|source| SeccompError::Build { kind, source })
}

fn rule(kind: ThreadKind, conds: Vec<SeccompCondition>) -> Result<SeccompRule, SeccompError> {
    SeccompRule::new(conds).map_err(|source| SeccompError::Build { kind, source })
}

/// The seccompiler rule chain for one entry (empty: any arguments).
fn chain(kind: ThreadKind, only: Only) -> Result<Vec<SeccompRule>, SeccompError> {
    Ok(match only {
        Only::Any => Vec::new(),
        // The kernel takes the request as an unsigned int, so compare the
        // low 32 bits, exactly what KVM sees.
        Only::Ioctls(list) => list
            .iter()
            .map(|k| {
                rule(
                    kind,
                    vec![cond(kind, 1, SeccompCmpOp::Eq, k.request.into())?],
                )
            })
            .collect::<Result<_, _>>()?,
        Only::NoExec => vec![rule(
            kind,
            vec![cond(
                kind,
                2,
                SeccompCmpOp::MaskedEq(libc::PROT_EXEC as u64),
                0,
            )?],
        )?],
        Only::FcntlGetFd => vec![rule(
            kind,
            vec![cond(kind, 1, SeccompCmpOp::Eq, libc::F_GETFD as u64)?],
        )?],
        Only::OwnProcess => vec![rule(
            kind,
            vec![cond(
                kind,
                0,
                SeccompCmpOp::Eq,
                u64::from(std::process::id()),
            )?],
        )?],
    })
}

/// Build the BPF program for `kind`. It embeds this process's id (see
/// [`Only::OwnProcess`]): build it in the process that installs it.
pub fn filter(kind: ThreadKind) -> Result<BpfProgram, SeccompError> {
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for r in rules::rules(kind) {
        let c = chain(kind, r.only)?;
        // A syscall listed twice would lose a rule set; the tables have no
        // duplicates (a test checks), and `Any` must stay `Any`.
        let prev = map.insert(r.nr, c);
        debug_assert!(prev.is_none(), "{} listed twice for {kind}", r.name());
    }
    let f = SeccompFilter::new(
        map,
        default_action(kind),
        SeccompAction::Allow,
        arch::TARGET,
    )
    .map_err(|source| SeccompError::Build { kind, source })?;
    BpfProgram::try_from(f).map_err(|source| SeccompError::Build { kind, source })
}

/// Build and install `kind`'s filter on the calling thread (only). For a
/// trapping kind this also installs the process-wide SIGSYS reporter.
pub fn install(kind: ThreadKind) -> Result<(), SeccompError> {
    let prog = filter(kind)?;
    install_program(kind, &prog)
}

/// Install a program built earlier by [`filter`] (for building once on
/// the controller and handing it to each thread).
pub fn install_program(kind: ThreadKind, program: &BpfProgram) -> Result<(), SeccompError> {
    let thread = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned();
    if default_action(kind) == SeccompAction::Trap {
        sigsys::install_reporter().map_err(SeccompError::Reporter)?;
        sigsys::set_label(kind, &thread);
    }
    seccompiler::apply_filter(program).map_err(|source| SeccompError::Install {
        kind,
        thread,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_compiles() {
        for kind in ThreadKind::ALL {
            let p = filter(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert!(
                p.len() > 10 && p.len() < 4096,
                "{kind}: {} instructions",
                p.len()
            );
        }
    }

    #[test]
    fn no_syscall_listed_twice() {
        for kind in ThreadKind::ALL {
            let names = allowed_syscalls(kind);
            for (i, n) in names.iter().enumerate() {
                assert!(!names[i + 1..].contains(n), "{kind}: {n} twice");
            }
        }
    }

    #[test]
    fn every_rule_says_why() {
        for kind in ThreadKind::ALL {
            for r in allow_list(kind) {
                assert!(r.why.len() > 15, "{kind}: {} has no reason", r.name());
                assert_eq!(
                    syscall_name(r.nr),
                    Some(r.name()),
                    "name table misses {}",
                    r.name()
                );
            }
        }
    }

    #[test]
    fn lists_hold_what_strace_showed() {
        let vcpu = allowed_syscalls(ThreadKind::Vcpu);
        for s in [
            "ioctl",
            "write",
            "futex",
            "rt_sigreturn",
            "sigaltstack",
            "munmap",
            "madvise",
            "rt_sigprocmask",
            "close",
            "fcntl",
            "exit",
        ] {
            assert!(vcpu.contains(&s), "vcpu lacks {s}");
        }
        let main = allowed_syscalls(ThreadKind::VmmMain);
        for s in [
            "futex",
            "tgkill",
            "getpid",
            "rt_sigprocmask",
            "write",
            "close",
            "munmap",
            "brk",
            "exit_group",
            "sigaltstack",
            "fcntl",
        ] {
            assert!(main.contains(&s), "vmm-main lacks {s}");
        }
        for kind in ThreadKind::ALL {
            let l = allowed_syscalls(kind);
            for s in [
                "execve", "socket", "openat", "open", "clone", "clone3", "fork", "ptrace",
            ] {
                assert!(!l.contains(&s), "{kind} allows {s}");
            }
        }
    }

    #[test]
    fn ioctls_per_kind() {
        let names = |k| allowed_ioctls(k).iter().map(|i| i.name).collect::<Vec<_>>();
        assert_eq!(names(ThreadKind::Vcpu)[0], "KVM_RUN", "KVM_RUN goes first");
        // The dump of a dead vCPU reads its registers (KVM_GET_REGS on
        // x86_64, KVM_GET_ONE_REG on aarch64).
        for ioctl in arch::VCPU_STATE_IOCTLS {
            assert!(
                names(ThreadKind::Vcpu).contains(&ioctl.name),
                "{}",
                ioctl.name
            );
        }
        assert!(!names(ThreadKind::VmmMain).contains(&"KVM_RUN"));
        assert!(!names(ThreadKind::Helper).contains(&"KVM_RUN"));
    }

    #[test]
    fn default_actions() {
        assert_eq!(default_action(ThreadKind::Vcpu), SeccompAction::Trap);
        assert_eq!(default_action(ThreadKind::Helper), SeccompAction::Trap);
        assert_eq!(
            default_action(ThreadKind::VmmMain),
            SeccompAction::Errno(libc::EPERM as u32)
        );
    }
}

#[cfg(test)]
mod readme {
    use super::*;

    const SECTIONS: [(&str, &[Rule]); 5] = [
        ("every kind (runtime)", rules::RUNTIME),
        ("vcpu", rules::VCPU),
        ("vmm-main", rules::VMM_MAIN),
        ("helper", rules::HELPER),
        ("virtio-worker", rules::VIRTIO_WORKER),
    ];

    fn table(list: &[Rule]) -> String {
        let mut s = String::from("| syscall | limited to | why |\n|---|---|---|\n");
        for r in list {
            let only = match r.only {
                Only::Any => String::new(),
                Only::Ioctls(l) => l.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
                Only::NoExec => "no `PROT_EXEC`".into(),
                Only::FcntlGetFd => "`F_GETFD`".into(),
                Only::OwnProcess => "this process's threads".into(),
            };
            s += &format!("| `{}` | {} | {} |\n", r.name(), only, r.why);
        }
        s
    }

    /// `cargo test -p trapline-seccomp --lib -- --ignored print_tables --nocapture`
    #[test]
    #[ignore]
    fn print_tables() {
        for (name, list) in SECTIONS {
            println!("### {name}\n\n{}", table(list));
        }
    }

    #[test]
    fn readme_holds_the_current_tables() {
        if !crate::arch::README_TABLES {
            return;
        }
        let readme = include_str!("../README.md");
        for (name, list) in SECTIONS {
            assert!(
                readme.contains(&table(list)),
                "README.md's {name} table is stale: regenerate it with \
                 `cargo test -p trapline-seccomp --lib -- --ignored print_tables --nocapture`"
            );
        }
    }
}
