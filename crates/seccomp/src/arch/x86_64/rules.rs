//! x86_64's pieces of the allow-lists: the vCPU's register ioctls, and the
//! legacy syscalls (poll, epoll_wait) glibc still makes here.

use crate::ioctls::SET_MP_STATE;
use crate::kvm_ioctl::KvmIoctl;
use crate::rule::{Only::Any, Rule};

use super::ioctls::{GET_REGS, GET_SREGS, SET_REGS, SET_SREGS, TRANSLATE};

/// What the report of a dead vCPU reads.
pub(crate) const VCPU_STATE_IOCTLS: &[KvmIoctl] = &[
    // KVM_EXIT_SHUTDOWN (triple fault): the loop reads RIP for the report.
    GET_REGS, // Diagnostics of a dead vCPU (mode, CR0/CR3) next to GET_REGS.
    GET_SREGS,
    // ... and the page of its RIP, to show the instruction bytes there
    // when KVM cannot run it (internal error, failed entry).
    TRANSLATE,
];

/// Resume from ACPI S3: each vCPU thread puts its own vCPU in real mode
/// at the waking vector (boot vCPU) or back in wait-for-SIPI (the
/// others) before its next KVM_RUN.
pub(crate) const VCPU_RESUME_IOCTLS: &[KvmIoctl] = &[SET_REGS, SET_SREGS, SET_MP_STATE];

/// A helper's waits that are syscalls of their own here (arm64's libc
/// reaches them through ppoll and epoll_pwait).
pub(crate) const HELPER_WAITS: &[Rule] = &[
    allow!(
        SYS_poll,
        Any,
        "wait for an eventfd to become readable (libc poll)"
    ),
    allow!(SYS_epoll_wait, Any, "wait on several eventfds at once"),
];

/// The virtio worker's wait that is a syscall of its own here (arm64's
/// libc epoll_wait is epoll_pwait).
pub(crate) const VIRTIO_WORKER_WAITS: &[Rule] = &[allow!(
    SYS_epoll_wait,
    Any,
    "wait on the devices' ioeventfds (epoll set built before install)"
)];
