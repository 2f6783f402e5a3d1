//! The allow-lists, one entry per syscall, each with the reason trapline
//! needs it. A kind's list is [`RUNTIME`] (what Rust's std and glibc do on
//! any thread) plus the kind's own list. Every entry was seen under
//! `strace -f` of `trapline run` (hello, smp, triple, spin, hostile,
//! hello64) and `trapline bench`, or is on a path those runs did not take
//! but trapline has (noted in the reason).

use crate::arch;
use crate::ioctls::{self, KvmIoctl};
use crate::list::{concat, total};

pub use crate::rule::{Only, Rule};
use crate::ThreadKind;

use Only::*;

/// Ioctls a vCPU thread makes, KVM_RUN first: the BPF program tries them
/// in this order, and KVM_RUN is the one on the hot path.
pub const VCPU_IOCTLS: &[KvmIoctl] = &concat::<_, { total(VCPU_IOCTL_PARTS) }>(VCPU_IOCTL_PARTS);

const VCPU_IOCTL_PARTS: &[&[KvmIoctl]] = &[
    // The run loop: every guest exit comes back through it.
    &[ioctls::RUN],
    // What the report of a dead vCPU reads (and arm64's SMCCC answer).
    arch::VCPU_STATE_IOCTLS,
    &[
        // A device raising or lowering its interrupt line from its exit handler.
        ioctls::IRQ_LINE,
        // A device with MSIs signalling one from its exit handler.
        ioctls::SIGNAL_MSI,
        // PCI devices (pci-testdev) move their ioeventfds when the guest
        // reprograms a BAR, on the vCPU thread that took the config write.
        ioctls::IOEVENTFD,
    ],
    // Resume from ACPI S3 (x86_64).
    arch::VCPU_RESUME_IOCTLS,
    // virtio-net's vhost back end, programmed when the driver's status
    // write (DRIVER_OK, or 0 for a reset) exits to this thread.
    ioctls::VHOST_NET,
];

/// Ioctls the controller makes after the vCPU threads are running: none
/// while it waits; these when the Machine is dropped on it at the end.
pub const VMM_MAIN_IOCTLS: &[KvmIoctl] = &[
    // Dropping the lab's IoEvents unbinds them (KVM_IOEVENTFD deassign).
    ioctls::IOEVENTFD,
    // Dropping a CoalescedZone unregisters it.
    ioctls::UNREGISTER_COALESCED_MMIO,
    // Dropping the read-only memslot deletes it (size 0).
    ioctls::SET_USER_MEMORY_REGION,
    // Dropping an IrqFd unbinds it (KVM_IRQFD with DEASSIGN).
    ioctls::IRQFD,
    // Dropping virtio-net's vhost back end detaches its TAP.
    ioctls::VHOST_DETACH,
    // `trapline run` puts the terminal back (raw mode off) after the run,
    // Ctrl-A x included; fd 0's tcsetattr.
    ioctls::TCSETS_IOCTL,
];

/// Ioctls a helper thread may make.
pub const HELPER_IOCTLS: &[KvmIoctl] = &[
    // Interrupt injection from a helper, the baseline an irqfd is
    // compared with; the RTC's timer thread pulsing ISA IRQ 8.
    ioctls::IRQ_LINE,
    ioctls::SIGNAL_MSI,
];

