//! What every architecture's raw VM does the same way: its RAM as one
//! memslot, the registrations it keeps for its life, and the bare KVM_RUN
//! loop that runs the guest to its done exit.
//!
//! Nothing here is trapline's VMM code path: the VM is made with plain
//! kvm-ioctls calls. Where a piece must be the same as trapline's (an
//! ioeventfd, a coalesced zone, the read-only memslot, the irqfd) it is
//! registered through `trapline-fastpath`, the same RAII wrappers
//! trapline's machine uses, so the kernel sees the very same registration.

use std::collections::BTreeMap;
use std::sync::Arc;

use kvm_bindings::kvm_userspace_memory_region;
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd, VmFd};
use trapline_abi as abi;
use trapline_fastpath::{CoalescedZone, Datamatch, IoEvent, IrqFd, ReadOnlyRegion, Space};
use trapline_kvm::KVM_CAP_IOEVENTFD_ANY_LENGTH;
use vm_memory::{GuestAddress, GuestMemoryBackend, GuestMemoryMmap};

/// One measurement: a loop of `iterations`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FloorSample {
    /// Iterations timed.
    pub iterations: u64,
    /// Clock ticks for all of them: TSC cycles on x86, the virtual
    /// counter's ticks (or the PMU's cycles) on arm64.
    pub cycles: u64,
    /// Exits to user space during the loop (the done exit not counted).
    pub user_exits: u64,
    /// Times the measured ioeventfd fired.
    pub eventfd_count: u64,
    /// The last value the loop read (read loops), else 0.
    pub value: u64,
    /// KVM's own exit counters over the run where the floor reads them
    /// (arm64: its binary statistics, as `--stat` reads them, the done
    /// exit taken off `exits`); empty on x86.
    pub kvm_exits: BTreeMap<String, u64>,
}

/// trapline's lab machines' RAM (`--mem` 128): a raw VM with trapline's
/// memslots has as much.
pub(crate) const TRAPLINE_MEM: usize = 128 << 20;

/// An ioctl's failure, named.
pub(crate) fn err(what: &'static str) -> impl Fn(kvm_ioctls::Error) -> String {
    move |e| format!("raw floor: {what}: {e}")
}

/// A registration's failure.
pub(crate) fn fp(e: trapline_fastpath::FastpathError) -> String {
    format!("raw floor: {e}")
}

/// The datamatch trapline's wildcard ioeventfds use: any length where KVM
/// has KVM_CAP_IOEVENTFD_ANY_LENGTH, else the value the probe writes.
pub(crate) fn wildcard(kvm: &Kvm) -> Datamatch {
    if kvm.check_extension_raw(KVM_CAP_IOEVENTFD_ANY_LENGTH) > 0 {
        Datamatch::Any
    } else {
        Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
    }
}

/// Guest RAM of `size` bytes at `base`, mapped as memslot 0.
///
/// # Safety
/// The caller keeps the returned memory mapped until the VM fd is closed
/// (a raw VM holds it in a field dropped after the VM's).
pub(crate) unsafe fn map_ram(vm: &VmFd, base: u64, size: usize) -> Result<GuestMemoryMmap, String> {
    let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(base), size)])
        .map_err(|e| format!("raw floor: guest memory: {e}"))?;
    let region = mem.iter().next().ok_or("raw floor: no memory region")?;
    let desc = kvm_userspace_memory_region {
        slot: 0,
        flags: 0,
        guest_phys_addr: base,
        memory_size: size as u64,
        userspace_addr: region.as_ptr() as u64,
    };
    // SAFETY: the range is `mem`'s own mapping, which the caller keeps
    // until the VM fd is closed (this function's contract).
    unsafe { vm.set_user_memory_region(desc) }.map_err(err("KVM_SET_USER_MEMORY_REGION"))?;
    Ok(mem)
}

/// Registrations a raw VM keeps for its life (dropped before the VM fd).
#[derive(Default)]
pub(crate) struct Kept(Vec<Keep>);

/// One kept registration (held only for its `Drop`).
enum Keep {
    IoEvent(#[allow(dead_code)] IoEvent),
    Zone(#[allow(dead_code)] CoalescedZone),
    Ro(#[allow(dead_code)] ReadOnlyRegion),
    IrqFd(#[allow(dead_code)] IrqFd),
}

impl Kept {
    /// An ioeventfd at `addr` in `space`.
    pub(crate) fn ioevent(
        &mut self,
        vm: &Arc<VmFd>,
        space: Space,
        addr: u64,
        m: Datamatch,
    ) -> Result<(), String> {
        let e = IoEvent::register(vm.clone(), space, addr, m).map_err(fp)?;
        self.0.push(Keep::IoEvent(e));
        Ok(())
    }

    /// Each of `list`'s ioeventfds.
    pub(crate) fn ioevents(
        &mut self,
        vm: &Arc<VmFd>,
        list: impl IntoIterator<Item = (Space, u64, Datamatch)>,
    ) -> Result<(), String> {
        for (space, addr, m) in list {
            self.ioevent(vm, space, addr, m)?;
        }
        Ok(())
    }

    /// A coalesced zone of `len` bytes at `addr` in `space`.
    pub(crate) fn zone(
        &mut self,
        vm: &Arc<VmFd>,
        space: Space,
        addr: u64,
        len: u32,
    ) -> Result<(), String> {
        let z = CoalescedZone::register(vm.clone(), space, addr, len).map_err(fp)?;
        self.0.push(Keep::Zone(z));
        Ok(())
    }

    /// A read-only memslot `slot` of `size` bytes at `gpa`.
    pub(crate) fn read_only(
        &mut self,
        vm: &Arc<VmFd>,
        slot: u32,
        gpa: u64,
        size: usize,
    ) -> Result<(), String> {
        let ro = ReadOnlyRegion::map(vm.clone(), slot, gpa, size).map_err(fp)?;
        self.0.push(Keep::Ro(ro));
        Ok(())
    }

    /// An irqfd on `gsi`.
    pub(crate) fn irqfd(&mut self, vm: &Arc<VmFd>, gsi: u32) -> Result<(), String> {
        let fd = IrqFd::register(vm.clone(), gsi).map_err(fp)?;
        self.0.push(Keep::IrqFd(fd));
        Ok(())
    }
}

/// What the run loop makes of an exit.
pub(crate) enum Seen {
    /// The loop's done exit: the run is over.
    Done,
    /// The user exit a loop takes on purpose (counted).
    UserExit,
    /// Anything else: the run fails.
    Unexpected,
}

/// Run the vCPU to the loop's done exit (KVM_RUN again when a signal
/// interrupts it), each exit judged by `seen`; returns the user exits on
/// the way.
pub(crate) fn run_to_done(
    vcpu: &mut VcpuFd,
    seen: impl Fn(&VcpuExit) -> Seen,
) -> Result<u64, String> {
    let mut user_exits = 0u64;
    loop {
        match vcpu.run() {
            Ok(exit) => match seen(&exit) {
                Seen::Done => return Ok(user_exits),
                Seen::UserExit => user_exits += 1,
                Seen::Unexpected => return Err(format!("raw floor: unexpected exit {exit:?}")),
            },
            Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => {}
            Err(e) => return Err(format!("raw floor: KVM_RUN: {e}")),
        }
    }
}
