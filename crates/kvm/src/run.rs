//! The KVM_RUN loop: enter the guest, decode the exit once ([`Exit`]: the
//! profile keys it, [`dispatch`] acts on it), drain the coalesced ring,
//! act on what dispatch says.
//!
//! Per exit it does: one relaxed counter bump, (when coalescing is on) one
//! acquire load to see whether the ring holds entries, and a binary search
//! on a frozen bus. No lock, no allocation, no logging, no channel poll.
//! With `--stat` (a second copy of the loop, chosen once per vCPU) it adds
//! two TSC reads and a single-writer update of the vCPU's exit profile
//! (the exit's key, its handling time and the time inside the KVM_RUN it
//! ended: both as distributions for the first keys).

use std::sync::atomic::Ordering;

use kvm_bindings::{kvm_run, KVM_EXIT_IO};
use kvm_ioctls::VcpuFd;
use trapline_bus::{ExitKind, ExitProfile};
use trapline_fastpath::Space;

use crate::arch;
use crate::crash;
use crate::dispatch::{dispatch, Crash, ExitOutcome};
use crate::exit::Exit;
use crate::stamps::ExitStamps;
use crate::vcpu::{VcpuContext, VcpuEnd};

/// Dispatch one coalesced entry (from any vCPU's drain).
fn dispatch_coalesced(ctx: &VcpuContext, space: Space, addr: u64, data: &[u8]) {
    let bus = match space {
        Space::Pio => &ctx.pio,
        Space::Mmio => &ctx.mmio,
    };
    // A coalesced write cannot stop the VM: zones are only registered over
    // devices whose writes have no such effect.
    let _ = bus.write(ctx.index, addr, data);
}

/// The cycle counter (TSC on x86, CNTVCT_EL0 on arm64), for `--stat`'s
/// handling times.
#[inline(always)]
fn tsc() -> u64 {
    trapline_bus::cycles()
}

/// Run `vcpu` until something ends it.
pub fn run_vcpu(vcpu: &mut VcpuFd, ctx: &VcpuContext) -> VcpuEnd {
    // Two copies of the loop: without a profile not one instruction is
    // added to the hot path; with one, two TSC reads and a table update
    // per exit.
    match ctx.profile.clone() {
        None => run_loop::<false>(vcpu, ctx, None),
        Some(p) => run_loop::<true>(vcpu, ctx, Some(&p)),
    }
}

fn run_loop<const PROFILE: bool>(
    vcpu: &mut VcpuFd,
    ctx: &VcpuContext,
    profile: Option<&ExitProfile>,
) -> VcpuEnd {
    let counters = &*ctx.counters;
    let run_ptr: *const kvm_run = vcpu.get_kvm_run();
    // With PROFILE: when the last KVM_RUN returned, and the key of that
    // exit with the cycles it spent inside KVM_RUN, charged with the
    // cycles up to the next KVM_RUN (or the end).
    let mut returned_at = 0u64;
    let mut in_kvm = 0u64;
    let mut pending: Option<Pending> = None;
    // The lab's exit-stamp mailbox (the anatomy pass), when armed.
    let mut stamps = arm_stamps(ctx);
    'run: loop {
        if ctx.stop.load(Ordering::Acquire) {
            if PROFILE {
                charge(profile, pending.take(), returned_at);
            }
            return VcpuEnd::Stopped;
        }
        let entered = if PROFILE {
            charge(profile, pending.take(), returned_at)
        } else {
            0
        };
        // Unarmed: this one branch is all the mailbox costs.
        let result = match stamps.as_mut() {
            None => vcpu.run(),
            Some(s) => s.run(vcpu),
        };
        if PROFILE {
            returned_at = tsc();
            in_kvm = returned_at.wrapping_sub(entered);
            if let Some(p) = profile {
                p.add_in_kvm(in_kvm);
            }
        }
        // SAFETY: run_ptr is the vCPU's kvm_run mapping, alive as long as
        // `vcpu`; io_size reads the io member only when the exit is an IO one.
        let exit = Exit::decode(result, unsafe { io_size(run_ptr) });
        if PROFILE {
            let (kind, addr) = exit.key();
            pending = Some(Pending { kind, addr, in_kvm });
        }
        if let Some(ring) = &ctx.ring {
            if !ring.is_empty() {
                let n = ring.drain(|e| dispatch_coalesced(ctx, e.space, e.addr, e.bytes()));
                counters.add(ExitKind::CoalescedEntries, n);
            }
        }
        let end = match dispatch(ctx, exit) {
            ExitOutcome::Resume => continue 'run,
            ExitOutcome::Kicked => {
                // Clear immediate_exit so the next KVM_RUN enters the guest,
                // then re-check the stop flag.
                vcpu.set_kvm_immediate_exit(0);
                continue 'run;
            }
            ExitOutcome::End(end) => end,
            ExitOutcome::Arch(action) => {
                // SAFETY: run_ptr is the vCPU's kvm_run mapping, alive as
                // long as `vcpu`, and holds the exit the action came from.
                let finished = unsafe { arch::finish_exit(vcpu, run_ptr, ctx, action) };
                match finished {
                    None => continue 'run,
                    Some(end) => end,
                }
            }
            // SAFETY: run_ptr is the vCPU's kvm_run mapping, alive as long
            // as `vcpu`, and holds the exit dispatch just decoded.
            ExitOutcome::Crashed(what) => unsafe { crash_end(vcpu, run_ptr, ctx, what) },
        };
        if PROFILE {
            charge(profile, pending.take(), returned_at);
        }
        return end;
    }
}

