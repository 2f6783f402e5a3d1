//! What `virt` keeps of its devices, and its interrupt lines: a device's
//! SPI through KVM_IRQ_LINE.

use std::sync::Arc;

use kvm_ioctls::VmFd;
use trapline_abi as abi;
use trapline_bus::{BusBuilder, ExitKind};
use trapline_devices::debug_exit::DebugExit;
use trapline_devices::pc_testdev::IrqLine;
use trapline_devices::pl011::Pl011;
use trapline_devices::pl031::{Pl031, Pl031Timer};
use trapline_devices::ucall::UcallPort;
use trapline_devices::virtio::{ChrTestdev, EmptyTransport, VirtioInterrupt};
use trapline_kvm::Vm;

use crate::deferred::DeferredStart;
use crate::MachineError;

/// Raises SPIs on the vGIC (`line` is the SPI number, as a device tree
/// cell carries it).
pub(crate) struct KvmIrqLines {
    pub(crate) vm: Arc<VmFd>,
}

impl IrqLine for KvmIrqLines {
    fn set_irq(&self, line: u32, level: bool) {
        // Fails only for an SPI outside NR_IRQS, which no device has.
        let _ = self
            .vm
            .set_irq_line(trapline_kvm::gic::spi_irq_line(line), level);
    }
}

/// What the machine keeps of the platform after building it.
pub(crate) struct Platform {
    /// QEMU's gpex host bridge and its functions.
    pub pci: trapline_devices::pci::PciDevices,
}

/// The PL011 console, interrupting on its SPI.
pub(crate) fn add_uart(
    vm: &Vm,
    serial: trapline_devices::serial::SerialOutput,
    mmio: &mut BusBuilder,
) -> Result<Arc<Pl011>, MachineError> {
    let uart = Arc::new(Pl011::with_irq(
        serial,
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
    Ok(uart)
}

/// trapline's ucall and debug-exit pages.
pub(crate) fn add_trapline_pages(
    ucall: UcallPort,
    mmio: &mut BusBuilder,
) -> Result<(), MachineError> {
    let ucall = ucall.with_key(ExitKind::MmioWrite, abi::VIRT_UCALL_MMIO);
    mmio.insert("ucall", abi::VIRT_UCALL_MMIO, 4, Arc::new(ucall))?;
    mmio.insert(
        "debug-exit",
        abi::VIRT_DEBUG_EXIT_MMIO,
        4,
        Arc::new(DebugExit),
    )?;
    Ok(())
}

/// The PL031 at its window, and the thread that fires its match; the
/// thread runs under the helper threads' seccomp filter when `seccomp`.
pub(crate) fn add_rtc(
    vm: &Vm,
    mmio: &mut BusBuilder,
    seccomp: bool,
) -> Result<DeferredStart, MachineError> {
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
        let on_start = crate::deferred::on_helper_start(seccomp, "PL031 timer")?;
        let timer = Pl031Timer::spawn(rtc, on_start).map_err(|source| MachineError::Host {
            what: "spawning the PL031 timer thread",
            source,
        })?;
        Ok(Box::new(timer) as crate::deferred::Helper)
    }))
}

/// chr-testdev on its transport (`--device chr-testdev`), interrupting
/// through KVM_IRQ_LINE on the transport's SPI.
pub(crate) fn add_chr_testdev(vm: &Vm, mmio: &mut BusBuilder) -> Result<(), MachineError> {
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

/// QEMU's 32 virtio-mmio transports: the disks take the first,
/// chr-testdev (when there) the last, the rest are empty.
pub(crate) fn add_empty_transports(
    disks: usize,
    chr_testdev: bool,
    mmio: &mut BusBuilder,
) -> Result<(), MachineError> {
    for n in 0..abi::VIRT_VIRTIO_MMIO_COUNT {
        let (window, _) = abi::virt_virtio_mmio(n).expect("n < VIRT_VIRTIO_MMIO_COUNT");
        let empty = n as usize >= disks && !(chr_testdev && n == abi::VIRT_CHR_TESTDEV_TRANSPORT);
        if empty {
            mmio.insert(
                "virtio-mmio",
                window.base,
                window.len,
                Arc::new(EmptyTransport),
            )?;
        }
    }
    Ok(())
}

/// Every transport, as the device tree lists them.
pub(crate) fn transports() -> Vec<trapline_fdt::MmioDevice> {
    (0..abi::VIRT_VIRTIO_MMIO_COUNT)
        .map(|n| {
            let (window, spi) = abi::virt_virtio_mmio(n).expect("n < VIRT_VIRTIO_MMIO_COUNT");
            trapline_fdt::MmioDevice {
                window: trapline_fdt::Window::new(window.base, window.len),
                spi,
            }
        })
        .collect()
}
