//! The raw-KVM floor on x86_64: the probe's own loops on /dev/kvm with no
//! VMM around them, on a ladder of raw VMs that add the pieces of
//! trapline's PC machine one at a time (identity map and TSS, CPUID,
//! irqchip, PIT, ioeventfds, coalesced zones, memslots, irqfd).
//!
//! - `code`: the guest code, each loop byte for byte the probe's;
//! - `pieces` and `ladder`: which pieces each rung has and which loops
//!   it runs;
//! - `anatomy`: the anatomy VM (each access stamped, guest and host);
//! - `vm`: a raw VM with optional pieces and a bare KVM_RUN loop.

pub mod anatomy;
pub mod code;
pub mod ladder;
pub mod pieces;
pub mod vm;