/// The vCPU's slot of the exit-stamp mailbox, if the lab armed it.
#[cold]
fn arm_stamps(ctx: &VcpuContext) -> Option<ExitStamps> {
    let mailbox = ctx.exit_stamps.as_ref()?;
    ExitStamps::arm(ctx.memory.as_ref()?, mailbox, ctx.index)
}

/// Build the end of a crashed vCPU from what only the vCPU can tell.
///
/// # Safety
/// `run` must be `vcpu`'s kvm_run mapping, holding the exit that `what`
/// was decoded from.
#[cold]
unsafe fn crash_end(
    vcpu: &mut VcpuFd,
    run: *const kvm_run,
    ctx: &VcpuContext,
    what: Crash,
) -> VcpuEnd {
    match what {
        Crash::TripleFault => VcpuEnd::TripleFault {
            rip: crash::pc(vcpu),
        },
        Crash::InternalError => {
            // SAFETY: the caller promises the exit reason is
            // INTERNAL_ERROR, so the internal member of the union is
            // active; it is copied out before any other ioctl can change
            // the mapping.
            let internal = unsafe { (*run).__bindgen_anon_1.internal };
            let n = (internal.ndata as usize).min(internal.data.len());
            VcpuEnd::InternalError {
                suberror: internal.suberror,
                data: internal.data[..n].to_vec(),
                dump: crash::capture(vcpu, ctx.memory.as_ref()),
            }
        }
        Crash::FailEntry { reason } => VcpuEnd::FailEntry {
            reason,
            dump: crash::capture(vcpu, ctx.memory.as_ref()),
        },
    }
}

/// The exit a profiled loop is handling: its key and the cycles spent in
/// the KVM_RUN that returned it.
#[derive(Clone, Copy)]
struct Pending {
    kind: ExitKind,
    addr: u64,
    in_kvm: u64,
}

/// Charge the cycles since `returned_at` to `exit`; returns the TSC now.
#[inline(always)]
fn charge(profile: Option<&ExitProfile>, exit: Option<Pending>, returned_at: u64) -> u64 {
    let now = tsc();
    if let (Some(p), Some(e)) = (profile, exit) {
        let cycles = now.wrapping_sub(returned_at);
        p.record_exit(e.kind, e.addr, cycles, Some(e.in_kvm));
        p.add_in_vmm(cycles);
    }
    now
}

/// The width of one element of the PIO access in `run`, or 1 when the
/// exit is not a PIO one ([`Exit::decode`] ignores it then).
///
/// # Safety
/// `run` must point at a mapped kvm_run.
#[inline(always)]
unsafe fn io_size(run: *const kvm_run) -> usize {
    // SAFETY: the caller promises a mapped kvm_run; the io member of the
    // union is read only when the exit reason says it is the active one.
    unsafe {
        if (*run).exit_reason == KVM_EXIT_IO {
            (*run).__bindgen_anon_1.io.size as usize
        } else {
            1
        }
    }
}
