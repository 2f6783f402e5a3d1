//! Building a machine: memory and image, devices on buses, fast paths,
//! vCPUs.

use std::sync::Arc;

use trapline_abi as abi;
use trapline_bus::{Bus, BusBuilder, ExitCounters, ExitProfile};
use trapline_devices::debug_exit::DebugExit;
use trapline_devices::power::BochsShutdown;
use trapline_devices::serial::{Uart, UART_LEN};
use trapline_devices::ucall::UcallPort;
use trapline_fastpath::{CoalescedRing, IrqFd};
use trapline_kvm::{HostKvm, VcpuFd, Vm, VmConfig};

use crate::config::MachineConfig;
use crate::extension::{ExtensionContext, ExtensionHandle};
use crate::kvm_stats::{KvmStats, UcallKernelCounters};
use crate::layout::MAX_MEM_MIB;
use crate::platform::{self, Platform, PlatformOptions};
use crate::{boot, MachineError};

/// A built machine, ready to run.
pub struct Machine {
    // Field order is drop order: fast paths and vCPUs go before the VM
    // whose fd they use, and the VM before its memory.
    /// What the extension installed (its fast paths with it), if any.
    pub(crate) extension: Option<ExtensionHandle>,
    /// COM1's interrupt line, held so that its irqfd stays registered.
    pub(crate) _uart_irq: Option<IrqFd>,
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
    pub(crate) timeout: Option<std::time::Duration>,
    pub(crate) seccomp: crate::SeccompMode,
    pub(crate) measure_footprint: bool,
    /// See [`ExtensionContext::set_fast_port`].
    pub(crate) fast_port: Option<u16>,
    pub(crate) tsc_khz: Option<u32>,
    /// COM1, for console input.
    pub(crate) uart: Arc<Uart>,
    /// See [`MachineConfig::console_input`].
    pub(crate) console_input: Option<bool>,
    pub(crate) vm: Vm,
}

/// COM1's ISA IRQ (and GSI: the IOAPIC's pins 0-15 are the ISA IRQs).
pub const COM1_GSI: u32 = 4;

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

        let mut mmio = BusBuilder::new();
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
        // Last, so an extension sees the whole platform on the buses (and
        // a clash with it is a bus error naming both devices).
        let mut ext = ExtensionContext::new(kvm, &vm, &mut pio, &mut mmio);
        let extension = match config.extension.take() {
            Some(e) => Some(e.install(&mut ext)?),
            None => None,
        };
        let (coalesced_ring, fast_port) = (ext.coalesced_ring, ext.fast_port);

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
        let ring = if coalesced_ring {
            Some(Arc::new(CoalescedRing::map(&vcpus[0])?))
        } else {
            None
        };

        Ok(Machine {
            extension,
            _uart_irq: uart_irq,
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
            timeout: config.timeout,
            seccomp: config.seccomp,
            measure_footprint: config.measure_footprint,
            fast_port,
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
