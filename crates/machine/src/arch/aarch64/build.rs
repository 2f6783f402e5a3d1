//! `virt`'s part in assembling a machine ([`crate::assemble`]): its order
//! (every vCPU, then the vGIC, before any device: KVM's order; irqfds only
//! after), the flags it refuses, its devices. The image, the vCPUs and the
//! device tree are [`super::boot`]'s.

use trapline_kvm::VcpuFd;

use super::platform::{self, Platform};
use crate::assemble::{Devices, Parts};
use crate::config::MachineConfig;
use crate::MachineError;

/// `virt`'s vCPUs (and with them the vGIC) exist before its devices.
pub(crate) const VCPUS_FIRST: bool = true;
/// `virt` has no PIT.
pub(crate) const HAS_PIT: bool = false;

/// Flags of `MachineConfig` that have no meaning on `virt`.
pub(crate) fn refuse(config: &MachineConfig) -> Result<(), MachineError> {
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

/// The PL011, trapline's pages, the PL031, the virtio transports,
/// chr-testdev, and QEMU's gpex host bridge (always there, as on QEMU).
pub(crate) fn add_devices(parts: Parts<'_>) -> Result<Devices, MachineError> {
    let Parts {
        kvm,
        vm,
        config,
        mmio,
        pio,
        ucall,
    } = parts;
    let uart = platform::add_uart(vm, config.take_serial(), mmio)?;
    platform::add_trapline_pages(ucall, mmio)?;
    let rtc_timer = platform::add_rtc(vm, mmio, config.seccomp != crate::SeccompMode::Off)?;
    let virtio = crate::virtio::VirtioSet::build(vm, std::mem::take(&mut config.virtio), mmio)?;
    if config.chr_testdev {
        platform::add_chr_testdev(vm, mmio)?;
    }
    let options = crate::pci::PciOptions {
        pci_testdev: config.pci_testdev,
        ecam_ro: config.ecam_ro,
        any_length: kvm.has_ioeventfd_any_length(),
    };
    let layout = trapline_devices::pci::PciLayout::virt();
    let pci = crate::pci::build(vm, layout, &options, pio, mmio)?;
    platform::add_empty_transports(virtio.devices.len(), config.chr_testdev, mmio)?;
    Ok(Devices {
        platform: Platform { pci },
        virtio,
        uart,
        deferred: vec![rtc_timer],
    })
}

/// The arm64 generic timer's frequency (CNTFRQ_EL0) in kHz: what
/// `trapline_bus::cycles()` (CNTVCT_EL0) counts in.
pub(crate) fn counter_khz(_vcpus: &[VcpuFd]) -> Option<u32> {
    let hz: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 on Linux; reading it has no
    // side effects.
    unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) hz, options(nomem, nostack)) };
    u32::try_from(hz / 1000).ok().filter(|&k| k > 0)
}
