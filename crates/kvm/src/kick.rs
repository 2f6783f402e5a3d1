//! Stopping a vCPU that is inside KVM_RUN.
//!
//! The controller sets the vCPU's stop flag, then sends the kick signal to
//! the vCPU thread. The handler sets `immediate_exit` in that thread's
//! `kvm_run`, so KVM_RUN returns EINTR whether the signal lands while the
//! guest runs or just before the thread re-enters KVM_RUN (the race a bare
//! signal would lose). The run loop checks its stop flag only then: no
//! polling on the exit path.

use std::cell::Cell;
use std::sync::Once;

use kvm_ioctls::VcpuFd;
use vmm_sys_util::signal::{register_signal_handler, SIGRTMIN};

use crate::KvmError;

thread_local! {
    // The calling thread's kvm_run.immediate_exit byte, or null.
    static IMMEDIATE_EXIT: Cell<*mut u8> = const { Cell::new(std::ptr::null_mut()) };
}

extern "C" fn on_kick(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // try_with: the signal may land while the thread is being torn down.
    let _ = IMMEDIATE_EXIT.try_with(|p| {
        let p = p.get();
        if !p.is_null() {
            // SAFETY: `p` points into this thread's mapped kvm_run and is
            // cleared (disarm) before the VcpuFd that owns it is dropped.
            unsafe { std::ptr::write_volatile(p, 1) };
        }
    });
}

/// The signal number used to kick vCPUs.
pub fn kick_signal() -> libc::c_int {
    SIGRTMIN()
}

/// Install the kick handler (once per process).
pub fn install() -> Result<(), KvmError> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = register_signal_handler(kick_signal(), on_kick).map_err(|e| {
            KvmError::Config(format!("cannot install the vCPU kick signal handler: {e}"))
        });
    });
    result
}

/// Point this thread's kick handler at `vcpu`'s kvm_run. Call on the vCPU
/// thread before its first KVM_RUN.
pub fn arm(vcpu: &mut VcpuFd) {
    let p: *mut u8 = &mut vcpu.get_kvm_run().immediate_exit;
    IMMEDIATE_EXIT.with(|c| c.set(p));
}

/// Forget this thread's kvm_run. Call before the VcpuFd is dropped.
pub fn disarm() {
    IMMEDIATE_EXIT.with(|c| c.set(std::ptr::null_mut()));
}
