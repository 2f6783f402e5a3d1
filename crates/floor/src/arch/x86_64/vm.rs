//! A raw x86 /dev/kvm VM for the floor, with each piece of trapline's own
//! configuration optional: the ladder adds them one at a time. What every
//! architecture's raw VM does the same way (RAM, kept registrations, the
//! bare KVM_RUN loop) is the crate's `raw`.

use std::sync::Arc;

use kvm_bindings::{
    kvm_enable_cap, kvm_pit_config, KVM_CAP_SPLIT_IRQCHIP, KVM_MAX_CPUID_ENTRIES,
    KVM_PIT_SPEAKER_DUMMY,
};
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd, VmFd};
use trapline_abi as abi;
use trapline_fastpath::{Datamatch, IoEvent, Space};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use super::code::{self, FloorKind, DONE_PORT};
use super::pieces::{Irqchip, Pieces};
use crate::raw::{self, err, fp, FloorSample, Kept, Seen};

/// The bare floor's TSS (Intel needs one before the first entry on hosts
/// without unrestricted guest; the address is the first floor's).
const BARE_TSS_ADDR: usize = 0xfffb_d000;
/// The word `ram-read` loads: where the probe's `ram_word` is (its .data).
const RAM_WORD: u64 = 0x40_b028;
const PML4: u64 = 0x1000;
const PDPT: u64 = 0x2000;
/// Four page directories, 0x3000–0x6fff: the low 4 GiB in 2 MiB pages,
/// as the probe's own page tables map it.
const PD: u64 = 0x3000;
/// The bare floor's RAM: page tables, and the code and RAM word where
/// the probe has them (above 4 MiB).
const BARE_MEM: usize = 8 << 20;

/// A raw VM set up to run one kind's loop, any number of times.
pub struct RawVm {
    // Drop order: registrations and the vCPU before the VM fd, the VM
    // before its memory.
    _keep: Kept,
    measured: Option<IoEvent>,
    vcpu: VcpuFd,
    _vm: Arc<VmFd>,
    mem: GuestMemoryMmap,
    kind: FloorKind,
    entry: u64,
}

impl RawVm {
    /// Build a VM with `pieces` for `kind`'s loop.
    pub fn new(kvm: &Kvm, pieces: Pieces, kind: FloorKind) -> Result<Self, String> {
        if (pieces.pit || pieces.irqfd) && pieces.irqchip != Irqchip::Kernel {
            return Err("raw floor: the PIT and irqfds need the kernel irqchip".into());
        }
        let vm = Arc::new(kvm.create_vm().map_err(err("KVM_CREATE_VM"))?);
        platform(&vm, pieces)?;
        let size = if pieces.memslots {
            raw::TRAPLINE_MEM
        } else {
            BARE_MEM
        };
        // SAFETY: the RawVm keeps `mem` in a field dropped after the VM
        // fd's (field order), as `map_ram` asks.
        let mem = unsafe { raw::map_ram(&vm, 0, size) }?;
        let any = raw::wildcard(kvm);
        let measured = register_measured(&vm, kind, any)?;
        let keep = register_pieces(&vm, pieces, kind, any)?;
        let vcpu = vm.create_vcpu(0).map_err(err("KVM_CREATE_VCPU"))?;
        if pieces.cpuid {
            set_cpuid(kvm, &vcpu)?;
        }
        let entry = load(&mem, kind)?;
        let mut sregs = vcpu.get_sregs().map_err(err("KVM_GET_SREGS"))?;
        long_mode(&mut sregs);
        vcpu.set_sregs(&sregs).map_err(err("KVM_SET_SREGS"))?;
        Ok(Self {
            _keep: keep,
            measured,
            vcpu,
            _vm: vm,
            mem,
            kind,
            entry,
        })
    }

