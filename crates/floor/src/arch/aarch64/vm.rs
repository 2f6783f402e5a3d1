//! A raw arm64 /dev/kvm VM for the floor, with each piece of trapline's
//! `virt` machine optional: the ladder adds them one at a time. What every
//! architecture's raw VM does the same way (RAM, kept registrations, the
//! bare KVM_RUN loop) is the crate's `raw`; the vGIC is trapline's own
//! (`trapline_kvm::gic`), set up in trapline's order. The vCPU starts at
//! EL1h with the MMU and caches on (an identity map the host writes, with
//! the probe's attributes: Device below 1 GiB, Normal write-back above),
//! as the probe runs, so a RAM read is a cached read on both.

use std::collections::BTreeMap;
use std::sync::Arc;

use kvm_bindings::{kvm_device_attr, kvm_vcpu_init, KVM_ARM_VCPU_PSCI_0_2};
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd, VmFd};
use trapline_abi as abi;
use trapline_abi::KERNEL_EXIT_COUNTERS;
use trapline_fastpath::{Datamatch, IoEvent, Space};
use trapline_kvm::gic::Gic;
use trapline_kvm::regs;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use super::code::{self, Clock, FloorKind, DONE_MMIO};
use super::mmu;
use super::pieces::Pieces;
use crate::raw::{self, err, fp, FloorSample, Kept, Seen};

/// The bare floor's RAM from `VIRT_RAM_BASE`: the page table, and the
/// code and RAM word where the probe has them.
const BARE_MEM: usize = 8 << 20;

/// A raw VM set up to run one kind's loop, any number of times.
pub struct RawVm {
    // Drop order: registrations, the vGIC and the vCPU before the VM fd,
    // the VM before its memory.
    _keep: Kept,
    measured: Option<IoEvent>,
    stats: Option<trapline_kvm::StatsFd>,
    vcpu: VcpuFd,
    _gic: Option<Gic>,
    _vm: Arc<VmFd>,
    _mem: GuestMemoryMmap,
    kind: FloorKind,
}

/// The PMU's overflow interrupt for a vCPU with PMUv3: PPI 7 (INTID 23),
/// where QEMU's `virt` machine puts it.
const PMU_IRQ_INTID: u32 = 23;

/// Why this host cannot give the floor's vCPU a PMUv3 (`None`: it can).
pub fn pmu_v3_missing(kvm: &Kvm) -> Option<String> {
    (kvm.check_extension_raw(kvm_bindings::KVM_CAP_ARM_PMU_V3.into()) <= 0)
        .then(|| "this host's KVM offers no PMUv3 for its vCPUs (KVM_CAP_ARM_PMU_V3)".to_string())
}

/// KVM_SET_DEVICE_ATTR on the vCPU's PMUv3 group.
fn pmu_attr(vcpu: &VcpuFd, attr: u32, addr: u64, what: &str) -> Result<(), String> {
    let a = kvm_device_attr {
        flags: 0,
        group: kvm_bindings::KVM_ARM_VCPU_PMU_V3_CTRL,
        attr: attr.into(),
        addr,
    };
    vcpu.set_device_attr(&a)
        .map_err(|e| format!("raw floor: KVM_SET_DEVICE_ATTR ({what}): {e}"))
}

impl RawVm {
    /// Build a VM with `pieces` for `kind`'s loop, timed with the virtual
    /// counter as the probe is.
    pub fn new(kvm: &Kvm, pieces: Pieces, kind: FloorKind) -> Result<Self, String> {
        Self::with_clock(kvm, pieces, kind, Clock::Cntvct)
    }

