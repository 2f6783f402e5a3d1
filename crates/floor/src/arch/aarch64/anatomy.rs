//! The arm64 floor's anatomy VM: a bare raw VM (8 MiB of RAM, no vGIC,
//! the floor's identity map with the MMU and caches on, EL1h) whose guest
//! stamps the virtual counter just before and just after each access and
//! stores both into an array in its RAM (`anatomy_code`); the host's bare
//! loop (`crate::anatomy::run_stamped`) stamps each exit with the same
//! counter. The clocks are aligned as trapline's are: the vCPU's
//! KVM_REG_ARM_TIMER_CNT between two host CNTVCT_EL0 reads
//! (`trapline_kvm::clock_offset`). The paths are the arm64 probe's user
//! paths a bare VM can take: MMIO read and write (an unmapped page), and
//! the HVC KVM's SMCCC filter forwards to user space where KVM has the
//! filter (Linux 6.4+); elsewhere that path's error says why. The floor
//! does not answer the forwarded HVC (its guest ignores x0): the least a
//! VMM does is return to KVM_RUN.

use kvm_ioctls::{Kvm, VcpuExit};
use trapline_abi as abi;
use trapline_kvm::regs;
use vm_memory::{Bytes, GuestAddress};

use super::anatomy_code::{self as code, DONE_MMIO, HYPERCALL_USER};
use super::vm::{bare_vm, set, BareVm};
use crate::anatomy::{median_gap, read_stamps, run_stamped, FloorAnatomy};
use crate::raw::Seen;

pub use super::anatomy_code::PATHS;

/// Where the code goes (away from the page table: nothing pins it).
const CODE: u64 = abi::VIRT_RAM_BASE + 0x50_0000;
/// Where the guest stores its stamps: 16 bytes per access.
const STAMPS: u64 = abi::VIRT_RAM_BASE + 0x10_0000;
/// Most accesses one run stamps (the array's room below the code).
pub const MAX_ACCESSES: usize = ((CODE - STAMPS) / 16) as usize;

/// Which exits are the path's own.
fn seen_for(path: &'static str) -> impl Fn(&VcpuExit) -> Seen {
    move |exit| match (path, exit) {
        (_, VcpuExit::MmioWrite(DONE_MMIO, _)) => Seen::Done,
        ("mmio-user-read", VcpuExit::MmioRead(a, _))
        | ("mmio-user-write", VcpuExit::MmioWrite(a, _))
            if *a == abi::VIRT_PROBE_MMIO_USER =>
        {
            Seen::UserExit
        }
        (HYPERCALL_USER, VcpuExit::Hypercall(h)) if h.nr == u64::from(abi::SMCCC_PROBE_USER_FN) => {
            Seen::UserExit
        }
        _ => Seen::Unexpected,
    }
}

/// Stamp `n` accesses of `path` (after `warmup` unstamped ones on the same
/// VM); `Err` for a path the floor has no program for, an HVC KVM will not
/// forward (the reason), or a failed run.
pub fn measure(
    kvm: &Kvm,
    path: &'static str,
    n: usize,
    warmup: usize,
) -> Result<FloorAnatomy, String> {
    let access = code::body(path)
        .ok_or_else(|| format!("the arm64 raw floor has no anatomy program for {path}"))?;
    let n = n.clamp(1, MAX_ACCESSES);
    let mut vm = loaded(kvm, access)?;
    if path == HYPERCALL_USER {
        forward_hvc(&vm)?;
    }
    let offset = trapline_kvm::clock_offset(&vm.vcpu);
    run_once(&mut vm, path, warmup.max(1), warmup.max(1))?;
    let host = run_once(&mut vm, path, n, n)?;
    let stamps = read_stamps(&vm.mem, STAMPS, &host);
    let stamp_cost = stamp_cost(kvm)?;
    Ok(FloorAnatomy {
        path,
        stamps,
        stamp_cost,
        offset,
    })
}

/// Have KVM forward the probe's SMCCC function to user space, or say why
/// it cannot (no SMCCC filter before Linux 6.4: KVM answers an unknown
/// HVC itself, so no HVC reaches a VMM).
fn forward_hvc(vm: &BareVm) -> Result<(), String> {
    if let Some(why) = trapline_kvm::smccc::filter_offered(&vm.vm) {
        return Err(why);
    }
    trapline_kvm::smccc::forward_to_user(&vm.vm, abi::SMCCC_PROBE_USER_FN, 1)
        .map_err(|e| format!("raw floor anatomy: {e}"))
}

