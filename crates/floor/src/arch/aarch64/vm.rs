//! A raw arm64 /dev/kvm VM for the floor, with each piece of trapline's
//! `virt` machine optional: the ladder adds them one at a time.
//!
//! Nothing here is trapline's VMM code path: the VM is made with plain
//! kvm-ioctls calls and run by a bare KVM_RUN loop. Where a piece must be
//! the same as trapline's (an ioeventfd, the coalesced zone, the read-only
//! memslot, the irqfd) it is registered through `trapline-fastpath`, the
//! same RAII wrappers trapline's machine uses. The vCPU starts at EL1h
//! with the MMU and caches on (an identity map the host writes, with the
//! probe's attributes: Device below 1 GiB, Normal write-back above), as
//! the probe runs, so a RAM read is a cached read on both.

use std::collections::BTreeMap;
use std::sync::Arc;

use kvm_bindings::{
    kvm_create_device, kvm_device_attr, kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_ITS,
    kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_V3, kvm_userspace_memory_region, kvm_vcpu_init,
    KVM_ARM_VCPU_PSCI_0_2, KVM_DEV_ARM_VGIC_CTRL_INIT, KVM_DEV_ARM_VGIC_GRP_ADDR,
    KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, KVM_VGIC_ITS_ADDR_TYPE,
    KVM_VGIC_V3_ADDR_TYPE_DIST, KVM_VGIC_V3_ADDR_TYPE_REDIST,
};
use kvm_ioctls::{DeviceFd, Kvm, VcpuExit, VcpuFd, VmFd};
use trapline_abi as abi;
use trapline_devices::ucall::KERNEL_EXIT_COUNTERS;
use trapline_fastpath::{CoalescedZone, Datamatch, IoEvent, IrqFd, ReadOnlyRegion, Space};
use trapline_kvm::regs;
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend, GuestMemoryMmap};

use super::code::{self, Clock, FloorKind, DONE_MMIO};
use super::pieces::Pieces;

/// The bare floor's RAM from `VIRT_RAM_BASE`: the page table, and the
/// code and RAM word where the probe has them.
const BARE_MEM: usize = 8 << 20;
/// trapline's lab machines' RAM (`--mem` 128).
const TRAPLINE_MEM: usize = 128 << 20;
/// The level-1 page table (below the probe's image).
const L1_TABLE: u64 = abi::VIRT_RAM_BASE + 0x1000;

/// One measurement: a loop of `iterations`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FloorSample {
    /// Iterations timed.
    pub iterations: u64,
    /// Clock ticks (or cycles) for all of them.
    pub cycles: u64,
    /// Exits to user space during the loop (the done store not counted).
    pub user_exits: u64,
    /// Times the measured ioeventfd fired.
    pub eventfd_count: u64,
    /// The last value the loop read (read loops), else 0.
    pub value: u64,
    /// KVM's own exit counters over the run (its binary statistics, as
    /// `--stat` reads them; the done store's exit taken off `exits`).
    pub kvm_exits: BTreeMap<String, u64>,
}

