//! The PC platform around the CPU: the ISA devices at their fixed ports
//! (COM1, isa-debug-exit, i8042, Bochs' shutdown port, the lab's ucall
//! port), PCI (host bridge, CF8/CFC and ECAM, optional pci-testdev),
//! fw_cfg, ACPI and MP tables, the PM block with its timer, the MC146818
//! RTC/CMOS with its interrupt thread, the LAPIC-page fallback and
//! (optionally) pc-testdev.

use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;

use kvm_ioctls::VmFd;
use trapline_abi as abi;
use trapline_bus::BusBuilder;
use trapline_devices::acpi::{AcpiBuilder, Com1, SleepRegisters, VirtioMmioDevice};
use trapline_devices::acpi_sleep::{
    SleepRegs, SLEEP_CONTROL_PORT, SLEEP_REGS_LEN, SLEEP_STATUS_PORT,
};
use trapline_devices::debug_exit::DebugExit;
use trapline_devices::fw_cfg::{FwCfg, FW_CFG_IO_BASE, FW_CFG_IO_LEN};
use trapline_devices::i8042::{I8042, I8042_COMMAND_PORT, I8042_DATA_PORT};
use trapline_devices::lapic_fallback::{LapicFallback, LAPIC_PAGE_BASE, LAPIC_PAGE_LEN};
use trapline_devices::pc_testdev::{IrqLine, PageFlusher, PcTestdev};
use trapline_devices::pci::{PciDevices, PciLayout};
use trapline_devices::pm_timer::{PmIo, PmPorts, PM_IO_BASE, PM_IO_LEN};
use trapline_devices::power::BochsShutdown;
use trapline_devices::rtc::timer::RtcTimer;
use trapline_devices::rtc::{CmosMemory, Rtc, RTC_PORT, RTC_PORT_LEN};
use trapline_devices::serial::Uart;
use trapline_devices::serial::UART_LEN;
use trapline_devices::ucall::UcallPort;
use trapline_fastpath::IrqFd;
use trapline_kvm::{HostKvm, Vm};
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend};

use super::layout::{ECAM_BASE, VIRTIO_GSIS, VIRTIO_MMIO_STRIDE};
use crate::config::MachineConfig;
use crate::deferred::{DeferredStart, Helper};
use crate::AcpiMode;
use crate::MachineError;

/// pc-testdev's "flush page": make KVM re-fault the page by taking the host
/// mapping away and giving it back.
struct MprotectFlusher {
    memory: vm_memory::GuestMemoryMmap,
}

impl PageFlusher for MprotectFlusher {
    fn flush(&self, gpa: u64) {
        let Ok(host) = self.memory.get_host_address(GuestAddress(gpa & !0xfff)) else {
            return;
        };
        // SAFETY: `host` is the page-aligned start of a page inside guest
        // RAM that `memory` maps; the protection is restored at once, and
        // only the guest (stopped in this exit) can touch the page meanwhile.
        unsafe {
            libc::mprotect(host.cast(), 4096, libc::PROT_NONE);
            libc::mprotect(host.cast(), 4096, libc::PROT_READ | libc::PROT_WRITE);
        }
    }
}

/// pc-testdev's ISA IRQ ports and virtio's `--virtio-irq line` drive
/// KVM_IRQ_LINE.
pub(crate) struct KvmIrqLines {
    pub(crate) vm: Arc<VmFd>,
}

impl IrqLine for KvmIrqLines {
    fn set_irq(&self, line: u32, level: bool) {
        // Fails only without an in-kernel irqchip; the guest then simply
        // sees no interrupt.
        let _ = self.vm.set_irq_line(line, level);
    }
}

/// What the platform needs from the machine configuration.
pub(crate) struct PlatformOptions {
    pub pci_testdev: bool,
    pub pc_testdev: bool,
    pub ecam_ro: bool,
    pub any_length: bool,
    /// Install the helper seccomp filter on the RTC's timer thread.
    pub seccomp: bool,
    /// The ACPI hardware model (and so whether the PM block or the
    /// hardware-reduced sleep registers are mapped).
    pub acpi: AcpiMode,
    /// How many virtio-mmio transports the machine has (the
    /// hardware-reduced DSDT declares them).
    pub virtio_devices: usize,
}

