//! The floor's side of the anatomy of a user exit: a raw VM's guest stamps
//! its clock just before and just after each access, and a bare KVM_RUN
//! loop (`run_stamped`, used by each architecture's `anatomy`) stamps the
//! host's when KVM_RUN returns and just before it enters it again (into
//! arrays allocated before the run: the same two clock reads and a few
//! stores per exit that trapline's armed run loop does). With KVM's clock
//! offset the lab splits each access into the same legs as trapline's
//! (`trapline_abi::legs`).

use kvm_ioctls::{VcpuExit, VcpuFd};
use trapline_abi::{ClockAlign, Stamps};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use crate::raw::Seen;

/// One path's stamped accesses on the raw floor.
#[derive(Clone, Debug)]
pub struct FloorAnatomy {
    /// The path's scenario name.
    pub path: &'static str,
    /// Each access's four stamps.
    pub stamps: Vec<Stamps>,
    /// The median cost of the guest's two stamps with no access between
    /// them (0 where not measured).
    pub stamp_cost: u64,
    /// The guest's clock minus the host's, its error and how it was found;
    /// or why it could not be.
    pub offset: Result<(u64, u64, ClockAlign), String>,
}

/// Run the vCPU to its done exit, stamping each of the `n` path exits the
/// loop takes: returns `(t1, t2)` per exit, in order. Any other return
/// (a signal's EINTR among them) fails the run: it would pair one access's
/// guest stamps with another exit's.
pub(crate) fn run_stamped(
    vcpu: &mut VcpuFd,
    n: usize,
    seen: impl Fn(&VcpuExit) -> Seen,
) -> Result<Vec<(u64, u64)>, String> {
    let mut host = vec![(0u64, 0u64); n];
    let mut exits = 0usize;
    let mut t1 = 0u64;
    loop {
        let t2 = trapline_bus::cycles();
        if exits > 0 && exits <= n {
            host[exits - 1] = (t1, t2);
        }
        let r = vcpu.run();
        t1 = trapline_bus::cycles();
        match r {
            Ok(exit) => match seen(&exit) {
                Seen::Done if exits == n => return Ok(host),
                Seen::Done => {
                    return Err(format!("raw floor anatomy: {exits} exits for {n} accesses"))
                }
                Seen::UserExit => exits += 1,
                Seen::Unexpected => {
                    return Err(format!("raw floor anatomy: unexpected exit {exit:?}"))
                }
            },
            Err(e) => return Err(format!("raw floor anatomy: KVM_RUN: {e}")),
        }
    }
}

/// The guest's stamps of the last run (16 bytes per access from `at`:
/// `t0`, `t3`) beside the host's.
pub(crate) fn read_stamps(mem: &GuestMemoryMmap, at: u64, host: &[(u64, u64)]) -> Vec<Stamps> {
    host.iter()
        .enumerate()
        .map(|(i, &(t1, t2))| {
            let (t0, t3) = guest_pair(mem, at, i);
            Stamps { t0, t1, t2, t3 }
        })
        .collect()
}

/// The median of `n` guest stamp pairs from `at` (`t3 - t0` of a program
/// with nothing between its two clock reads).
pub(crate) fn median_gap(mem: &GuestMemoryMmap, at: u64, n: usize) -> u64 {
    let mut d: Vec<u64> = (0..n)
        .map(|i| {
            let (t0, t3) = guest_pair(mem, at, i);
            t3.wrapping_sub(t0)
        })
        .collect();
    d.sort_unstable();
    d.get(n / 2).copied().unwrap_or(0)
}

/// Access `i`'s two guest stamps (0 where the array is not in RAM).
fn guest_pair(mem: &GuestMemoryMmap, at: u64, i: usize) -> (u64, u64) {
    let base = at + 16 * i as u64;
    let read = |o: u64| mem.read_obj::<u64>(GuestAddress(base + o)).unwrap_or(0);
    (read(0), read(8))
}
