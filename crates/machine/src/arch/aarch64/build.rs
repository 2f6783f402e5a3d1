//! Building the `virt` machine: RAM and image, every vCPU then the vGIC,
//! the device tree with the vCPUs' MPIDRs, the PL011, trapline's ucall and
//! debug-exit pages, fast paths.

use std::sync::Arc;

use trapline_abi as abi;
use trapline_bus::{BusBuilder, ExitCounters, ExitKind, ExitProfile};
use trapline_devices::debug_exit::DebugExit;
use trapline_devices::pl011::Pl011;
use trapline_devices::pl031::{Pl031, Pl031Timer};
use trapline_devices::ucall::UcallPort;
use trapline_devices::virtio::{ChrTestdev, EmptyTransport, VirtioInterrupt};
use trapline_fastpath::CoalescedRing;
use trapline_kvm::{BootRegs, HostKvm, Vm, VmConfig};

use super::layout::MAX_MEM_MIB;
use super::platform::KvmIrqLines;
use crate::config::MachineConfig;
use crate::deferred::DeferredStart;
use crate::extension::ExtensionContext;
use crate::kvm_stats::{KvmStats, UcallKernelCounters};
use crate::{Machine, MachineError};

/// The arm64 generic timer's frequency (CNTFRQ_EL0) in kHz: what
/// `trapline_bus::cycles()` (CNTVCT_EL0) counts in.
fn counter_khz() -> Option<u32> {
    let hz: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 on Linux; reading it has no
    // side effects.
    unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) hz, options(nomem, nostack)) };
    u32::try_from(hz / 1000).ok().filter(|&k| k > 0)
}

/// Flags of `MachineConfig` that have no meaning on `virt`.
fn refuse_x86_only(config: &MachineConfig) -> Result<(), MachineError> {
    let x86_only = [
        (config.pc_testdev, "--device pc-testdev"),
        (
            config.irqchip != trapline_kvm::Irqchip::Kernel,
            "--irqchip split|none",
        ),
    ];
    match x86_only.iter().find(|(set, _)| *set) {
        Some((_, flag)) => Err(MachineError::Config(format!(
            "{flag} is x86-only: the arm64 virt machine has no such device or mode"
        ))),
        None => Ok(()),
    }
}

/// The PL031 at its window, and the thread that fires its match; the
/// thread runs under the helper threads' seccomp filter when `seccomp`.
fn add_rtc(vm: &Vm, mmio: &mut BusBuilder, seccomp: bool) -> Result<DeferredStart, MachineError> {
    let rtc = Arc::new(Pl031::new(
        Arc::new(KvmIrqLines {
            vm: vm.fd().clone(),
        }),
        abi::VIRT_PL031_SPI,
    ));
    mmio.insert(
        "pl031",
        abi::VIRT_PL031_BASE,
        abi::VIRT_PL031_LEN,
        rtc.clone(),
    )?;
    // Started once vCPU 0 is in the guest (crate::deferred).
    Ok(Box::new(move || {
        let filter = if seccomp {
            Some(trapline_seccomp::filter(
                trapline_seccomp::ThreadKind::Helper,
            )?)
        } else {
            None
        };
        let timer = Pl031Timer::spawn(
            rtc,
            Box::new(move || {
                if let Some(f) = filter {
                    if let Err(e) =
                        trapline_seccomp::install_program(trapline_seccomp::ThreadKind::Helper, &f)
                    {
                        eprintln!(
                            "trapline: warning: PL031 timer thread runs without seccomp: {}",
                            crate::words::clean(&e.to_string())
                        );
                    }
                }
            }),
        )
        .map_err(|source| MachineError::Host {
            what: "spawning the PL031 timer thread",
            source,
        })?;
        Ok(Box::new(timer) as crate::deferred::Helper)
    }))
}

/// chr-testdev on its transport (`--device chr-testdev`), interrupting
/// through KVM_IRQ_LINE on the transport's SPI.
fn add_chr_testdev(vm: &Vm, mmio: &mut BusBuilder) -> Result<(), MachineError> {
    let (window, spi) = abi::virt_virtio_mmio(abi::VIRT_CHR_TESTDEV_TRANSPORT)
        .expect("VIRT_CHR_TESTDEV_TRANSPORT < VIRT_VIRTIO_MMIO_COUNT");
    let interrupt = VirtioInterrupt::line(
        Arc::new(KvmIrqLines {
            vm: vm.fd().clone(),
        }),
        spi,
    );
    let dev = ChrTestdev::new(vm.memory().clone(), Arc::new(interrupt));
    mmio.insert("chr-testdev", window.base, window.len, Arc::new(dev))?;
    Ok(())
}

