//! Assembling a machine, the same on every architecture: guest memory and
//! the image, the exit counters and profiles, the platform's devices on
//! the buses (the architecture's: [`crate::arch::add_devices`]), the
//! extension, the vCPUs, and the start-up marks between them
//! ([`crate::footprint::marks`]: "vm created", "image loaded", "platform
//! built", "vcpus created"). Where the architectures differ in order (KVM
//! wants arm64's vCPUs before its vGIC, so `virt` creates them before its
//! devices) the platform says so ([`crate::arch::VCPUS_FIRST`]).

use std::sync::Arc;

use trapline_bus::{Bus, BusBuilder, ExitCounters, ExitProfile};
use trapline_devices::ucall::UcallPort;
use trapline_fastpath::CoalescedRing;
use trapline_kvm::{HostKvm, VcpuFd, Vm, VmConfig};

use crate::arch::{self, Boot, Platform};
use crate::config::MachineConfig;
use crate::console::ConsoleRx;
use crate::extension::{ExtensionContext, ExtensionHandle};
use crate::footprint::marks::mark;
use crate::kvm_stats::{KvmStats, UcallKernelCounters};
use crate::layout::MAX_MEM_MIB;
use crate::MachineError;

/// A built machine, ready to run.
pub struct Machine {
    // Field order is drop order: fast paths and vCPUs go before the VM
    // whose fd they use, and the VM before its memory.
    /// What the extension installed (its fast paths with it), if any.
    pub(crate) extension: Option<ExtensionHandle>,
    /// Helper threads started once vCPU 0 is in the guest (see
    /// [`crate::deferred`]): the RTC's (x86) or PL031's (arm64) timer.
    pub(crate) deferred: Vec<crate::deferred::DeferredStart>,
    pub(crate) virtio: crate::virtio::VirtioSet,
    /// The architecture's devices the machine keeps (PCI on both; the PC's
    /// PM, RTC and COM1 interrupt, what S3 needs).
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
    pub(crate) timeout: Option<std::time::Duration>,
    pub(crate) seccomp: crate::SeccompMode,
    pub(crate) measure_footprint: bool,
    /// See [`ExtensionContext::set_fast_port`].
    pub(crate) fast_port: Option<u16>,
    /// See [`ExtensionContext::publish_exit_stamps`].
    pub(crate) exit_stamps: Option<u64>,
    pub(crate) tsc_khz: Option<u32>,
    /// The console UART (COM1 on x86, the PL011 on arm64), for input.
    pub(crate) uart: Arc<dyn ConsoleRx>,
    /// See [`MachineConfig::console_input`].
    pub(crate) console_input: Option<bool>,
    pub(crate) vm: Vm,
}

/// What the shared assembly hands the architecture's platform to put its
/// devices on the buses ([`crate::arch::add_devices`]).
pub(crate) struct Parts<'a> {
    pub kvm: &'a HostKvm,
    pub vm: &'a Vm,
    pub config: &'a mut MachineConfig,
    pub pio: &'a mut BusBuilder,
    pub mmio: &'a mut BusBuilder,
    /// The lab's ucall device, for the platform to map where its guests
    /// look for it.
    pub ucall: UcallPort,
}

/// What the platform put on the buses that the machine keeps.
pub(crate) struct Devices {
    pub platform: Platform,
    pub virtio: crate::virtio::VirtioSet,
    pub uart: Arc<dyn ConsoleRx>,
    pub deferred: Vec<crate::deferred::DeferredStart>,
}

/// What the extension installed, and asked of the run loop.
struct Extended {
    handle: Option<ExtensionHandle>,
    coalesced_ring: bool,
    fast_port: Option<u16>,
    exit_stamps: Option<u64>,
}

/// What is read through the vCPUs once they and the devices exist.
struct Attached {
    ring: Option<Arc<CoalescedRing>>,
    kvm_stats: Option<KvmStats>,
    tsc_khz: Option<u32>,
}

/// A machine being assembled.
struct Assembly<'a> {
    kvm: &'a HostKvm,
    vm: Vm,
    config: MachineConfig,
    counters: Arc<[Arc<ExitCounters>]>,
    profiles: Option<Vec<Arc<ExitProfile>>>,
    /// KVM's own counters for the profile and the lab's ucalls; the reader
    /// gets the vCPUs' stats fds once they exist.
    ucall_kernel: Arc<UcallKernelCounters>,
    pio: BusBuilder,
    mmio: BusBuilder,
}

impl Machine {
    /// Build a machine on `kvm` from `config`.
    pub fn build(kvm: &HostKvm, mut config: MachineConfig) -> Result<Machine, MachineError> {
        check(&config)?;
        let vm = Vm::new(kvm, vm_config(&config))?;
        mark("vm created");
        let mut boot = arch::load_image(&vm, &mut config)?;
        mark("image loaded");
        let mut a = Assembly::new(kvm, vm, config);
        let (devices, extended, vcpus, attached) = if arch::VCPUS_FIRST {
            let vcpus = arch::create_vcpus(&a.vm, &mut boot)?;
            mark("vcpus created");
            let (devices, extended) = a.add_devices(&boot, &vcpus)?;
            // On `virt` the devices, buses and device tree come after the
            // vCPUs and the vGIC, so this mark follows "vcpus created".
            mark("platform built");
            let attached = a.attach(&vcpus, &extended)?;
            (devices, extended, vcpus, attached)
        } else {
            let (devices, extended) = a.add_devices(&boot, &[])?;
            mark("platform built");
            let vcpus = arch::create_vcpus(&a.vm, &mut boot)?;
            let attached = a.attach(&vcpus, &extended)?;
            mark("vcpus created");
            (devices, extended, vcpus, attached)
        };
        Ok(a.machine(devices, extended, vcpus, attached))
    }

