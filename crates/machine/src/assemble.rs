//! Building a machine: memory and image, devices on buses, fast paths,
//! vCPUs.

use std::collections::BTreeMap;
use std::sync::Arc;

use trapline_abi as abi;
use trapline_devices::debug_exit::DebugExit;
use trapline_devices::doorbell::Doorbell;
use trapline_devices::power::BochsShutdown;
use trapline_devices::probe::{ProbeDevice, ProbeSpace};
use trapline_devices::serial::{Uart, UART_LEN};
use trapline_devices::ucall::UcallPort;
use trapline_exit::{Bus, BusBuilder, ExitCounters, ExitProfile};
use trapline_fastpath::{
    CoalescedRing, CoalescedZone, Datamatch, IoEvent, IrqFd, ReadOnlyRegion, Space,
};
use trapline_kvm::{HostKvm, VcpuFd, Vm, VmConfig};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use crate::config::{LabFixtures, MachineConfig};
use crate::kvm_stats::{KvmStats, UcallKernelCounters};
use crate::layout::MAX_MEM_MIB;
use crate::platform::{self, Platform, PlatformOptions};
use crate::{boot, MachineError};

/// A built machine, ready to run.
pub struct Machine {
    // Field order is drop order: fast paths and vCPUs go before the VM
    // whose fd they use, and the VM before its memory.
    pub(crate) fastpaths: Fastpaths,
    pub(crate) virtio: crate::virtio::VirtioSet,
    pub(crate) platform: Platform,
    pub(crate) vcpus: Vec<VcpuFd>,
    pub(crate) ring: Option<Arc<CoalescedRing>>,
    pub(crate) pio: Arc<Bus>,
    pub(crate) mmio: Arc<Bus>,
    pub(crate) counters: Arc<[Arc<ExitCounters>]>,
    /// Per-vCPU exit profiles (`--stat`), else `None`.
    pub(crate) profiles: Option<Vec<Arc<ExitProfile>>>,
    /// Where metrics lines go during the run.
    pub(crate) metrics: Option<crate::config::MetricsSink>,
    /// KVM's stats fds (with the profile).
    pub(crate) kvm_stats: Option<KvmStats>,
    pub(crate) probe_pio: Arc<ProbeDevice>,
    pub(crate) probe_mmio: Arc<ProbeDevice>,
    pub(crate) timeout: Option<std::time::Duration>,
    pub(crate) seccomp: crate::SeccompMode,
    pub(crate) measure_footprint: bool,
    pub(crate) lab: LabFixtures,
    pub(crate) tsc_khz: Option<u32>,
    /// COM1, for console input.
    pub(crate) uart: Arc<Uart>,
    /// See [`MachineConfig::console_input`].
    pub(crate) console_input: Option<bool>,
    pub(crate) vm: Vm,
}

/// COM1's ISA IRQ (and GSI: the IOAPIC's pins 0-15 are the ISA IRQs).
pub const COM1_GSI: u32 = 4;

/// The lab's fast paths, kept alive for the run.
#[derive(Default)]
pub(crate) struct Fastpaths {
    pub(crate) ioevents: BTreeMap<&'static str, IoEvent>,
    pub(crate) zones: Vec<CoalescedZone>,
    pub(crate) ro: Option<ReadOnlyRegion>,
    pub(crate) irqfd: Option<IrqFd>,
    pub(crate) doorbell_user: Option<EventFd>,
    /// COM1's interrupt line.
    pub(crate) uart_irq: Option<IrqFd>,
}

