//! A raw /dev/kvm VM for the floor, with each piece of trapline's own
//! configuration optional: the ladder adds them one at a time.
//!
//! Nothing here is trapline's VMM code path: the VM is made with plain
//! kvm-ioctls calls and run by a bare KVM_RUN loop. Where a piece must be
//! the same as trapline's (an ioeventfd's length, a coalesced zone, a
//! read-only memslot) it is registered through `trapline-fastpath`, the
//! same RAII wrappers trapline's machine uses, so the kernel sees the very
//! same registration.

use std::sync::Arc;

use kvm_bindings::{
    kvm_enable_cap, kvm_pit_config, kvm_userspace_memory_region, KVM_CAP_SPLIT_IRQCHIP,
    KVM_MAX_CPUID_ENTRIES, KVM_PIT_SPEAKER_DUMMY,
};
use kvm_ioctls::{Kvm, VcpuExit, VcpuFd, VmFd};
use trapline_abi as abi;
use trapline_fastpath::{CoalescedZone, Datamatch, IoEvent, IrqFd, ReadOnlyRegion, Space};
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend, GuestMemoryMmap};

use super::code::{self, FloorKind, DONE_PORT};

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

/// Which interrupt controller the VM has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Irqchip {
    /// None: KVM_RUN's bare minimum.
    None,
    /// KVM_CREATE_IRQCHIP: LAPICs, IOAPIC and PICs in the kernel.
    Kernel,
    /// KVM_CAP_SPLIT_IRQCHIP: LAPICs in the kernel, IOAPIC and PIC in user space.
    Split,
}

/// The pieces of trapline's VM configuration a raw VM may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pieces {
    /// trapline's KVM_SET_IDENTITY_MAP_ADDR and KVM_SET_TSS_ADDR (else the
    /// bare floor's TSS only).
    pub idmap_tss: bool,
    /// KVM_SET_CPUID2 with what KVM supports, APIC ID patched, as trapline does.
    pub cpuid: bool,
    /// The interrupt controller.
    pub irqchip: Irqchip,
    /// KVM_CREATE_PIT2 (needs the kernel irqchip).
    pub pit: bool,
    /// The other ioeventfds trapline's lab machine registers (datamatch
    /// port and page, MMIO wildcard or PIO wildcard, three doorbells).
    pub lab_ioeventfds: bool,
    /// This many more PIO and as many MMIO ioeventfds, on unused addresses.
    pub extra_ioeventfds: u32,
    /// trapline's two coalesced zones (an MMIO page and a port).
    pub coalesced: bool,
    /// trapline's memslots: 128 MiB of RAM and the read-only probe page.
    pub memslots: bool,
    /// An irqfd on trapline's lab GSI (needs the kernel irqchip).
    pub irqfd: bool,
}

impl Pieces {
    /// The bare floor: one small memslot, a TSS, nothing else.
    pub const BARE: Pieces = Pieces {
        idmap_tss: false,
        cpuid: false,
        irqchip: Irqchip::None,
        pit: false,
        lab_ioeventfds: false,
        extra_ioeventfds: 0,
        coalesced: false,
        memslots: false,
        irqfd: false,
    };
}

/// One measurement: a loop of `iterations`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloorSample {
    /// Iterations timed.
    pub iterations: u64,
    /// TSC cycles for all of them.
    pub cycles: u64,
    /// Exits to user space during the loop (the final OUT not counted).
    pub user_exits: u64,
    /// Times the measured ioeventfd fired.
    pub eventfd_count: u64,
    /// The last value the loop read (RAM reads), else 0.
    pub value: u64,
}

/// A raw VM set up to run one kind's loop, any number of times.
pub struct RawVm {
    // Drop order: registrations and the vCPU before the VM fd, the VM
    // before its memory.
    _keep: Vec<Keep>,
    measured: Option<IoEvent>,
    vcpu: VcpuFd,
    _vm: Arc<VmFd>,
    mem: GuestMemoryMmap,
    kind: FloorKind,
    entry: u64,
}

