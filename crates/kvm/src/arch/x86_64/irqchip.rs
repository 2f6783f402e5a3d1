//! Creating the x86 in-kernel interrupt controllers and the PIT.

use kvm_bindings::{kvm_enable_cap, kvm_pit_config, KVM_CAP_SPLIT_IRQCHIP, KVM_PIT_SPEAKER_DUMMY};
use kvm_ioctls::VmFd;

use crate::{Irqchip, KvmError};

/// IOAPIC routes the split irqchip reserves (a PC's 24 pins).
const SPLIT_IRQCHIP_ROUTES: u64 = 24;

/// Create `irqchip` and, if `pit`, the PIT, on a VM that has no vCPU yet.
pub fn create(fd: &VmFd, irqchip: Irqchip, pit: bool) -> Result<(), KvmError> {
    if pit && !irqchip.has_ioapic_and_pic() {
        return Err(KvmError::Config(format!(
            "the in-kernel PIT needs the in-kernel PIC: --irqchip {} runs without a PIT \
             (add --no-pit, or use --irqchip kernel)",
            irqchip.name()
        )));
    }
    match irqchip {
        Irqchip::Kernel => fd
            .create_irq_chip()
            .map_err(KvmError::ioctl("KVM_CREATE_IRQCHIP"))?,
        Irqchip::Split => {
            let cap = kvm_enable_cap {
                cap: KVM_CAP_SPLIT_IRQCHIP,
                args: [SPLIT_IRQCHIP_ROUTES, 0, 0, 0],
                ..Default::default()
            };
            fd.enable_cap(&cap)
                .map_err(KvmError::ioctl("KVM_ENABLE_CAP(KVM_CAP_SPLIT_IRQCHIP)"))?;
        }
        Irqchip::None => {}
    }
    if pit {
        let cfg = kvm_pit_config {
            flags: KVM_PIT_SPEAKER_DUMMY,
            ..Default::default()
        };
        fd.create_pit2(cfg)
            .map_err(KvmError::ioctl("KVM_CREATE_PIT2"))?;
    }
    Ok(())
}