/// What Rust's std, glibc and the kernel need on any trapline thread once
/// it runs: synchronisation, the allocator, signal return, thread exit.
pub const RUNTIME: &[Rule] = &[
    allow!(SYS_futex, Any, "std's Mutex, Condvar, Once, mpsc channels and JoinHandle::join park and wake through futex"),
    allow!(SYS_sched_yield, Any, "std's mpsc channel backs off with thread::yield_now under contention"),
    allow!(SYS_restart_syscall, Any, "the kernel resumes a futex or sleep with a timeout that a signal (the vCPU kick) interrupted through it"),
    allow!(SYS_clock_gettime, Any, "Instant::now: normally answered by the vDSO, but a syscall when the host clocksource has no vDSO support (some hypervisors)"),
    allow!(SYS_getrandom, Any, "std seeds a thread's HashMap RandomState keys on first use"),
    allow!(SYS_brk, Any, "glibc malloc grows and trims the main heap (any allocation: format!, channel sends)"),
    allow!(SYS_mmap, NoExec, "glibc malloc maps large blocks and new arenas; never executable"),
    allow!(SYS_mprotect, NoExec, "glibc malloc commits arena pages with mprotect; never executable"),
    allow!(SYS_mremap, Any, "realloc of a large (mmapped) block: a growing Vec"),
    allow!(SYS_munmap, Any, "free of a large block; a VcpuFd unmapping its kvm_run on drop; std unmapping the thread's signal stack at exit"),
    allow!(SYS_madvise, Any, "glibc returns an exiting thread's stack (MADV_DONTNEED) and trims arenas"),
    allow!(SYS_rt_sigreturn, Any, "return from a signal handler: the vCPU kick (SIGRTMIN) lands on vCPU threads"),
    allow!(SYS_rt_sigprocmask, Any, "glibc blocks signals around thread exit, pthread_kill and abort"),
    allow!(SYS_sigaltstack, Any, "std disables and frees the thread's stack-overflow signal stack when the thread ends"),
    allow!(SYS_exit, Any, "a thread ending (the last call of every vCPU and helper thread)"),
    allow!(SYS_exit_group, Any, "process exit: std::process::exit, and the SIGSYS reporter's _exit"),
    allow!(SYS_getpid, Any, "pthread_kill and abort name the thread group with it"),
    allow!(SYS_gettid, Any, "abort and std's thread ids"),
    allow!(SYS_tgkill, OwnProcess, "abort raises SIGABRT on its own thread; the controller kicks vCPUs with SIGRTMIN (only at this process's threads)"),
    allow!(SYS_close, Any, "dropping fds: a vCPU's VcpuFd is dropped on its own thread; eventfds of devices and fast paths"),
    allow!(SYS_fcntl, FcntlGetFd, "debug builds of std check that an fd is open (F_GETFD) before closing it"),
];

/// A vCPU thread from its first KVM_RUN on.
pub const VCPU: &[Rule] = &[
    allow!(SYS_ioctl, Ioctls(VCPU_IOCTLS), "KVM_RUN and what exit handlers ask of KVM (see VCPU_IOCTLS)"),
    allow!(SYS_write, Any, "the UART writes guest output to stdout or the --serial file; devices signal eventfds; panic messages to stderr"),
    allow!(SYS_writev, Any, "vectored writes through std's LineWriter on stdout"),
    allow!(SYS_read, Any, "devices read eventfds (doorbell and ioeventfd counters)"),
    allow!(SYS_eventfd2, Any, "PCI devices create a BAR's ioeventfds when the guest programs it"),
    allow!(SYS_pread64, Any, "--stat and the lab read the vCPU's KVM statistics fd at ucalls; virtio-blk reads its disk file when it serves a queue in the exit (--virtio-notify exit)"),
    allow!(SYS_pwrite64, Any, "virtio-blk writes its disk file when it serves a queue in the exit (--virtio-notify exit)"),
    allow!(SYS_fdatasync, Any, "virtio-blk flush requests served in the exit make earlier writes durable before completing"),
];

/// The controller (the thread that called Machine::run) after the last
/// vCPU thread was spawned: wait, kick, join, tear down, report.
pub const VMM_MAIN: &[Rule] = &[
    allow!(
        SYS_ioctl,
        Ioctls(VMM_MAIN_IOCTLS),
        "teardown of the Machine on this thread (see VMM_MAIN_IOCTLS)"
    ),
    allow!(
        SYS_write,
        Any,
        "the outcome and errors on stderr, reports on stdout"
    ),
    allow!(
        SYS_writev,
        Any,
        "vectored writes through std's LineWriter on stdout"
    ),
    allow!(
        SYS_read,
        Any,
        "the lab reads ioeventfd counters (eventfds) after the run"
    ),
    allow!(
        SYS_clock_nanosleep,
        Any,
        "thread::sleep in stop and grace loops"
    ),
    allow!(SYS_nanosleep, Any, "thread::sleep on older glibc"),
    allow!(
        SYS_pread64,
        Any,
        "--stat reads KVM's statistics fds (opened before the filter) after the run"
    ),
];