impl Machine {
    /// Build a `virt` machine on `kvm` from `config`.
    pub fn build(kvm: &HostKvm, mut config: MachineConfig) -> Result<Machine, MachineError> {
        if config.mem_mib == 0 || config.mem_mib > MAX_MEM_MIB {
            return Err(MachineError::Config(format!(
                "--mem {}: guest RAM must be 1 to {MAX_MEM_MIB} MiB",
                config.mem_mib
            )));
        }
        refuse_x86_only(&config)?;
        let mem_bytes = config.mem_mib << 20;
        let vm = Vm::new(
            kvm,
            VmConfig {
                mem_bytes,
                vcpus: config.vcpus,
                irqchip: config.irqchip,
                pit: false,
                cpu: config.cpu.clone(),
            },
        )?;
        crate::footprint::marks::mark("vm created");
        let plan = trapline_loader::arch::aarch64::load(
            vm.memory(),
            &trapline_loader::arch::aarch64::LoadRequest {
                image: &config.kernel,
                initrd: config.initrd.as_deref(),
                fresh_memory: true,
            },
        )?;

        crate::footprint::marks::mark("image loaded");
        let counters: Arc<[Arc<ExitCounters>]> = (0..config.vcpus)
            .map(|_| Arc::new(ExitCounters::default()))
            .collect::<Vec<_>>()
            .into();
        let profiles: Option<Vec<Arc<ExitProfile>>> = (config.profile || config.metrics.is_some())
            .then(|| {
                (0..config.vcpus)
                    .map(|_| Arc::new(ExitProfile::new()))
                    .collect()
            });

        // Every vCPU, then the vGIC (KVM's order); irqfds only after this.
        let vcpus = vm.create_vcpus()?;
        let mpidrs = vcpus
            .iter()
            .map(|v| vm.mpidr(v))
            .collect::<Result<Vec<_>, _>>()?;
        crate::footprint::marks::mark("vcpus created");

        let mut pio = BusBuilder::new();
        let mut mmio = BusBuilder::new();
        let uart = Arc::new(Pl011::with_irq(
            config.serial,
            Arc::new(KvmIrqLines {
                vm: vm.fd().clone(),
            }),
            abi::VIRT_PL011_SPI,
        ));
        mmio.insert(
            "pl011",
            abi::VIRT_PL011_BASE,
            abi::VIRT_PL011_LEN,
            uart.clone(),
        )?;
        let ucall_kernel = Arc::new(UcallKernelCounters::default());
        let mut ucall = UcallPort::new(vm.memory().clone(), counters.clone(), config.ucall_sink)
            .with_profiles(profiles.clone().unwrap_or_default())
            .with_key(ExitKind::MmioWrite, abi::VIRT_UCALL_MMIO);
        if profiles.is_some() {
            ucall = ucall.with_kernel_counters(ucall_kernel.clone());
        }
        mmio.insert("ucall", abi::VIRT_UCALL_MMIO, 4, Arc::new(ucall))?;
        mmio.insert(
            "debug-exit",
            abi::VIRT_DEBUG_EXIT_MMIO,
            4,
            Arc::new(DebugExit),
        )?;
        let rtc_timer = add_rtc(&vm, &mut mmio, config.seccomp != crate::SeccompMode::Off)?;
        let virtio =
            crate::virtio::VirtioSet::build(&vm, std::mem::take(&mut config.virtio), &mut mmio)?;
        // QEMU's 32 transports: the disks take the first, chr-testdev the
        // last, the rest are empty.
        if config.chr_testdev {
            add_chr_testdev(&vm, &mut mmio)?;
        }
        // QEMU's gpex host bridge: always there, as on QEMU's `virt`.
        let pci = crate::pci::build(
            &vm,
            trapline_devices::pci::PciLayout::virt(),
            &crate::pci::PciOptions {
                pci_testdev: config.pci_testdev,
                ecam_ro: config.ecam_ro,
                any_length: kvm.has_ioeventfd_any_length(),
            },
            &mut pio,
            &mut mmio,
        )?;
        let mut transports = Vec::new();
        for n in 0..abi::VIRT_VIRTIO_MMIO_COUNT {
            let (window, spi) = abi::virt_virtio_mmio(n).expect("n < VIRT_VIRTIO_MMIO_COUNT");
            let empty = n as usize >= virtio.devices.len()
                && !(config.chr_testdev && n == abi::VIRT_CHR_TESTDEV_TRANSPORT);
            if empty {
                mmio.insert(
                    "virtio-mmio",
                    window.base,
                    window.len,
                    Arc::new(EmptyTransport),
                )?;
            }
            transports.push(trapline_fdt::MmioDevice {
                window: trapline_fdt::Window::new(window.base, window.len),
                spi,
            });
        }
        let mut ext = ExtensionContext::new(kvm, &vm, &mut pio, &mut mmio);
        let extension = match config.extension.take() {
            Some(e) => Some(e.install(&mut ext)?),
            None => None,
        };
        let (coalesced_ring, fast_port) = (ext.coalesced_ring, ext.fast_port);

        // The device tree, where the loader left room for it (above the
        // image and the initrd).
        let mut dt = trapline_fdt::VirtMachine::qemu_virt(mem_bytes, mpidrs);
        dt.virtio = transports;
        dt.bootargs = config.append.trim().to_string();
        dt.initrd = plan.initrd.as_ref().map(|r| trapline_fdt::Initrd {
            start: r.start,
            end: r.end,
        });
        let blob = trapline_fdt::write(&dt)
            .map_err(|e| MachineError::Config(format!("device tree: {e}")))?;
        plan.write_dtb(vm.memory(), &blob)?;
        vm.set_boot_regs(
            &vcpus[0],
            BootRegs {
                pc: plan.entry,
                dtb: plan.dtb,
            },
        )?;

        // Devices, buses and the device tree: on `virt` they come after the
        // vCPUs and the vGIC (KVM wants the vCPUs before the vGIC), so this
        // mark follows "vcpus created".
        crate::footprint::marks::mark("platform built");
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
        Ok(Machine {
            extension,
            deferred: vec![rtc_timer],
            virtio,
            pci,
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
            tsc_khz: counter_khz(),
            uart,
            console_input: config.console_input,
            vm,
        })
    }
}