    /// Build a VM with `pieces` for `kind`'s loop, timed with `clock` (the
    /// PMU's cycle counter needs the vGIC, for its overflow interrupt).
    pub fn with_clock(
        kvm: &Kvm,
        pieces: Pieces,
        kind: FloorKind,
        clock: Clock,
    ) -> Result<Self, String> {
        check(pieces, kind, clock)?;
        let vm = Arc::new(kvm.create_vm().map_err(err("KVM_CREATE_VM"))?);
        let size = if pieces.memslots {
            raw::TRAPLINE_MEM
        } else {
            BARE_MEM
        };
        // SAFETY: the RawVm keeps `mem` in a field dropped after the VM
        // fd's (field order), as `map_ram` asks.
        let mem = unsafe { raw::map_ram(&vm, abi::VIRT_RAM_BASE, size) }?;
        // As trapline: every vCPU, then the vGIC, then KVM_ARM_VCPU_INIT.
        let vcpu = vm.create_vcpu(0).map_err(err("KVM_CREATE_VCPU"))?;
        let gic = pieces
            .vgic
            .then(|| Gic::create_with(&vm, 1, pieces.its)) // its one vCPU
            .transpose()
            .map_err(|e| format!("raw floor: {e}"))?;
        init_vcpu(&vm, &vcpu, clock)?;
        let any = raw::wildcard(kvm);
        let measured = if kind == FloorKind::MmioKernelWildcard {
            Some(
                IoEvent::register(vm.clone(), Space::Mmio, abi::VIRT_PROBE_MMIO_WILDCARD, any)
                    .map_err(fp)?,
            )
        } else {
            None
        };
        let keep = register_pieces(&vm, pieces, kind, any)?;
        let entry = load(&mem, kind, clock)?;
        boot_regs(&vcpu, kind, entry)?;
        // KVM's counters where the kernel has binary statistics (5.14+).
        let stats = trapline_kvm::StatsFd::open_vcpu(&vcpu).ok();
        Ok(Self {
            _keep: keep,
            measured,
            stats,
            vcpu,
            _gic: gic,
            _vm: vm,
            _mem: mem,
            kind,
        })
    }

    /// Run the loop `iterations` times (at least once).
    pub fn measure(&mut self, iterations: u64) -> Result<FloorSample, String> {
        let n = iterations.max(1);
        // The PC is where the last run left it (the done store, which the
        // next KVM_RUN completes, then the branch back to the entry).
        set(&self.vcpu, regs::x(code::REG_I), 0, "the loop counter")?;
        set(&self.vcpu, regs::x(code::REG_N), n, "the iteration count")?;
        let before = self.stats.as_ref().and_then(|s| s.read().ok());
        let user_exits = raw::run_to_done(&mut self.vcpu, seen)?;
        let after = self.stats.as_ref().and_then(|s| s.read().ok());
        let t0 = get(&self.vcpu, regs::x(code::REG_T0))?;
        let t1 = get(&self.vcpu, regs::x(code::REG_T1))?;
        let value = if self.kind.reads() {
            get(&self.vcpu, regs::x(code::REG_VALUE))? & 0xffff_ffff
        } else {
            0
        };
        let kvm_exits = match (before, after) {
            (Some(b), Some(a)) => {
                exit_deltas(|name| Some(a.value(name)?.saturating_sub(b.value(name)?)))
            }
            _ => BTreeMap::new(),
        };
        Ok(FloorSample {
            iterations: n,
            cycles: t1.wrapping_sub(t0),
            user_exits,
            eventfd_count: self.measured.as_ref().map_or(0, |e| e.take_count()),
            value,
            kvm_exits,
        })
    }
}

/// The store to [`DONE_MMIO`] ends a run; the user page's stores are the
/// user-exit loop's own.
fn seen(exit: &VcpuExit) -> Seen {
    match exit {
        VcpuExit::MmioWrite(DONE_MMIO, _) => Seen::Done,
        VcpuExit::MmioWrite(a, _) if *a == abi::VIRT_PROBE_MMIO_USER => Seen::UserExit,
        _ => Seen::Unexpected,
    }
}

/// What a raw VM cannot have: the PMU's clock, the ITS, an irqfd or the
/// vGIC's read without the vGIC.
fn check(pieces: Pieces, kind: FloorKind, clock: Clock) -> Result<(), String> {
    if clock == Clock::Pmccntr && !pieces.vgic {
        return Err("raw floor: a vCPU with PMUv3 needs the vGIC".into());
    }
    if (pieces.its || pieces.irqfd) && !pieces.vgic {
        return Err("raw floor: the ITS and irqfds need the vGIC".into());
    }
    if kind == FloorKind::MmioVgicRead && !pieces.vgic {
        return Err("raw floor: mmio-vgic-read needs the vGIC".into());
    }
    Ok(())
}

/// KVM_ARM_VCPU_INIT with PSCI 0.2 (and PMUv3 for its cycle counter,
/// whose overflow PPI and INIT come after the vGIC's CTRL_INIT).
fn init_vcpu(vm: &VmFd, vcpu: &VcpuFd, clock: Clock) -> Result<(), String> {
    let mut init = kvm_vcpu_init::default();
    vm.get_preferred_target(&mut init)
        .map_err(err("KVM_ARM_PREFERRED_TARGET"))?;
    init.features[0] |= 1 << KVM_ARM_VCPU_PSCI_0_2;
    if clock == Clock::Pmccntr {
        init.features[0] |= 1 << kvm_bindings::KVM_ARM_VCPU_PMU_V3;
    }
    vcpu.vcpu_init(&init).map_err(err("KVM_ARM_VCPU_INIT"))?;
    if clock == Clock::Pmccntr {
        let irq: u32 = PMU_IRQ_INTID;
        pmu_attr(
            vcpu,
            kvm_bindings::KVM_ARM_VCPU_PMU_V3_IRQ,
            &irq as *const u32 as u64,
            "PMUv3 IRQ",
        )?;
        pmu_attr(
            vcpu,
            kvm_bindings::KVM_ARM_VCPU_PMU_V3_INIT,
            0,
            "PMUv3 INIT",
        )?;
    }
    Ok(())
}