/// What the lab uses while the VM runs: the doorbells' eventfds (for its
/// consumer thread), the irqfd (for its injector thread) and guest memory.
pub struct LabHandles {
    /// (name, eventfd) of each doorbell: `doorbell-user-mmio` (signalled by
    /// trapline's device) and the KVM ones `doorbell-mmio`, `doorbell-pio`,
    /// `doorbell-pv`.
    pub doorbells: Vec<(&'static str, EventFd)>,
    /// The irqfd bound to `IRQFD_GSI`.
    pub irqfd: Option<EventFd>,
    /// Guest RAM.
    pub memory: vm_memory::GuestMemoryMmap,
}

/// What the lab reads back after a run to check its scenarios.
pub struct LabReadout {
    /// The PIO probe device (write counts per register).
    pub probe_pio: Arc<ProbeDevice>,
    /// The MMIO probe device.
    pub probe_mmio: Arc<ProbeDevice>,
    /// How many times each lab ioeventfd fired, by name
    /// (`pio-wildcard`, `pio-datamatch`, `mmio-wildcard`, `mmio-datamatch`).
    pub ioevent_counts: BTreeMap<&'static str, u64>,
}

impl Machine {
    /// Build a machine on `kvm` from `config`.
    pub fn build(kvm: &HostKvm, mut config: MachineConfig) -> Result<Machine, MachineError> {
        if config.mem_mib == 0 || config.mem_mib > MAX_MEM_MIB {
            return Err(MachineError::Config(format!(
                "--mem {}: guest RAM must be 1 to {MAX_MEM_MIB} MiB",
                config.mem_mib
            )));
        }
        if config.vcpus > 1 && !config.irqchip.has_lapic() {
            return Err(MachineError::Config(format!(
                "--smp {} needs local APICs to start the other vCPUs: use --irqchip kernel or split",
                config.vcpus
            )));
        }
        let vm = Vm::new(
            kvm,
            VmConfig {
                mem_bytes: config.mem_mib << 20,
                vcpus: config.vcpus,
                irqchip: config.irqchip,
                pit: config.pit,
                cpu: config.cpu.clone(),
            },
        )?;
        let virtio_config = std::mem::take(&mut config.virtio);
        if !virtio_config.disks.is_empty() {
            // The devices are announced where Linux looks for them
            // without firmware tables: its command line.
            let words = crate::virtio::cmdline(virtio_config.disks.len());
            config.append = match config.append.trim() {
                "" => words,
                a => format!("{a} {words}"),
            };
        }
        let boot = boot::load_image(&vm, &config)?;

        let counters: Arc<[Arc<ExitCounters>]> = (0..config.vcpus)
            .map(|_| Arc::new(ExitCounters::default()))
            .collect::<Vec<_>>()
            .into();
        let probe_pio = Arc::new(ProbeDevice::new(ProbeSpace::Pio));
        let probe_mmio = Arc::new(ProbeDevice::new(ProbeSpace::Mmio));

        let mut pio = BusBuilder::new();
        // COM1's IRQ 4 through the in-kernel irqchip: Linux's 8250 driver
        // is interrupt-driven (THR empty, data received).
        let uart_irq = if config.irqchip.has_ioapic_and_pic() {
            Some(IrqFd::register(vm.fd().clone(), COM1_GSI)?)
        } else {
            None
        };
        let uart = Arc::new(match &uart_irq {
            Some(irq) => Uart::with_irq(
                config.serial,
                irq.eventfd()
                    .try_clone()
                    .map_err(|source| MachineError::Host {
                        what: "eventfd",
                        source,
                    })?,
            ),
            None => Uart::new(config.serial),
        });
        pio.insert("com1", abi::COM1_PORT.into(), UART_LEN, uart.clone())?;
        pio.insert(
            "isa-debug-exit",
            abi::DEBUG_EXIT_PORT.into(),
            abi::DEBUG_EXIT_LEN.into(),
            Arc::new(DebugExit),
        )?;
        // i8042: Linux reboots through it (command 0xFE on port 0x64).
        for (name, port) in [
            ("i8042-data", trapline_devices::i8042::I8042_DATA_PORT),
            ("i8042", trapline_devices::i8042::I8042_COMMAND_PORT),
        ] {
            pio.insert(
                name,
                port.into(),
                1,
                Arc::new(trapline_devices::i8042::I8042),
            )?;
        }
        pio.insert(
            "bochs-shutdown",
            abi::BOCHS_SHUTDOWN_PORT.into(),
            1,
            Arc::new(BochsShutdown::default()),
        )?;
        let profiles: Option<Vec<Arc<ExitProfile>>> = (config.profile || config.metrics.is_some())
            .then(|| {
                (0..config.vcpus)
                    .map(|_| Arc::new(ExitProfile::new()))
                    .collect()
            });
        // KVM's own counters for the profile and the lab's ucalls; the
        // reader gets the vCPUs' stats fds once they exist (below).
        let ucall_kernel = Arc::new(UcallKernelCounters::default());
        let mut ucall = UcallPort::new(vm.memory().clone(), counters.clone(), config.ucall_sink)
            .with_profiles(profiles.clone().unwrap_or_default());
        if profiles.is_some() {
            ucall = ucall.with_kernel_counters(ucall_kernel.clone());
        }
        pio.insert("ucall", abi::UCALL_PORT.into(), 4, Arc::new(ucall))?;
        // The probe devices cover the lab's ports up to the PV doorbell,
        // which belongs to pci-testdev.
        let probe_ports = abi::PROBE_PIO_USER_PORT as u64;
        let probe_len = abi::PV_DOORBELL_PORT as u64 - probe_ports;
        pio.insert("probe", probe_ports, probe_len, probe_pio.clone())?;

        let mut mmio = BusBuilder::new();
        let probe_pages = abi::DOORBELL_MMIO_USER - abi::PROBE_MMIO_BASE;
        mmio.insert(
            "probe",
            abi::PROBE_MMIO_BASE,
            probe_pages,
            probe_mmio.clone(),
        )?;
        mmio.insert(
            "probe-ro-memslot",
            abi::PROBE_RO_MEMSLOT,
            abi::PROBE_PAGE_SIZE,
            probe_mmio.clone(),
        )?;
        let host = |source| MachineError::Host {
            what: "eventfd",
            source,
        };
        let doorbell_fd = EventFd::new(EFD_NONBLOCK).map_err(host)?;
        let doorbell = Arc::new(Doorbell::new(doorbell_fd.try_clone().map_err(host)?));
        mmio.insert(
            "doorbell",
            abi::DOORBELL_MMIO_USER,
            2 * abi::PROBE_PAGE_SIZE,
            doorbell,
        )?;

        let platform = platform::build(
            &vm,
            &PlatformOptions {
                pci_testdev: config.pci_testdev,
                pc_testdev: config.pc_testdev,
                ecam_ro: config.ecam_ro,
                any_length: kvm.has_ioeventfd_any_length(),
                seccomp: config.seccomp != crate::SeccompMode::Off,
            },
            &mut pio,
            &mut mmio,
        )?;
        crate::interrupts::install_absent(config.irqchip, config.pit, &mut pio, &mut mmio)?;
        let virtio = crate::virtio::VirtioSet::build(&vm, virtio_config, &mut mmio)?;
        let mut fastpaths = lab_fastpaths(kvm, &vm, config.lab)?;
        fastpaths.doorbell_user = Some(doorbell_fd);
        fastpaths.uart_irq = uart_irq;

        let mut vcpus = Vec::with_capacity(config.vcpus as usize);
        for i in 0..config.vcpus {
            vcpus.push(vm.create_vcpu(i, (i == 0).then_some(&boot))?);
        }
        let tsc_khz = vcpus.first().and_then(|v| v.get_tsc_khz().ok());
        let kvm_stats = profiles.is_some().then(|| {
            let stats = KvmStats::open(vm.fd(), &vcpus);
            ucall_kernel.set(stats.vcpu_fds());
            stats
        });
        let ring = if config.lab.coalesced {
            Some(Arc::new(CoalescedRing::map(&vcpus[0])?))
        } else {
            None
        };

        Ok(Machine {
            fastpaths,
            virtio,
            platform,
            vcpus,
            ring,
            pio: Arc::new(pio.build()),
            mmio: Arc::new(mmio.build()),
            counters,
            profiles,
            kvm_stats,
            metrics: config.metrics,
            probe_pio,
            probe_mmio,
            timeout: config.timeout,
            seccomp: config.seccomp,
            measure_footprint: config.measure_footprint,
            lab: config.lab,
            tsc_khz,
            uart,
            console_input: config.console_input,
            vm,
        })
    }

