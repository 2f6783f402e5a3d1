//! Building the PC machine: memory and image, the PC devices on buses,
//! fast paths, vCPUs.

use std::sync::Arc;

use trapline_abi as abi;
use trapline_bus::{BusBuilder, ExitCounters, ExitProfile};
use trapline_devices::debug_exit::DebugExit;
use trapline_devices::power::BochsShutdown;
use trapline_devices::serial::{Uart, UART_LEN};
use trapline_devices::ucall::UcallPort;
use trapline_fastpath::{CoalescedRing, IrqFd};
use trapline_kvm::{HostKvm, Vm, VmConfig};

use super::boot;
use super::layout::MAX_MEM_MIB;
use super::platform::{self, PlatformOptions};
use crate::config::MachineConfig;
use crate::extension::ExtensionContext;
use crate::kvm_stats::{KvmStats, UcallKernelCounters};
use crate::{Machine, MachineError};

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
        if config.chr_testdev {
            return Err(MachineError::Config(
                "--device chr-testdev is arm64-only: the PC machine has no virtio console \
                 (x86 guests exit through isa-debug-exit)"
                    .into(),
            ));
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
        crate::footprint::marks::mark("vm created");
        let virtio_config = std::mem::take(&mut config.virtio);
        let virtio_devices = virtio_config.disks.len();
        if virtio_devices > 0 && config.acpi == crate::AcpiMode::Full {
            // The devices are announced where Linux looks for them
            // without firmware tables: its command line. (The
            // hardware-reduced machine declares them in its DSDT: with no
            // ISA IRQs, a command line's IRQ number is not their GSI.)
            let words = crate::virtio::cmdline(virtio_config.disks.len());
            config.append = match config.append.trim() {
                "" => words,
                a => format!("{a} {words}"),
            };
        }
        let boot = boot::load_image(&vm, &config)?;

        crate::footprint::marks::mark("image loaded");
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
        let mut platform = platform::build(
            &vm,
            &PlatformOptions {
                pci_testdev: config.pci_testdev,
                pc_testdev: config.pc_testdev,
                ecam_ro: config.ecam_ro,
                any_length: kvm.has_ioeventfd_any_length(),
                seccomp: config.seccomp != crate::SeccompMode::Off,
                acpi: config.acpi,
                virtio_devices,
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

        crate::footprint::marks::mark("platform built");
        let mut vcpus = Vec::with_capacity(config.vcpus as usize);
        for i in 0..config.vcpus {
            vcpus.push(vm.create_vcpu(i, (i == 0).then_some(&boot))?);
        }
        let tsc_khz = vcpus.first().and_then(|v| v.get_tsc_khz().ok());
        // Read for --stat's report and for the metrics lines' KVM counters.
        let kvm_stats = (profiles.is_some() || config.metrics.is_some()).then(|| {
            let stats = KvmStats::open(vm.fd(), &vcpus);
            ucall_kernel.set(stats.vcpu_fds());
            stats
        });
        let ring = if coalesced_ring {
            Some(Arc::new(CoalescedRing::map(&vcpus[0])?))
        } else {
            None
        };

        crate::footprint::marks::mark("vcpus created");
        let deferred = platform.rtc_timer.take().into_iter().collect();
        Ok(Machine {
            extension,
            _uart_irq: uart_irq,
            deferred,
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
}