/// Registrations kept alive for the VM's life.
enum Keep {
    IoEvent(#[allow(dead_code)] IoEvent),
    Zone(#[allow(dead_code)] CoalescedZone),
    Ro(#[allow(dead_code)] ReadOnlyRegion),
    IrqFd(#[allow(dead_code)] IrqFd),
}

fn err(what: &'static str) -> impl Fn(kvm_ioctls::Error) -> String {
    move |e| format!("raw floor: {what}: {e}")
}

fn fp(e: trapline_fastpath::FastpathError) -> String {
    format!("raw floor: {e}")
}

impl RawVm {
    /// Build a VM with `pieces` for `kind`'s loop.
    pub fn new(kvm: &Kvm, pieces: Pieces, kind: FloorKind) -> Result<Self, String> {
        if (pieces.pit || pieces.irqfd) && pieces.irqchip != Irqchip::Kernel {
            return Err("raw floor: the PIT and irqfds need the kernel irqchip".into());
        }
        let vm = Arc::new(kvm.create_vm().map_err(err("KVM_CREATE_VM"))?);
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
        let size = if pieces.memslots { 128 << 20 } else { BARE_MEM };
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), size)])
            .map_err(|e| format!("raw floor: guest memory: {e}"))?;
        let region = mem.iter().next().ok_or("raw floor: no memory region")?;
        let desc = kvm_userspace_memory_region {
            slot: 0,
            flags: 0,
            guest_phys_addr: 0,
            memory_size: size as u64,
            userspace_addr: region.as_ptr() as u64,
        };
        // SAFETY: `mem` is owned by the RawVm and dropped after the VM fd
        // (field order), so the host range stays mapped while KVM may use it.
        unsafe { vm.set_user_memory_region(desc) }.map_err(err("KVM_SET_USER_MEMORY_REGION"))?;
        let mut keep = Vec::new();
        let measured = register_measured(&vm, kind, any_length(kvm))?;
        if pieces.lab_ioeventfds {
            for (space, addr, m) in lab_ioeventfds(kind, any_length(kvm)) {
                keep.push(Keep::IoEvent(
                    IoEvent::register(vm.clone(), space, addr, m).map_err(fp)?,
                ));
            }
        }
        for i in 0..u64::from(pieces.extra_ioeventfds) {
            // Ports 0x2000.. and pages above the probe window: nothing
            // else is there.
            keep.push(Keep::IoEvent(
                IoEvent::register(
                    vm.clone(),
                    Space::Pio,
                    0x2000 + 4 * i,
                    Datamatch::AnyOfLen(4),
                )
                .map_err(fp)?,
            ));
            keep.push(Keep::IoEvent(
                IoEvent::register(
                    vm.clone(),
                    Space::Mmio,
                    abi::PROBE_MMIO_BASE + abi::PROBE_MMIO_LEN + 0x1000 * i,
                    Datamatch::U32(abi::PROBE_DATAMATCH_VALUE),
                )
                .map_err(fp)?,
            ));
        }
        if pieces.coalesced {
            keep.push(Keep::Zone(
                CoalescedZone::register(
                    vm.clone(),
                    Space::Mmio,
                    abi::PROBE_MMIO_COALESCED,
                    abi::PROBE_PAGE_SIZE as u32,
                )
                .map_err(fp)?,
            ));
            keep.push(Keep::Zone(
                CoalescedZone::register(
                    vm.clone(),
                    Space::Pio,
                    abi::PROBE_PIO_COALESCED_PORT.into(),
                    4,
                )
                .map_err(fp)?,
            ));
        }
        if pieces.irqfd {
            keep.push(Keep::IrqFd(
                IrqFd::register(vm.clone(), abi::IRQFD_GSI).map_err(fp)?,
            ));
        }
        if pieces.memslots {
            let ro = ReadOnlyRegion::map(
                vm.clone(),
                1,
                abi::PROBE_RO_MEMSLOT,
                abi::PROBE_PAGE_SIZE as usize,
            )
            .map_err(fp)?;
            keep.push(Keep::Ro(ro));
        }
        let vcpu = vm.create_vcpu(0).map_err(err("KVM_CREATE_VCPU"))?;
        if pieces.cpuid {
            let mut cpuid = kvm
                .get_supported_cpuid(KVM_MAX_CPUID_ENTRIES)
                .map_err(err("KVM_GET_SUPPORTED_CPUID"))?;
            trapline_kvm::cpuid::patch_for_vcpu(cpuid.as_mut_slice(), 0);
            vcpu.set_cpuid2(&cpuid).map_err(err("KVM_SET_CPUID2"))?;
        }
        page_tables(&mem)?;
        let (code, at, entry) = code::program(kind);
        mem.write_slice(&code, GuestAddress(at))
            .map_err(|e| format!("raw floor: writing the code: {e}"))?;
        mem.write_obj(abi::PROBE_READ_VALUE, GuestAddress(RAM_WORD))
            .map_err(|e| format!("raw floor: writing the RAM word: {e}"))?;
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
        let mut user_exits = 0u64;
        loop {
            match self.vcpu.run() {
                Ok(VcpuExit::IoOut(DONE_PORT, _)) => break,
                Ok(VcpuExit::IoOut(p, _)) if p == abi::PROBE_PIO_USER_PORT => user_exits += 1,
                Ok(other) => return Err(format!("raw floor: unexpected exit {other:?}")),
                Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => {}
                Err(e) => return Err(format!("raw floor: KVM_RUN: {e}")),
            }
        }
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
        })
    }

    /// Guest memory (tests).
    pub fn memory(&self) -> &GuestMemoryMmap {
        &self.mem
    }
}

/// KVM_CAP_IOEVENTFD_ANY_LENGTH (kvm-bindings has no name for it).
const KVM_CAP_IOEVENTFD_ANY_LENGTH: libc::c_ulong = 122;

/// Whether KVM takes length-0 ("any length") ioeventfds, as trapline asks.
fn any_length(kvm: &Kvm) -> bool {
    kvm.check_extension_raw(KVM_CAP_IOEVENTFD_ANY_LENGTH) > 0
}

/// The ioeventfd the kind measures, registered as trapline's lab does.
fn register_measured(
    vm: &Arc<VmFd>,
    kind: FloorKind,
    any_length: bool,
) -> Result<Option<IoEvent>, String> {
    let (space, addr, m) = match kind {
        FloorKind::PioKernelWildcard => (
            Space::Pio,
            abi::PROBE_PIO_WILDCARD_PORT.into(),
            Datamatch::AnyOfLen(4),
        ),
        FloorKind::MmioKernelWildcard => (
            Space::Mmio,
            abi::PROBE_MMIO_WILDCARD,
            // As trapline: any length where KVM has it, else a datamatch
            // on the value the probe writes.
            if any_length {
                Datamatch::Any
            } else {
                Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
            },
        ),
        _ => return Ok(None),
    };
    IoEvent::register(vm.clone(), space, addr, m)
        .map(Some)
        .map_err(fp)
}

/// trapline's other lab ioeventfds (those the measured kind does not use).
fn lab_ioeventfds(kind: FloorKind, any_length: bool) -> Vec<(Space, u64, Datamatch)> {
    let dm = Datamatch::U32(abi::PROBE_DATAMATCH_VALUE);
    let any = if any_length {
        Datamatch::Any
    } else {
        Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// KVM's own counters per iteration of each loop on the bare floor
    /// (a diagnostic: `cargo test -p trapline-lab --lib kvm_counters --
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