impl PlatformOptions {
    /// The options `config` asks for, on `kvm`, with `virtio_devices`
    /// transports.
    pub(crate) fn new(kvm: &HostKvm, config: &MachineConfig, virtio_devices: usize) -> Self {
        PlatformOptions {
            pci_testdev: config.pci_testdev,
            pc_testdev: config.pc_testdev,
            ecam_ro: config.ecam_ro,
            any_length: kvm.has_ioeventfd_any_length(),
            seccomp: config.seccomp != crate::SeccompMode::Off,
            acpi: config.acpi,
            virtio_devices,
        }
    }
}

/// What the machine keeps of the platform after building it.
pub(crate) struct Platform {
    pub pci: PciDevices,
    /// COM1's interrupt line, held so that its irqfd stays registered.
    pub _uart_irq: Option<IrqFd>,
    /// The PM block (S3: wake enables and status).
    pub pm: Arc<PmIo>,
    /// The RTC (S3: the shutdown status byte).
    pub rtc: Arc<Rtc>,
    /// One message per RTC alarm with AIE set: the S3 wake source.
    pub rtc_alarms: Receiver<()>,
    /// Starts the RTC's interrupt thread (see [`crate::deferred`]).
    pub rtc_timer: Option<DeferredStart>,
    /// Guest-physical address of the FACS (the waking vector is at +12).
    pub facs: u64,
}

/// COM1's ISA IRQ (and GSI: the IOAPIC's pins 0-15 are the ISA IRQs).
pub const COM1_GSI: u32 = 4;