    /// The guest's TSC frequency as KVM reports it (KVM_GET_TSC_KHZ).
    pub fn tsc_khz(&self) -> Option<u32> {
        self.tsc_khz
    }

    /// Host addresses [start, end) of guest RAM.
    pub(crate) fn guest_host_range(&self) -> (u64, u64) {
        use vm_memory::{GuestMemoryBackend, GuestMemoryRegion};
        let mut lo = u64::MAX;
        let mut hi = 0;
        for r in self.vm.memory().iter() {
            let a = r.as_ptr() as u64;
            lo = lo.min(a);
            hi = hi.max(a + r.len());
        }
        (lo, hi)
    }

    /// The VM (for tests and the lab).
    pub fn vm(&self) -> &Vm {
        &self.vm
    }

    /// The PIO bus, as built.
    pub fn pio_bus(&self) -> &Bus {
        &self.pio
    }

    /// The MMIO bus, as built.
    pub fn mmio_bus(&self) -> &Bus {
        &self.mmio
    }

    /// The PCI subsystem (host-side inspection: BAR assignments, pci-testdev).
    pub fn pci(&self) -> &trapline_devices::pci::PciDevices {
        &self.platform.pci
    }

    /// Duplicated handles for the lab's helper threads.
    pub fn lab_handles(&self) -> Result<LabHandles, MachineError> {
        let dup = |fd: &EventFd| {
            fd.try_clone().map_err(|source| MachineError::Host {
                what: "eventfd",
                source,
            })
        };
        let mut doorbells = Vec::new();
        if let Some(fd) = &self.fastpaths.doorbell_user {
            doorbells.push(("doorbell-user-mmio", dup(fd)?));
        }
        for (name, ev) in &self.fastpaths.ioevents {
            if name.starts_with("doorbell-") {
                doorbells.push((*name, dup(ev.eventfd())?));
            }
        }
        let irqfd = match &self.fastpaths.irqfd {
            Some(i) => Some(dup(i.eventfd())?),
            None => None,
        };
        Ok(LabHandles {
            doorbells,
            irqfd,
            memory: self.vm.memory().clone(),
        })
    }