/// The registrations `pieces` asks for besides the measured one, in
/// trapline's order: the lab's other ioeventfds, the coalesced zone, the
/// read-only memslot, the irqfd.
fn register_pieces(
    vm: &Arc<VmFd>,
    pieces: Pieces,
    kind: FloorKind,
    any: Datamatch,
) -> Result<Kept, String> {
    let mut keep = Kept::default();
    if pieces.lab_ioeventfds {
        keep.ioevents(vm, lab_ioeventfds(kind, any))?;
    }
    let page = abi::VIRT_TRAPLINE_PAGE;
    if pieces.coalesced {
        keep.zone(vm, Space::Mmio, abi::VIRT_PROBE_MMIO_COALESCED, page as u32)?;
    }
    if pieces.memslots {
        keep.read_only(vm, 1, abi::VIRT_PROBE_RO_MEMSLOT, page as usize)?;
    }
    if pieces.irqfd {
        keep.irqfd(vm, abi::VIRT_IRQFD_SPI)?;
    }
    Ok(keep)
}

/// The guest image: the page table, the kind's code at the probe's
/// address and the RAM word; returns the entry point.
fn load(mem: &GuestMemoryMmap, kind: FloorKind, clock: Clock) -> Result<u64, String> {
    page_table(mem)?;
    let (words, at, entry) = code::program(kind, clock);
    mem.write_slice(&code::bytes(&words), GuestAddress(at))
        .map_err(|e| format!("raw floor: writing the code: {e}"))?;
    mem.write_obj(abi::PROBE_READ_VALUE, GuestAddress(code::RAM_WORD))
        .map_err(|e| format!("raw floor: writing the RAM word: {e}"))?;
    Ok(entry)
}

/// The probe's identity map, at [`mmu::L1_TABLE`].
fn page_table(mem: &GuestMemoryMmap) -> Result<(), String> {
    for (i, e) in mmu::l1_entries().into_iter().enumerate() {
        mem.write_obj(e, GuestAddress(mmu::L1_TABLE + 8 * i as u64))
            .map_err(|e| format!("raw floor: page table: {e}"))?;
    }
    Ok(())
}

/// A raw VM with nothing but its RAM ([`BARE_MEM`] from `VIRT_RAM_BASE`,
/// the identity map written) and one vCPU at EL1h with the MMU and caches
/// on, interrupts masked, no vGIC: the anatomy VM, whose code, PC and
/// registers are its caller's to set.
pub(crate) struct BareVm {
    // Drop order: the vCPU before the VM fd, the VM before its memory.
    pub(crate) vcpu: VcpuFd,
    pub(crate) vm: VmFd,
    pub(crate) mem: GuestMemoryMmap,
}

/// Build a [`BareVm`].
pub(crate) fn bare_vm(kvm: &Kvm) -> Result<BareVm, String> {
    let vm = kvm.create_vm().map_err(err("KVM_CREATE_VM"))?;
    // SAFETY: the BareVm keeps `mem` in a field dropped after the VM fd's
    // (field order), as `map_ram` asks.
    let mem = unsafe { raw::map_ram(&vm, abi::VIRT_RAM_BASE, BARE_MEM) }?;
    let vcpu = vm.create_vcpu(0).map_err(err("KVM_CREATE_VCPU"))?;
    init_vcpu(&vm, &vcpu, Clock::Cntvct)?;
    page_table(&mem)?;
    mmu_on(&vcpu)?;
    set(&vcpu, regs::PSTATE, regs::PSTATE_EL1H_DAIF_MASKED, "PSTATE")?;
    Ok(BareVm { vcpu, vm, mem })
}

