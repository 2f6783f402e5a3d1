//! What differs between the architectures trapline builds for: the BPF
//! program's target, where the trapped syscall's arguments sit in a signal
//! frame, the syscalls only one architecture has, its own KVM ioctls and
//! its pieces of the allow-lists. Each module exports
//! the same names; the neutral code calls those.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use aarch64::*;
#[cfg(target_arch = "x86_64")]
pub use x86_64::*;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!(
    "trapline-seccomp knows x86_64 and aarch64; add crates/seccomp/src/arch/<arch>.rs \
     (the BPF target, the signal frame's argument register, the arch-only syscall names, ioctls and allow-list pieces)"
);