    pub(crate) fn readout(&self) -> LabReadout {
        LabReadout {
            probe_pio: self.probe_pio.clone(),
            probe_mmio: self.probe_mmio.clone(),
            ioevent_counts: self
                .fastpaths
                .ioevents
                .iter()
                .map(|(k, v)| (*k, v.take_count()))
                .collect(),
        }
    }
}

fn lab_fastpaths(kvm: &HostKvm, vm: &Vm, lab: LabFixtures) -> Result<Fastpaths, MachineError> {
    let mut f = Fastpaths::default();
    let fd = vm.fd();
    if lab.ioeventfds {
        let dm = Datamatch::U32(abi::PROBE_DATAMATCH_VALUE);
        // Without "any length" KVM refuses a length-0 MMIO ioeventfd; the
        // MMIO wildcard then matches the value the probe writes.
        let mmio_wild = if kvm.has_ioeventfd_any_length() {
            Datamatch::Any
        } else {
            Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
        };
        f.ioevents.insert(
            "pio-wildcard",
            IoEvent::register(
                fd.clone(),
                Space::Pio,
                abi::PROBE_PIO_WILDCARD_PORT.into(),
                Datamatch::AnyOfLen(4),
            )?,
        );
        f.ioevents.insert(
            "pio-datamatch",
            IoEvent::register(
                fd.clone(),
                Space::Pio,
                abi::PROBE_PIO_DATAMATCH_PORT.into(),
                dm,
            )?,
        );
        f.ioevents.insert(
            "mmio-wildcard",
            IoEvent::register(fd.clone(), Space::Mmio, abi::PROBE_MMIO_WILDCARD, mmio_wild)?,
        );
        f.ioevents.insert(
            "mmio-datamatch",
            IoEvent::register(fd.clone(), Space::Mmio, abi::PROBE_MMIO_DATAMATCH, dm)?,
        );
    }
    if lab.coalesced {
        f.zones.push(CoalescedZone::register(
            fd.clone(),
            Space::Mmio,
            abi::PROBE_MMIO_COALESCED,
            abi::PROBE_PAGE_SIZE as u32,
        )?);
        f.zones.push(CoalescedZone::register(
            fd.clone(),
            Space::Pio,
            abi::PROBE_PIO_COALESCED_PORT.into(),
            4,
        )?);
    }
    if lab.doorbells {
        let pv = Datamatch::U32(abi::DOORBELL_PV_IDENTITY);
        // Like the MMIO wildcard above: without "any length" KVM needs a
        // width, and the probe rings with 32-bit writes.
        let mmio_any = if kvm.has_ioeventfd_any_length() {
            Datamatch::Any
        } else {
            Datamatch::U32(abi::PROBE_WILDCARD_VALUE)
        };
        let doorbells = [
            (
                "doorbell-mmio",
                Space::Mmio,
                abi::DOORBELL_MMIO_KERNEL,
                mmio_any,
            ),
            (
                "doorbell-pio",
                Space::Pio,
                abi::DOORBELL_PIO_PORT.into(),
                Datamatch::AnyOfLen(4),
            ),
            ("doorbell-pv", Space::Pio, abi::PV_DOORBELL_PORT.into(), pv),
        ];
        for (name, space, addr, m) in doorbells {
            f.ioevents
                .insert(name, IoEvent::register(fd.clone(), space, addr, m)?);
        }
    }
    if lab.irqfd && vm.config().irqchip.has_ioapic_and_pic() {
        f.irqfd = Some(IrqFd::register(fd.clone(), abi::IRQFD_GSI)?);
    }
    if lab.ro_memslot {
        let ro = ReadOnlyRegion::map(
            fd.clone(),
            vm.alloc_slot(),
            abi::PROBE_RO_MEMSLOT,
            abi::PROBE_PAGE_SIZE as usize,
        )?;
        ro.write(0, &abi::PROBE_READ_VALUE.to_le_bytes());
        f.ro = Some(ro);
    }
    Ok(f)
}