    /// Run the loop `iterations` times (at least once).
    pub fn measure(&mut self, iterations: u64) -> Result<FloorSample, String> {
        let n = iterations.max(1);
        let l = self.kind.regs(RAM_WORD);
        let regs = kvm_bindings::kvm_regs {
            rip: self.entry,
            rflags: 2,
            // Every loop the floor copies compares against RSI (the probe
            // pins the count there; see code.rs).
            rsi: n,
            rcx: l.rcx,
            r12: l.rax,
            r13: l.rdx,
            rsp: 0x7ff0,
            ..Default::default()
        };
        self.vcpu.set_regs(&regs).map_err(err("KVM_SET_REGS"))?;
        let user_exits = raw::run_to_done(&mut self.vcpu, seen)?;
        let r = self.vcpu.get_regs().map_err(err("KVM_GET_REGS"))?;
        let t0 = (r.r9 << 32) | (r.r8 & 0xffff_ffff);
        let t1 = (r.r11 << 32) | (r.r10 & 0xffff_ffff);
        let value = if self.kind == FloorKind::RamRead {
            r.rbx & 0xffff_ffff
        } else {
            0
        };
        Ok(FloorSample {
            iterations: n,
            cycles: t1.wrapping_sub(t0),
            user_exits,
            eventfd_count: self.measured.as_ref().map_or(0, |e| e.take_count()),
            value,
            kvm_exits: Default::default(),
        })
    }

    /// Guest memory (tests).
    pub fn memory(&self) -> &GuestMemoryMmap {
        &self.mem
    }
}

/// The OUT to [`DONE_PORT`] ends a run; the user port's OUTs are the
/// user-exit loop's own.
fn seen(exit: &VcpuExit) -> Seen {
    match exit {
        VcpuExit::IoOut(DONE_PORT, _) => Seen::Done,
        VcpuExit::IoOut(p, _) if *p == abi::PROBE_PIO_USER_PORT => Seen::UserExit,
        _ => Seen::Unexpected,
    }
}

/// The VM-wide pieces, before any memory: the TSS (and trapline's
/// identity map), the interrupt controller, the PIT.
fn platform(vm: &VmFd, pieces: Pieces) -> Result<(), String> {
    if pieces.idmap_tss {
        vm.set_identity_map_address(trapline_kvm::IDENTITY_MAP_ADDR)
            .map_err(err("KVM_SET_IDENTITY_MAP_ADDR"))?;
        vm.set_tss_address(trapline_kvm::TSS_ADDR as usize)
            .map_err(err("KVM_SET_TSS_ADDR"))?;
    } else {
        vm.set_tss_address(BARE_TSS_ADDR)
            .map_err(err("KVM_SET_TSS_ADDR"))?;
    }
    match pieces.irqchip {
        Irqchip::None => {}
        Irqchip::Kernel => vm.create_irq_chip().map_err(err("KVM_CREATE_IRQCHIP"))?,
        Irqchip::Split => {
            let cap = kvm_enable_cap {
                cap: KVM_CAP_SPLIT_IRQCHIP,
                args: [24, 0, 0, 0],
                ..Default::default()
            };
            vm.enable_cap(&cap)
                .map_err(err("KVM_ENABLE_CAP(KVM_CAP_SPLIT_IRQCHIP)"))?;
        }
    }
    if pieces.pit {
        let pit = kvm_pit_config {
            flags: KVM_PIT_SPEAKER_DUMMY,
            ..Default::default()
        };
        vm.create_pit2(pit).map_err(err("KVM_CREATE_PIT2"))?;
    }
    Ok(())
}

/// The registrations `pieces` asks for besides the measured one, in
/// trapline's order: the lab's other ioeventfds, the extra ones, the
/// coalesced zones, the irqfd, the read-only memslot.
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
    for i in 0..u64::from(pieces.extra_ioeventfds) {
        // Ports 0x2000.. and pages above the probe window: nothing
        // else is there.
        keep.ioevent(vm, Space::Pio, 0x2000 + 4 * i, Datamatch::AnyOfLen(4))?;
        keep.ioevent(
            vm,
            Space::Mmio,
            abi::PROBE_MMIO_BASE + abi::PROBE_MMIO_LEN + 0x1000 * i,
            Datamatch::U32(abi::PROBE_DATAMATCH_VALUE),
        )?;
    }
    if pieces.coalesced {
        let page = abi::PROBE_PAGE_SIZE as u32;
        keep.zone(vm, Space::Mmio, abi::PROBE_MMIO_COALESCED, page)?;
        keep.zone(vm, Space::Pio, abi::PROBE_PIO_COALESCED_PORT.into(), 4)?;
    }
    if pieces.irqfd {
        keep.irqfd(vm, abi::IRQFD_GSI)?;
    }
    if pieces.memslots {
        let page = abi::PROBE_PAGE_SIZE as usize;
        keep.read_only(vm, 1, abi::PROBE_RO_MEMSLOT, page)?;
    }
    Ok(keep)
}