/// A bare VM with `access`'s program loaded, the PC at its top and its
/// fixed registers set.
fn loaded(kvm: &Kvm, access: &[u32]) -> Result<BareVm, String> {
    let vm = bare_vm(kvm)?;
    vm.mem
        .write_slice(
            &super::code::bytes(&code::program(access, CODE)),
            GuestAddress(CODE),
        )
        .map_err(|e| format!("raw floor anatomy: writing the code: {e}"))?;
    set(&vm.vcpu, regs::PC, CODE, "PC")?;
    for (r, v) in code::fixed_regs() {
        set(&vm.vcpu, regs::x(r), v, "an anatomy register")?;
    }
    Ok(vm)
}

/// The median of the program's two stamps with nothing between them (no
/// access, so no exit: the run's only exit is the done one).
fn stamp_cost(kvm: &Kvm) -> Result<u64, String> {
    const N: usize = 128;
    let mut vm = loaded(kvm, &[])?;
    run_once(&mut vm, "none", N, 0)?;
    Ok(median_gap(&vm.mem, STAMPS, N))
}

/// One run of `n` accesses making `exits` exits: the host's stamps per
/// exit. Only the count and the array's address are set (the PC is where
/// the last run's done store left it, or the top before the first run).
fn run_once(
    vm: &mut BareVm,
    path: &'static str,
    n: usize,
    exits: usize,
) -> Result<Vec<(u64, u64)>, String> {
    set(&vm.vcpu, regs::x(code::REG_LEFT), n as u64, "the count")?;
    set(&vm.vcpu, regs::x(code::REG_STAMPS), STAMPS, "the stamps")?;
    run_stamped(&mut vm.vcpu, exits, seen_for(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trapline_abi::{legs, Legs};

    /// Few accesses: under TCG (the emulated arm64 host) an exit costs
    /// 50–600 µs.
    const N: usize = 16;

    /// On KVM: every path the floor has splits each access into legs that
    /// are in order on one time line and inside its round trip, accesses
    /// one after another; the HVC path either does the same or says why
    /// KVM will not forward it. Behaviour, never timings.
    #[test]
    fn every_arm64_floor_path_splits_into_ordered_legs_on_kvm() {
        let Ok(kvm) = Kvm::new() else {
            eprintln!(
                "SKIPPED: /dev/kvm is not available; the arm64 floor's anatomy runs were NOT tested"
            );
            return;
        };
        for path in PATHS {
            let a = match measure(&kvm, path, N, 2) {
                Err(why) if path == HYPERCALL_USER => {
                    assert!(why.contains("SMCCC"), "{path}: {why}");
                    eprintln!("{path}: not forwarded on this host: {why}");
                    continue;
                }
                r => r.unwrap_or_else(|e| panic!("{path}: {e}")),
            };
            assert_eq!(a.stamps.len(), N, "{path}");
            let (offset, err, how) = a.offset.clone().expect("KVM_REG_ARM_TIMER_CNT reads");
            assert_eq!(how, abi::ClockAlign::TimerCount);
            let split: Vec<Legs> = a.stamps.iter().filter_map(|s| legs(*s, offset)).collect();
            assert_eq!(
                split.len(),
                N,
                "{path}: every access in order on one time line (offset {offset:#x} ± {err}): {:?}",
                a.stamps
            );
            for l in &split {
                assert_eq!(l.exit + l.vmm + l.entry, l.round, "{path}: {l:?}");
                assert!(l.exit.max(l.vmm).max(l.entry) <= l.round, "{path}: {l:?}");
            }
            for w in a.stamps.windows(2) {
                assert!(w[0].t3 <= w[1].t0, "{path}: guest stamps in order: {w:?}");
                assert!(w[0].t2 <= w[1].t1, "{path}: host stamps in order: {w:?}");
            }
            eprintln!(
                "{path}: {N} accesses split; first {:?} (ticks, TCG: behaviour only)",
                split[0]
            );
        }
    }

    #[test]
    fn a_path_without_a_program_is_refused_with_its_name() {
        let Ok(kvm) = Kvm::new() else {
            eprintln!("SKIPPED: /dev/kvm is not available");
            return;
        };
        let e = measure(&kvm, "ro-memslot-write", N, 1).unwrap_err();
        assert!(e.contains("ro-memslot-write"), "{e}");
    }
}