/// The vCPU as the probe's loop starts: the MMU and caches on, EL1h with
/// interrupts masked, at `entry`, the loop's registers and the done
/// address set.
fn boot_regs(vcpu: &VcpuFd, kind: FloorKind, entry: u64) -> Result<(), String> {
    mmu_on(vcpu)?;
    set(vcpu, regs::PSTATE, regs::PSTATE_EL1H_DAIF_MASKED, "PSTATE")?;
    set(vcpu, regs::PC, entry, "PC")?;
    for &(r, v) in kind.regs() {
        set(vcpu, regs::x(r), v, "a loop register")?;
    }
    set(vcpu, regs::x(code::REG_DONE), DONE_MMIO, "the done address")
}

/// KVM's exit counters that moved, by name, the done store's exit taken
/// off `exits` (as the probe's rows take off their RESULT ucall's).
fn exit_deltas(delta: impl Fn(&str) -> Option<u64>) -> BTreeMap<String, u64> {
    KERNEL_EXIT_COUNTERS
        .iter()
        .filter_map(|name| {
            let d = delta(name)?;
            let d = if *name == "exits" {
                d.saturating_sub(1)
            } else {
                d
            };
            (d > 0).then(|| (name.to_string(), d))
        })
        .collect()
}

/// KVM_SET_ONE_REG of a 64-bit register, `what` naming it in the error.
pub(crate) fn set(vcpu: &VcpuFd, id: u64, value: u64, what: &str) -> Result<(), String> {
    vcpu.set_one_reg(id, &value.to_le_bytes())
        .map(|_| ())
        .map_err(|e| format!("raw floor: KVM_SET_ONE_REG ({what}): {e}"))
}

fn get(vcpu: &VcpuFd, id: u64) -> Result<u64, String> {
    let mut b = [0u8; 8];
    vcpu.get_one_reg(id, &mut b)
        .map_err(|e| format!("raw floor: KVM_GET_ONE_REG: {e}"))?;
    Ok(u64::from_le_bytes(b))
}

/// trapline's other lab MMIO ioeventfds (those the measured kind does not use).
fn lab_ioeventfds(kind: FloorKind, any: Datamatch) -> Vec<(Space, u64, Datamatch)> {
    let dm = Datamatch::U32(abi::PROBE_DATAMATCH_VALUE);
    let mut v = vec![
        (Space::Mmio, abi::VIRT_PROBE_MMIO_DATAMATCH, dm),
        (Space::Mmio, abi::VIRT_DOORBELL_MMIO_KERNEL, any),
    ];
    if kind != FloorKind::MmioKernelWildcard {
        v.push((Space::Mmio, abi::VIRT_PROBE_MMIO_WILDCARD, any));
    }
    v
}

/// The MMU and caches on, as the probe's start-up leaves them.
fn mmu_on(vcpu: &VcpuFd) -> Result<(), String> {
    let sctlr_id = regs::sysreg(3, 0, 1, 0, 0);
    set(vcpu, regs::sysreg(3, 0, 10, 2, 0), mmu::MAIR, "MAIR_EL1")?;
    set(vcpu, regs::sysreg(3, 0, 2, 0, 2), mmu::TCR, "TCR_EL1")?;
    set(
        vcpu,
        regs::sysreg(3, 0, 2, 0, 0),
        mmu::L1_TABLE,
        "TTBR0_EL1",
    )?;
    let sctlr = get(vcpu, sctlr_id)?;
    set(vcpu, sctlr_id, mmu::sctlr_on(sctlr), "SCTLR_EL1")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the PMU's cycle counter sees of an exit, beside the virtual
    /// counter, on the same loops (a diagnostic: `--ignored --nocapture`).
    /// KVM's vPMU counts the guest's cycle counter with a host perf event
    /// that excludes EL2 and the host, so a trap's round trip should all
    /// but vanish from it.
    #[test]
    #[ignore]
    fn pmccntr_against_cntvct_per_iteration() {
        let Ok(kvm) = Kvm::new() else {
            eprintln!("SKIP: no /dev/kvm");
            return;
        };
        if let Some(why) = pmu_v3_missing(&kvm) {
            eprintln!("SKIP: {why}");
            return;
        }
        let pieces = Pieces {
            vgic: true,
            ..Pieces::BARE
        };
        let n = 256;
        for kind in [
            FloorKind::Noop,
            FloorKind::MmioVgicRead,
            FloorKind::MmioKernelWildcard,
        ] {
            for clock in [Clock::Cntvct, Clock::Pmccntr] {
                let mut vm = RawVm::with_clock(&kvm, pieces, kind, clock).expect("VM");
                vm.measure(n).expect("warm-up");
                let s = vm.measure(n).expect("run");
                println!(
                    "{} {clock:?}: {:.1} per iteration ({} iterations)",
                    kind.name(),
                    s.cycles as f64 / n as f64,
                    n
                );
            }
        }
    }
}