/// The ISA devices at their fixed ports: COM1 (interrupting through the
/// in-kernel irqchip when there is one), isa-debug-exit, the i8042 Linux
/// reboots through, Bochs' shutdown port, and the lab's ucall port. Also
/// returns COM1's irqfd, which must stay registered.
pub(crate) fn add_isa_devices(
    vm: &Vm,
    config: &mut MachineConfig,
    ucall: UcallPort,
    pio: &mut BusBuilder,
) -> Result<(Arc<Uart>, Option<IrqFd>), MachineError> {
    // COM1's IRQ 4 through the in-kernel irqchip: Linux's 8250 driver is
    // interrupt-driven (THR empty, data received).
    let uart_irq = if config.irqchip.has_ioapic_and_pic() {
        Some(IrqFd::register(vm.fd().clone(), COM1_GSI)?)
    } else {
        None
    };
    let uart = Arc::new(match &uart_irq {
        Some(irq) => Uart::with_irq(
            config.take_serial(),
            irq.eventfd()
                .try_clone()
                .map_err(|source| MachineError::Host {
                    what: "eventfd",
                    source,
                })?,
        ),
        None => Uart::new(config.take_serial()),
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
        ("i8042-data", I8042_DATA_PORT),
        ("i8042", I8042_COMMAND_PORT),
    ] {
        pio.insert(name, port.into(), 1, Arc::new(I8042))?;
    }
    pio.insert(
        "bochs-shutdown",
        abi::BOCHS_SHUTDOWN_PORT.into(),
        1,
        Arc::new(BochsShutdown::default()),
    )?;
    pio.insert("ucall", abi::UCALL_PORT.into(), 4, Arc::new(ucall))?;
    Ok((uart, uart_irq))
}

/// Build the platform devices, map them on the buses and write the ACPI
/// and MP tables into guest memory.
pub(crate) fn build(
    vm: &Vm,
    opts: &PlatformOptions,
    uart_irq: Option<IrqFd>,
    pio: &mut BusBuilder,
    mmio: &mut BusBuilder,
) -> Result<Platform, MachineError> {
    let cfg = vm.config();
    let pci = crate::pci::build(
        vm,
        PciLayout {
            ecam_base: ECAM_BASE,
            ..PciLayout::default()
        },
        &crate::pci::PciOptions {
            pci_testdev: opts.pci_testdev,
            ecam_ro: opts.ecam_ro,
            any_length: opts.any_length,
        },
        pio,
        mmio,
    )?;
    let fw_cfg = FwCfg::builder()
        .ram(cfg.mem_bytes)
        .cpus(cfg.vcpus as u16)
        .build();
    pio.insert(
        "fw_cfg",
        FW_CFG_IO_BASE.into(),
        FW_CFG_IO_LEN,
        Arc::new(fw_cfg),
    )?;
    let pm = add_pm(opts.acpi, pio)?;
    let (rtc, rtc_alarms, rtc_timer) = add_rtc(vm, opts.seccomp, pio)?;
    if cfg.irqchip.has_lapic() {
        // Without LAPICs the page is an absent device (crate::interrupts).
        mmio.insert(
            "lapic-fallback",
            LAPIC_PAGE_BASE,
            LAPIC_PAGE_LEN,
            Arc::new(LapicFallback),
        )?;
    }
    if opts.pc_testdev {
        add_pc_testdev(vm, pio, mmio)?;
    }
    let tables_end = write_acpi_tables(vm, opts, &pci)?;
    write_mptable(vm, cfg.vcpus, tables_end.end)?;
    Ok(Platform {
        pci,
        _uart_irq: uart_irq,
        pm,
        rtc,
        rtc_alarms,
        rtc_timer: Some(rtc_timer),
        facs: tables_end.facs,
    })
}

/// The PM block: it exists either way (S3's wake state lives in it) but
/// is on the bus only where the tables announce it; the hardware-reduced
/// machine has its sleep registers instead.
fn add_pm(acpi: AcpiMode, pio: &mut BusBuilder) -> Result<Arc<PmIo>, MachineError> {
    let pm = Arc::new(PmIo::new());
    match acpi {
        AcpiMode::Full => pio.insert("acpi-pm", PM_IO_BASE.into(), PM_IO_LEN, pm.clone())?,
        AcpiMode::Reduced => pio.insert(
            "acpi-sleep",
            SLEEP_CONTROL_PORT.into(),
            SLEEP_REGS_LEN,
            Arc::new(SleepRegs),
        )?,
    }
    Ok(pm)
}

/// The MC146818 RTC/CMOS, the channel its alarms arrive on (S3's wake
/// source), and how to start its interrupt thread (under the helper
/// threads' seccomp filter when `seccomp`).
fn add_rtc(
    vm: &Vm,
    seccomp: bool,
    pio: &mut BusBuilder,
) -> Result<(Arc<Rtc>, Receiver<()>, DeferredStart), MachineError> {
    let cfg = vm.config();
    let rtc = Arc::new(Rtc::new(CmosMemory {
        ram_below_4g: cfg.mem_bytes,
        ram_above_4g: 0,
        cpus: cfg.vcpus,
    }));
    pio.insert("rtc", RTC_PORT.into(), RTC_PORT_LEN, rtc.clone())?;
    let (alarm_tx, rtc_alarms) = channel();
    let irq_lines = Arc::new(KvmIrqLines {
        vm: vm.fd().clone(),
    });
    let timer_rtc = rtc.clone();
    let rtc_timer: DeferredStart = Box::new(move || {
        let on_start = crate::deferred::on_helper_start(seccomp, "RTC timer")?;
        let timer = RtcTimer::spawn(
            timer_rtc,
            irq_lines,
            Box::new(move || {
                // The receiver is gone only when the machine is being dropped.
                let _ = alarm_tx.send(());
            }),
            on_start,
        )
        .map_err(|source| MachineError::Host {
            what: "spawning the RTC timer thread",
            source,
        })?;
        Ok(Box::new(timer) as Helper)
    });
    Ok((rtc, rtc_alarms, rtc_timer))
}

/// pc-testdev's ports and pages.
fn add_pc_testdev(
    vm: &Vm,
    pio: &mut BusBuilder,
    mmio: &mut BusBuilder,
) -> Result<(), MachineError> {
    let dev = PcTestdev::new(
        Arc::new(MprotectFlusher {
            memory: vm.memory().clone(),
        }),
        Arc::new(KvmIrqLines {
            vm: vm.fd().clone(),
        }),
    );
    for p in dev.pio_mappings() {
        pio.insert(p.name, p.base, p.len, p.device)?;
    }
    for p in dev.mmio_mappings() {
        mmio.insert(p.name, p.base, p.len, p.device)?;
    }
    Ok(())
}

/// Where the ACPI tables ended up.
struct TablesEnd {
    /// The first byte after them.
    end: u64,
    /// Guest-physical address of the FACS (0: none).
    facs: u64,
}

/// Build the ACPI tables for the machine `opts` describes and write the
/// bytes they use into guest memory.
fn write_acpi_tables(
    vm: &Vm,
    opts: &PlatformOptions,
    pci: &PciDevices,
) -> Result<TablesEnd, MachineError> {
    let acpi = AcpiBuilder::new()
        .cpus(vm.config().vcpus)
        .ecam(ECAM_BASE, pci.layout.ecam_buses);
    let acpi = match opts.acpi {
        AcpiMode::Full => acpi.pm_ports(PmPorts::PIIX4),
        AcpiMode::Reduced => acpi.reduced(
            SleepRegisters {
                control: SLEEP_CONTROL_PORT,
                status: SLEEP_STATUS_PORT,
            },
            Com1 {
                port: trapline_abi::COM1_PORT,
                ports: UART_LEN as u8,
                gsi: COM1_GSI,
            },
        ),
    }
    .virtio_mmio(
        // More devices than GSIs is refused when the devices are built.
        VIRTIO_GSIS
            .iter()
            .take(opts.virtio_devices)
            .enumerate()
            .map(|(i, &gsi)| VirtioMmioDevice {
                // The window is below 4 GiB (abi's layout asserts).
                base: crate::virtio::device_base(i) as u32,
                len: VIRTIO_MMIO_STRIDE as u32,
                gsi,
            })
            .collect(),
    );
    let acpi = acpi
        .build()
        .map_err(|e| MachineError::Config(format!("ACPI tables: {e}")))?;
    // Only the bytes the tables use: the rest of the 128 KiB area is fresh,
    // zero guest memory, and writing it would fault in 32 pages for nothing.
    let used = acpi
        .tables
        .iter()
        .map(|t| (t.gpa + t.len as u64).saturating_sub(acpi.base) as usize)
        .chain(std::iter::once((acpi.rsdp - acpi.base) as usize + 36))
        .max()
        .unwrap_or(acpi.bytes.len())
        .min(acpi.bytes.len());
    vm.memory()
        .write_slice(&acpi.bytes[..used], GuestAddress(acpi.base))
        .map_err(|e| {
            MachineError::Config(format!(
                "ACPI tables do not fit in guest RAM ({e}): use --mem 1 or more"
            ))
        })?;
    let facs = acpi
        .tables
        .iter()
        .find(|t| &t.signature == b"FACS")
        .map_or(0, |t| t.gpa);
    Ok(TablesEnd {
        end: acpi.base + used as u64,
        facs,
    })
}

/// Write the MP table (see [`trapline_devices::mptable`]): the floating
/// pointer at the start of the EBDA, the first place Linux's search
/// reaches after the first KiB, and the configuration table right after it,
/// or, when many vCPUs make it longer than the EBDA, at the end of the
/// firmware area (above the ACPI tables, which end at `acpi_end`).
fn write_mptable(vm: &Vm, cpus: u32, acpi_end: u64) -> Result<(), MachineError> {
    use trapline_devices::mptable::{self, FLOATING_LEN};
    use trapline_loader::layout::{EBDA_START, HIGH_MEMORY_START, LOW_RAM_END};
    let len = mptable::config_len(cpus) as u64;
    let in_ebda = EBDA_START + FLOATING_LEN as u64;
    let config_at = if in_ebda + len <= LOW_RAM_END {
        in_ebda
    } else {
        let at = (HIGH_MEMORY_START - len) & !0xF;
        if at < acpi_end {
            return Err(MachineError::Config(format!(
                "the MP table for {cpus} vCPUs does not fit beside the ACPI tables"
            )));
        }
        at
    };
    let (floating, config) =
        mptable::build(cpus, config_at).map_err(|e| MachineError::Config(e.to_string()))?;
    for (bytes, at) in [(&floating[..], EBDA_START), (&config[..], config_at)] {
        vm.memory()
            .write_slice(bytes, GuestAddress(at))
            .map_err(|e| {
                MachineError::Config(format!(
                    "the MP table does not fit in guest RAM ({e}): use --mem 1 or more"
                ))
            })?;
    }
    Ok(())
}