/// A raw VM set up to run one kind's loop, any number of times.
pub struct RawVm {
    // Drop order: registrations, devices and the vCPU before the VM fd,
    // the VM before its memory.
    _keep: Vec<Keep>,
    measured: Option<IoEvent>,
    stats: Option<trapline_kvm::StatsFd>,
    vcpu: VcpuFd,
    _devices: Vec<DeviceFd>,
    _vm: Arc<VmFd>,
    _mem: GuestMemoryMmap,
    kind: FloorKind,
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

fn create_device(vm: &VmFd, type_: u32, what: &str) -> Result<DeviceFd, String> {
    let mut dev = kvm_create_device {
        type_,
        fd: 0,
        flags: 0,
    };
    vm.create_device(&mut dev)
        .map_err(|e| format!("raw floor: KVM_CREATE_DEVICE ({what}): {e}"))
}

/// KVM_SET_DEVICE_ATTR with the value at `addr` (a pointer into our memory, or 0).
fn set_attr(dev: &DeviceFd, group: u32, attr: u64, addr: u64, what: &str) -> Result<(), String> {
    let a = kvm_device_attr {
        flags: 0,
        group,
        attr,
        addr,
    };
    dev.set_device_attr(&a)
        .map_err(|e| format!("raw floor: KVM_SET_DEVICE_ATTR ({what}): {e}"))
}

/// The vGICv3 at the virt machine's addresses, with its ITS when `its`,
/// initialized (the vCPU exists by now), in trapline's order.
fn vgic(vm: &VmFd, its: bool) -> Result<Vec<DeviceFd>, String> {
    let gic = create_device(vm, kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_V3, "vGICv3")?;
    let dist: u64 = abi::VIRT_GIC_DIST_BASE;
    let redist: u64 = abi::VIRT_GIC_REDIST_BASE;
    set_attr(
        &gic,
        KVM_DEV_ARM_VGIC_GRP_ADDR,
        KVM_VGIC_V3_ADDR_TYPE_DIST.into(),
        &dist as *const u64 as u64,
        "distributor",
    )?;
    set_attr(
        &gic,
        KVM_DEV_ARM_VGIC_GRP_ADDR,
        KVM_VGIC_V3_ADDR_TYPE_REDIST.into(),
        &redist as *const u64 as u64,
        "redistributors",
    )?;
    let mut devices = Vec::new();
    if its {
        let its = create_device(vm, kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_ITS, "ITS")?;
        let base: u64 = abi::VIRT_GIC_ITS_BASE;
        set_attr(
            &its,
            KVM_DEV_ARM_VGIC_GRP_ADDR,
            KVM_VGIC_ITS_ADDR_TYPE.into(),
            &base as *const u64 as u64,
            "ITS address",
        )?;
        set_attr(
            &its,
            KVM_DEV_ARM_VGIC_GRP_CTRL,
            KVM_DEV_ARM_VGIC_CTRL_INIT.into(),
            0,
            "ITS CTRL_INIT",
        )?;
        devices.push(its);
    }
    let nr_irqs: u32 = abi::VIRT_GIC_NR_IRQS;
    set_attr(
        &gic,
        KVM_DEV_ARM_VGIC_GRP_NR_IRQS,
        0,
        &nr_irqs as *const u32 as u64,
        "NR_IRQS",
    )?;
    set_attr(
        &gic,
        KVM_DEV_ARM_VGIC_GRP_CTRL,
        KVM_DEV_ARM_VGIC_CTRL_INIT.into(),
        0,
        "vGIC CTRL_INIT",
    )?;
    devices.insert(0, gic);
    Ok(devices)
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
        if clock == Clock::Pmccntr && !pieces.vgic {
            return Err("raw floor: a vCPU with PMUv3 needs the vGIC".into());
        }
        if (pieces.its || pieces.irqfd) && !pieces.vgic {
            return Err("raw floor: the ITS and irqfds need the vGIC".into());
        }
        if kind == FloorKind::MmioVgicRead && !pieces.vgic {
            return Err("raw floor: mmio-vgic-read needs the vGIC".into());
        }
        let vm = Arc::new(kvm.create_vm().map_err(err("KVM_CREATE_VM"))?);
        let size = if pieces.memslots {
            TRAPLINE_MEM
        } else {
            BARE_MEM
        };
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(abi::VIRT_RAM_BASE), size)])
            .map_err(|e| format!("raw floor: guest memory: {e}"))?;
        let region = mem.iter().next().ok_or("raw floor: no memory region")?;
        let desc = kvm_userspace_memory_region {
            slot: 0,
            flags: 0,
            guest_phys_addr: abi::VIRT_RAM_BASE,
            memory_size: size as u64,
            userspace_addr: region.as_ptr() as u64,
        };
        // SAFETY: `mem` is owned by the RawVm and dropped after the VM fd
        // (field order), so the host range stays mapped while KVM may use it.
        unsafe { vm.set_user_memory_region(desc) }.map_err(err("KVM_SET_USER_MEMORY_REGION"))?;
        // As trapline: every vCPU, then the vGIC, then KVM_ARM_VCPU_INIT.
        let vcpu = vm.create_vcpu(0).map_err(err("KVM_CREATE_VCPU"))?;
        let devices = if pieces.vgic {
            vgic(&vm, pieces.its)?
        } else {
            Vec::new()
        };
        let mut init = kvm_vcpu_init::default();
        vm.get_preferred_target(&mut init)
            .map_err(err("KVM_ARM_PREFERRED_TARGET"))?;
        init.features[0] |= 1 << KVM_ARM_VCPU_PSCI_0_2;
        if clock == Clock::Pmccntr {
            init.features[0] |= 1 << kvm_bindings::KVM_ARM_VCPU_PMU_V3;
        }
        vcpu.vcpu_init(&init).map_err(err("KVM_ARM_VCPU_INIT"))?;
        if clock == Clock::Pmccntr {
            // The overflow PPI, then INIT (after the vGIC's CTRL_INIT).
            let irq: u32 = PMU_IRQ_INTID;
            pmu_attr(
                &vcpu,
                kvm_bindings::KVM_ARM_VCPU_PMU_V3_IRQ,
                &irq as *const u32 as u64,
                "PMUv3 IRQ",
            )?;
            pmu_attr(
                &vcpu,
                kvm_bindings::KVM_ARM_VCPU_PMU_V3_INIT,
                0,
                "PMUv3 INIT",
            )?;
        }

        let mut keep = Vec::new();
        let any = if kvm.check_extension_raw(KVM_CAP_IOEVENTFD_ANY_LENGTH) > 0 {
            Datamatch::Any
        } else {
            Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
        };
        let measured = if kind == FloorKind::MmioKernelWildcard {
            Some(
                IoEvent::register(vm.clone(), Space::Mmio, abi::VIRT_PROBE_MMIO_WILDCARD, any)
                    .map_err(fp)?,
            )
        } else {
            None
        };
        if pieces.lab_ioeventfds {
            for (addr, m) in lab_ioeventfds(kind, any) {
                keep.push(Keep::IoEvent(
                    IoEvent::register(vm.clone(), Space::Mmio, addr, m).map_err(fp)?,
                ));
            }
        }
        if pieces.coalesced {
            keep.push(Keep::Zone(
                CoalescedZone::register(
                    vm.clone(),
                    Space::Mmio,
                    abi::VIRT_PROBE_MMIO_COALESCED,
                    abi::VIRT_TRAPLINE_PAGE as u32,
                )
                .map_err(fp)?,
            ));
        }
        if pieces.memslots {
            let ro = ReadOnlyRegion::map(
                vm.clone(),
                1,
                abi::VIRT_PROBE_RO_MEMSLOT,
                abi::VIRT_TRAPLINE_PAGE as usize,
            )
            .map_err(fp)?;
            keep.push(Keep::Ro(ro));
        }
        if pieces.irqfd {
            keep.push(Keep::IrqFd(
                IrqFd::register(vm.clone(), abi::VIRT_IRQFD_SPI).map_err(fp)?,
            ));
        }

        page_table(&mem)?;
        let (words, at, entry) = code::program(kind, clock);
        mem.write_slice(&code::bytes(&words), GuestAddress(at))
            .map_err(|e| format!("raw floor: writing the code: {e}"))?;
        mem.write_obj(abi::PROBE_READ_VALUE, GuestAddress(code::RAM_WORD))
            .map_err(|e| format!("raw floor: writing the RAM word: {e}"))?;
        mmu_on(&vcpu)?;
        set(&vcpu, regs::PSTATE, regs::PSTATE_EL1H_DAIF_MASKED, "PSTATE")?;
        set(&vcpu, regs::PC, entry, "PC")?;
        for &(r, v) in kind.regs() {
            set(&vcpu, regs::x(r), v, "a loop register")?;
        }
        set(
            &vcpu,
            regs::x(code::REG_DONE),
            DONE_MMIO,
            "the done address",
        )?;
        // KVM's counters where the kernel has binary statistics (5.14+).
        let stats = trapline_kvm::StatsFd::open_vcpu(&vcpu).ok();
        Ok(Self {
            _keep: keep,
            measured,
            stats,
            vcpu,
            _devices: devices,
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
        let mut user_exits = 0u64;
        loop {
            match self.vcpu.run() {
                Ok(VcpuExit::MmioWrite(DONE_MMIO, _)) => break,
                Ok(VcpuExit::MmioWrite(a, _)) if a == abi::VIRT_PROBE_MMIO_USER => user_exits += 1,
                Ok(other) => return Err(format!("raw floor: unexpected exit {other:?}")),
                Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => {}
                Err(e) => return Err(format!("raw floor: KVM_RUN: {e}")),
            }
        }
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

fn set(vcpu: &VcpuFd, id: u64, value: u64, what: &str) -> Result<(), String> {
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

/// KVM_CAP_IOEVENTFD_ANY_LENGTH (kvm-bindings has no name for it).
const KVM_CAP_IOEVENTFD_ANY_LENGTH: libc::c_ulong = 122;

/// trapline's other lab MMIO ioeventfds (those the measured kind does not use).
fn lab_ioeventfds(kind: FloorKind, any: Datamatch) -> Vec<(u64, Datamatch)> {
    let mut v = vec![
        (
            abi::VIRT_PROBE_MMIO_DATAMATCH,
            Datamatch::U32(abi::PROBE_DATAMATCH_VALUE),
        ),
        (abi::VIRT_DOORBELL_MMIO_KERNEL, any),
    ];
    if kind != FloorKind::MmioKernelWildcard {
        v.push((abi::VIRT_PROBE_MMIO_WILDCARD, any));
    }
    v
}

/// The probe's identity map (`crates/guest/c/arch/aarch64/layout.h`): one
/// level-1 table of 1 GiB blocks, the first Device-nGnRnE and never
/// executed, the next three Normal write-back, inner shareable.
pub fn l1_entries() -> [u64; 4] {
    const BLOCK: u64 = 0x1;
    const AF: u64 = 1 << 10;
    const SH_INNER: u64 = 3 << 8;
    const PXN_UXN: u64 = 3 << 53;
    const ATTR_DEVICE: u64 = 0 << 2;
    const ATTR_NORMAL: u64 = 1 << 2;
    std::array::from_fn(|i| {
        let base = (i as u64) << 30;
        if i == 0 {
            base | PXN_UXN | AF | ATTR_DEVICE | BLOCK
        } else {
            base | AF | SH_INNER | ATTR_NORMAL | BLOCK
        }
    })
}

fn page_table(mem: &GuestMemoryMmap) -> Result<(), String> {
    for (i, e) in l1_entries().into_iter().enumerate() {
        mem.write_obj(e, GuestAddress(L1_TABLE + 8 * i as u64))
            .map_err(|e| format!("raw floor: page table: {e}"))?;
    }
    Ok(())
}

/// MAIR_EL1: attribute 0 Device-nGnRnE, 1 Normal write-back (the probe's).
const MAIR: u64 = 0xff00;
/// TCR_EL1: T0SZ 25 (39-bit VAs, walks from level 1), 4 KiB granule,
/// inner-shareable write-back walks, TTBR1 walks off, IPS 0 (32-bit PAs:
/// everything the floor maps is below 4 GiB).
const TCR: u64 = 25 | (1 << 8) | (1 << 10) | (3 << 12) | (1 << 23);
const SCTLR_M: u64 = 1 << 0;
const SCTLR_A: u64 = 1 << 1;
const SCTLR_C: u64 = 1 << 2;
const SCTLR_I: u64 = 1 << 12;

/// The MMU and caches on, as the probe's start-up leaves them.
fn mmu_on(vcpu: &VcpuFd) -> Result<(), String> {
    let sctlr_id = regs::sysreg(3, 0, 1, 0, 0);
    set(vcpu, regs::sysreg(3, 0, 10, 2, 0), MAIR, "MAIR_EL1")?;
    set(vcpu, regs::sysreg(3, 0, 2, 0, 2), TCR, "TCR_EL1")?;
    set(vcpu, regs::sysreg(3, 0, 2, 0, 0), L1_TABLE, "TTBR0_EL1")?;
    let sctlr = get(vcpu, sctlr_id)?;
    set(
        vcpu,
        sctlr_id,
        (sctlr | SCTLR_M | SCTLR_C | SCTLR_I) & !SCTLR_A,
        "SCTLR_EL1",
    )
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

    #[test]
    fn the_identity_map_is_the_probe_s() {
        let e = l1_entries();
        // Device, never executed, below 1 GiB; Normal write-back above.
        assert_eq!(e[0], (3 << 53) | (1 << 10) | 1);
        assert_eq!(e[1], (1 << 30) | (1 << 10) | (3 << 8) | (1 << 2) | 1);
        assert_eq!(e[3] >> 30 & 0x3, 3);
    }
}