/// KVM_SET_CPUID2 with what KVM supports, the APIC ID patched, as trapline does.
fn set_cpuid(kvm: &Kvm, vcpu: &VcpuFd) -> Result<(), String> {
    let mut cpuid = kvm
        .get_supported_cpuid(KVM_MAX_CPUID_ENTRIES)
        .map_err(err("KVM_GET_SUPPORTED_CPUID"))?;
    trapline_kvm::cpuid::patch_for_vcpu(cpuid.as_mut_slice(), 0);
    vcpu.set_cpuid2(&cpuid).map_err(err("KVM_SET_CPUID2"))
}

/// The guest image: page tables, the kind's code at the probe's address
/// and the RAM word; returns the entry point.
fn load(mem: &GuestMemoryMmap, kind: FloorKind) -> Result<u64, String> {
    page_tables(mem)?;
    let (code, at, entry) = code::program(kind);
    mem.write_slice(&code, GuestAddress(at))
        .map_err(|e| format!("raw floor: writing the code: {e}"))?;
    mem.write_obj(abi::PROBE_READ_VALUE, GuestAddress(RAM_WORD))
        .map_err(|e| format!("raw floor: writing the RAM word: {e}"))?;
    Ok(entry)
}

/// The ioeventfd the kind measures, registered as trapline's lab does.
fn register_measured(
    vm: &Arc<VmFd>,
    kind: FloorKind,
    any: Datamatch,
) -> Result<Option<IoEvent>, String> {
    let (space, addr, m) = match kind {
        FloorKind::PioKernelWildcard => (
            Space::Pio,
            abi::PROBE_PIO_WILDCARD_PORT.into(),
            Datamatch::AnyOfLen(4),
        ),
        // As trapline: any length where KVM has it, else a datamatch on
        // the value the probe writes.
        FloorKind::MmioKernelWildcard => (Space::Mmio, abi::PROBE_MMIO_WILDCARD, any),
        _ => return Ok(None),
    };
    IoEvent::register(vm.clone(), space, addr, m)
        .map(Some)
        .map_err(fp)
}

/// trapline's other lab ioeventfds (those the measured kind does not use).
fn lab_ioeventfds(kind: FloorKind, any: Datamatch) -> Vec<(Space, u64, Datamatch)> {
    let dm = Datamatch::U32(abi::PROBE_DATAMATCH_VALUE);
    let mut v = vec![
        (Space::Pio, abi::PROBE_PIO_DATAMATCH_PORT.into(), dm),
        (Space::Mmio, abi::PROBE_MMIO_DATAMATCH, dm),
        (Space::Mmio, abi::DOORBELL_MMIO_KERNEL, any),
        (
            Space::Pio,
            abi::DOORBELL_PIO_PORT.into(),
            Datamatch::AnyOfLen(4),
        ),
        (
            Space::Pio,
            abi::PV_DOORBELL_PORT.into(),
            Datamatch::U32(abi::DOORBELL_PV_IDENTITY),
        ),
    ];
    if kind != FloorKind::PioKernelWildcard {
        v.push((
            Space::Pio,
            abi::PROBE_PIO_WILDCARD_PORT.into(),
            Datamatch::AnyOfLen(4),
        ));
    }
    if kind != FloorKind::MmioKernelWildcard {
        v.push((Space::Mmio, abi::PROBE_MMIO_WILDCARD, any));
    }
    v
}

