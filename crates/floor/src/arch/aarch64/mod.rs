//! The raw-KVM floor on arm64: the arm64 probe's own loops on /dev/kvm
//! with no VMM around them, on a ladder of raw VMs that add the pieces of
//! trapline's `virt` machine one at a time (vGIC, ITS, ioeventfds,
//! coalesced zone, memslots, irqfd). The names match the x86 floor's, so
//! the runner is the same code on both.
//!
//! - `code`: the guest code, each loop word for word the probe's;
//! - `pieces` and `ladder`: which pieces each rung has and which loops
//!   it runs;
//! - `anatomy` (arm64 only) and `anatomy_code`: the anatomy VM (each
//!   access stamped, guest and host) and its guest code;
//! - `mmu`: the identity map and MMU registers the vCPU starts with;
//! - `vm` (arm64 only): a raw arm64 VM with optional pieces and a bare
//!   KVM_RUN loop.
//!
//! All but `vm` is plain logic, compiled on x86 too, so its tests run on
//! both and the x86 build's name checks see the arm64 rows.

#[cfg(target_arch = "aarch64")]
pub mod anatomy;
pub mod anatomy_code;
pub mod code;
pub mod ladder;
pub mod mmu;
pub mod pieces;
#[cfg(target_arch = "aarch64")]
pub mod vm;
