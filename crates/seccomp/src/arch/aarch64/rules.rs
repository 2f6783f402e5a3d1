//! aarch64's pieces of the allow-lists: the vCPU's one-register ioctls;
//! no legacy syscalls (arm64 has only the generic syscall table: glibc
//! waits through ppoll and epoll_pwait, which the neutral lists name).

use crate::kvm_ioctl::KvmIoctl;
use crate::rule::Rule;

use super::ioctls::{GET_ONE_REG, SET_ONE_REG};

/// What the report of a dead vCPU reads, and the SMCCC answer.
pub(crate) const VCPU_STATE_IOCTLS: &[KvmIoctl] = &[
    // A dead vCPU's registers (PC, PSTATE, ESR) one at a time, for the
    // report of an exit KVM could not handle.
    GET_ONE_REG,
    // The answer to an SMCCC call KVM's filter forwarded, in x0.
    SET_ONE_REG,
];

/// None: arm64 resumes no vCPU from a sleep state.
pub(crate) const VCPU_RESUME_IOCTLS: &[KvmIoctl] = &[];

/// None: arm64's libc polls through ppoll and epoll_pwait.
pub(crate) const HELPER_WAITS: &[Rule] = &[];

/// None: arm64's libc epoll_wait is epoll_pwait.
pub(crate) const VIRTIO_WORKER_WAITS: &[Rule] = &[];