/// A helper thread (eventfd consumer, irqfd writer) once its loop runs.
pub const HELPER: &[Rule] = &concat::<_, { total(HELPER_PARTS) }>(HELPER_PARTS);

const HELPER_PARTS: &[&[Rule]] = &[
    &[
        allow!(
            SYS_ioctl,
            Ioctls(HELPER_IOCTLS),
            "interrupt injection baselines (see HELPER_IOCTLS)"
        ),
        allow!(
            SYS_read,
            Any,
            "consume eventfd counts (ioeventfd doorbells)"
        ),
        allow!(
            SYS_write,
            Any,
            "signal eventfds (irqfd writes); panic messages to stderr"
        ),
        allow!(SYS_writev, Any, "vectored writes through std's LineWriter"),
        allow!(SYS_ppoll, Any, "wait for an eventfd to become readable"),
    ],
    // libc's poll and epoll_wait where they are syscalls of their own.
    arch::HELPER_WAITS,
    &[
        allow!(
            SYS_epoll_pwait,
            Any,
            "wait on several eventfds at once (glibc's epoll_wait)"
        ),
        allow!(
            SYS_epoll_ctl,
            Any,
            "add or remove eventfds on an epoll set created before install"
        ),
        allow!(
            SYS_clock_nanosleep,
            Any,
            "thread::sleep for pacing and back-off"
        ),
        allow!(SYS_nanosleep, Any, "thread::sleep on older glibc"),
    ],
];

/// Ioctls the virtio notify worker may make.
pub const VIRTIO_WORKER_IOCTLS: &[KvmIoctl] = &[
    // Completions raised through KVM_IRQ_LINE (--virtio-irq line).
    ioctls::IRQ_LINE,
];

/// The virtio notify worker (`--virtio-notify ioeventfd`) once its loop
/// runs: wait on the devices' ioeventfds, serve the queue (disk I/O),
/// signal the completion.
pub const VIRTIO_WORKER: &[Rule] =
    &concat::<_, { total(VIRTIO_WORKER_PARTS) }>(VIRTIO_WORKER_PARTS);

const VIRTIO_WORKER_PARTS: &[&[Rule]] = &[
    &[allow!(
        SYS_ioctl,
        Ioctls(VIRTIO_WORKER_IOCTLS),
        "completion interrupts through KVM_IRQ_LINE (--virtio-irq line)"
    )],
    // libc's epoll_wait where it is a syscall of its own.
    arch::VIRTIO_WORKER_WAITS,
    &[
        allow!(
            SYS_epoll_pwait,
            Any,
            "wait on the devices' ioeventfds (glibc's epoll_wait)"
        ),
        allow!(SYS_read, Any, "consume an ioeventfd's count"),
        allow!(
            SYS_write,
            Any,
            "signal a completion through an irqfd (--virtio-irq irqfd); panic messages to stderr"
        ),
        allow!(SYS_writev, Any, "vectored writes through std's LineWriter"),
        allow!(SYS_pread64, Any, "virtio-blk reads its disk file"),
        allow!(SYS_pwrite64, Any, "virtio-blk writes its disk file"),
        allow!(
            SYS_fdatasync,
            Any,
            "virtio-blk flush requests make earlier writes durable before completing"
        ),
    ],
];

/// The entries for `kind`: the runtime set, then the kind's own.
pub fn rules(kind: ThreadKind) -> Vec<&'static Rule> {
    let own = match kind {
        ThreadKind::Vcpu => VCPU,
        ThreadKind::VmmMain => VMM_MAIN,
        ThreadKind::Helper => HELPER,
        ThreadKind::VirtioWorker => VIRTIO_WORKER,
    };
    RUNTIME.iter().chain(own.iter()).collect()
}