/// Identity-map the low 4 GiB with 2 MiB pages.
fn page_tables(mem: &GuestMemoryMmap) -> Result<(), String> {
    let w = |v: u64, at: u64| {
        mem.write_obj(v, GuestAddress(at))
            .map_err(|e| format!("raw floor: page tables: {e}"))
    };
    w(PDPT | 0x23, PML4)?; // present, writable, accessed
    for i in 0..4u64 {
        w((PD + i * 0x1000) | 0x23, PDPT + i * 8)?;
        for j in 0..512u64 {
            let gpa = (i << 30) | (j << 21);
            w(gpa | 0xe3, PD + i * 0x1000 + j * 8)?; // present, writable, accessed, dirty, PS
        }
    }
    Ok(())
}

/// 64-bit long mode, paging on, flat segments (no GDT needed: nothing
/// reloads a selector).
fn long_mode(s: &mut kvm_bindings::kvm_sregs) {
    let code = kvm_bindings::kvm_segment {
        base: 0,
        limit: 0xffff_ffff,
        selector: 0x8,
        type_: 0xb,
        present: 1,
        dpl: 0,
        db: 0,
        s: 1,
        l: 1,
        g: 1,
        ..Default::default()
    };
    let data = kvm_bindings::kvm_segment {
        selector: 0x10,
        type_: 0x3,
        l: 0,
        db: 1,
        ..code
    };
    s.cs = code;
    s.ds = data;
    s.es = data;
    s.fs = data;
    s.gs = data;
    s.ss = data;
    s.cr3 = PML4;
    s.cr4 = 1 << 5; // PAE
    s.cr0 = (1 << 0) | (1 << 4) | (1 << 5) | (1 << 31); // PE, ET, NE, PG
    s.efer = (1 << 8) | (1 << 10); // LME, LMA
}

/// A bare raw VM (no irqchip, the bare floor's TSS, 8 MiB, identity page
/// tables, long mode) with no code yet: the anatomy VM's start.
pub(crate) struct BareVm {
    // Drop order: the vCPU before the VM fd, the VM before its memory.
    pub(crate) vcpu: VcpuFd,
    _vm: VmFd,
    pub(crate) mem: GuestMemoryMmap,
}

/// Build a [`BareVm`].
pub(crate) fn bare_vm(kvm: &Kvm) -> Result<BareVm, String> {
    let vm = kvm.create_vm().map_err(err("KVM_CREATE_VM"))?;
    vm.set_tss_address(BARE_TSS_ADDR)
        .map_err(err("KVM_SET_TSS_ADDR"))?;
    // SAFETY: the BareVm keeps `mem` in a field dropped after the VM fd's
    // (field order), as `map_ram` asks.
    let mem = unsafe { raw::map_ram(&vm, 0, BARE_MEM) }?;
    page_tables(&mem)?;
    let vcpu = vm.create_vcpu(0).map_err(err("KVM_CREATE_VCPU"))?;
    let mut sregs = vcpu.get_sregs().map_err(err("KVM_GET_SREGS"))?;
    long_mode(&mut sregs);
    vcpu.set_sregs(&sregs).map_err(err("KVM_SET_SREGS"))?;
    Ok(BareVm { vcpu, _vm: vm, mem })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// KVM's own counters per iteration of each loop on the bare floor
    /// (a diagnostic: `cargo test -p trapline-floor --lib kvm_counters --
    /// --ignored --nocapture`).
    #[test]
    #[ignore]
    fn kvm_counters_per_iteration() {
        let kvm = Kvm::new().expect("/dev/kvm");
        for kind in FloorKind::ALL {
            let mut vm = RawVm::new(&kvm, Pieces::BARE, kind).expect("VM");
            vm.measure(1000).expect("warm-up");
            let stats = trapline_kvm::StatsFd::open_vcpu(&vm.vcpu).expect("stats fd");
            let a = stats.read().unwrap();
            let s = vm.measure(10_000).expect("run");
            let b = stats.read().unwrap();
            let d: Vec<String> = b
                .moved_since(&a)
                .iter()
                .filter_map(|d| match d.value {
                    trapline_kvm::stats_fd::DeltaValue::Count(n) => {
                        Some(format!("{}={:.2}", d.desc.name, n as f64 / 10_000.0))
                    }
                    _ => None,
                })
                .collect();
            println!(
                "{}: {} cyc/iter; {}",
                kind.name(),
                s.cycles / 10_000,
                d.join(" ")
            );
        }
    }
}
