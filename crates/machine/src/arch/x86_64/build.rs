//! The PC's part in assembling a machine ([`crate::assemble`]): its order
//! (the devices before the vCPUs), the flags it refuses, its devices. The
//! image and the boot registers are [`super::boot`]'s.

use trapline_kvm::VcpuFd;

use super::interrupts;
use super::platform::{self, PlatformOptions};
use crate::assemble::{Devices, Parts};
use crate::config::MachineConfig;
use crate::MachineError;

/// The PC's devices go on the buses before its vCPUs exist.
pub(crate) const VCPUS_FIRST: bool = false;
/// The PC has a PIT (`--no-pit` takes it away).
pub(crate) const HAS_PIT: bool = true;

/// Refuse flags the PC has no meaning for, and what it cannot run.
pub(crate) fn refuse(config: &MachineConfig) -> Result<(), MachineError> {
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
    Ok(())
}

/// The PC's devices, its absent interrupt controllers, the virtio disks
/// and network card.
pub(crate) fn add_devices(parts: Parts<'_>) -> Result<Devices, MachineError> {
    let Parts {
        kvm,
        vm,
        config,
        pio,
        mmio,
        ucall,
    } = parts;
    let virtio_config = std::mem::take(&mut config.virtio);
    let (uart, uart_irq) = platform::add_isa_devices(vm, config, ucall, pio)?;
    let opts = PlatformOptions::new(kvm, config, virtio_config.device_count());
    let mut platform = platform::build(vm, &opts, uart_irq, pio, mmio)?;
    interrupts::install_absent(config.irqchip, config.pit, pio, mmio)?;
    let virtio = crate::virtio::VirtioSet::build(vm, virtio_config, mmio)?;
    Ok(Devices {
        deferred: platform.rtc_timer.take().into_iter().collect(),
        platform,
        virtio,
        uart,
    })
}

/// The guest's TSC frequency as KVM reports it (KVM_GET_TSC_KHZ).
pub(crate) fn counter_khz(vcpus: &[VcpuFd]) -> Option<u32> {
    vcpus.first().and_then(|v| v.get_tsc_khz().ok())
}