    /// The frequency of the cycle counter `--stat` reads, in kHz: the
    /// guest's TSC as KVM reports it (KVM_GET_TSC_KHZ) on x86, CNTFRQ_EL0
    /// on arm64.
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

    /// The VM (for tests and extensions).
    pub fn vm(&self) -> &Vm {
        &self.vm
    }

    /// The handle the machine's extension returned, if there is one and it
    /// is a `T` (its owner reads its devices and fast paths through it).
    pub fn extension<T: 'static>(&self) -> Option<&T> {
        self.extension.as_ref()?.downcast_ref()
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
}

/// Refuse what no machine of this architecture can be.
fn check(config: &MachineConfig) -> Result<(), MachineError> {
    if config.mem_mib == 0 || config.mem_mib > MAX_MEM_MIB {
        return Err(MachineError::Config(format!(
            "--mem {}: guest RAM must be 1 to {MAX_MEM_MIB} MiB",
            config.mem_mib
        )));
    }
    arch::refuse(config)
}

/// The VM the configuration asks for (a PIT only where the platform has
/// one).
fn vm_config(config: &MachineConfig) -> VmConfig {
    VmConfig {
        mem_bytes: config.mem_mib << 20,
        vcpus: config.vcpus,
        irqchip: config.irqchip,
        pit: config.pit && arch::HAS_PIT,
        cpu: config.cpu.clone(),
    }
}

impl<'a> Assembly<'a> {
    fn new(kvm: &'a HostKvm, vm: Vm, config: MachineConfig) -> Self {
        let counters: Arc<[Arc<ExitCounters>]> = (0..config.vcpus)
            .map(|_| Arc::new(ExitCounters::default()))
            .collect::<Vec<_>>()
            .into();
        let profiles = (config.profile || config.metrics.is_some()).then(|| {
            (0..config.vcpus)
                .map(|_| Arc::new(ExitProfile::new()))
                .collect()
        });
        Assembly {
            kvm,
            vm,
            config,
            counters,
            profiles,
            ucall_kernel: Arc::new(UcallKernelCounters::default()),
            pio: BusBuilder::new(),
            mmio: BusBuilder::new(),
        }
    }

    /// The lab's ucall device, reporting into the machine's counters and
    /// profiles.
    fn ucall(&mut self) -> UcallPort {
        let ucall = UcallPort::new(
            self.vm.memory().clone(),
            self.counters.clone(),
            self.config.ucall_sink.take(),
        )
        .with_profiles(self.profiles.clone().unwrap_or_default());
        match self.profiles {
            Some(_) => ucall.with_kernel_counters(self.ucall_kernel.clone()),
            None => ucall,
        }
    }

    /// The platform's devices, then the extension's, then what the guest
    /// needs to boot that only now exists (arm64's device tree).
    fn add_devices(
        &mut self,
        boot: &Boot,
        vcpus: &[VcpuFd],
    ) -> Result<(Devices, Extended), MachineError> {
        let ucall = self.ucall();
        let devices = arch::add_devices(Parts {
            kvm: self.kvm,
            vm: &self.vm,
            config: &mut self.config,
            pio: &mut self.pio,
            mmio: &mut self.mmio,
            ucall,
        })?;
        // Last, so an extension sees the whole platform on the buses (and
        // a clash with it is a bus error naming both devices).
        let mut ext = ExtensionContext::new(self.kvm, &self.vm, &mut self.pio, &mut self.mmio);
        let handle = match self.config.extension.take() {
            Some(e) => Some(e.install(&mut ext)?),
            None => None,
        };
        let extended = Extended {
            handle,
            coalesced_ring: ext.coalesced_ring,
            fast_port: ext.fast_port,
            exit_stamps: ext.exit_stamps,
        };
        arch::prepare_boot(&self.vm, vcpus, boot, &self.config)?;
        Ok((devices, extended))
    }

    /// The cycle counter's frequency, KVM's statistics (for --stat's
    /// report and the metrics lines) and the coalesced ring, read through
    /// the vCPUs.
    fn attach(&self, vcpus: &[VcpuFd], extended: &Extended) -> Result<Attached, MachineError> {
        let tsc_khz = arch::counter_khz(vcpus);
        let kvm_stats = (self.profiles.is_some() || self.config.metrics.is_some()).then(|| {
            let stats = KvmStats::open(self.vm.fd(), vcpus);
            self.ucall_kernel.set(stats.vcpu_fds());
            stats
        });
        let ring = if extended.coalesced_ring {
            Some(Arc::new(CoalescedRing::map(&vcpus[0])?))
        } else {
            None
        };
        Ok(Attached {
            ring,
            kvm_stats,
            tsc_khz,
        })
    }

    fn machine(
        self,
        devices: Devices,
        extended: Extended,
        vcpus: Vec<VcpuFd>,
        attached: Attached,
    ) -> Machine {
        Machine {
            extension: extended.handle,
            deferred: devices.deferred,
            virtio: devices.virtio,
            platform: devices.platform,
            tsc_khz: attached.tsc_khz,
            vcpus,
            ring: attached.ring,
            pio: Arc::new(self.pio.build()),
            mmio: Arc::new(self.mmio.build()),
            counters: self.counters,
            profiles: self.profiles,
            kvm_stats: attached.kvm_stats,
            metrics: self.config.metrics,
            timeout: self.config.timeout,
            seccomp: self.config.seccomp,
            measure_footprint: self.config.measure_footprint,
            fast_port: extended.fast_port,
            exit_stamps: extended.exit_stamps,
            uart: devices.uart,
            console_input: self.config.console_input,
            vm: self.vm,
        }
    }
}
