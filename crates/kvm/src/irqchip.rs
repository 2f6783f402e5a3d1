//! The VM's interrupt controllers: KVM's full in-kernel irqchip, the split
//! irqchip (LAPICs in the kernel, no IOAPIC or PIC), or none; and the
//! in-kernel PIT, which KVM only gives a VM with the full irqchip.

use kvm_bindings::{kvm_enable_cap, kvm_pit_config, KVM_CAP_SPLIT_IRQCHIP, KVM_PIT_SPEAKER_DUMMY};
use kvm_ioctls::VmFd;

use crate::KvmError;

/// Which interrupt controllers KVM emulates for the VM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Irqchip {
    /// KVM_CREATE_IRQCHIP: LAPICs, IOAPIC and both PICs in the kernel.
    #[default]
    Kernel,
    /// KVM_CAP_SPLIT_IRQCHIP: LAPICs in the kernel; the IOAPIC and PICs
    /// would be user space's, and trapline has none.
    Split,
    /// No interrupt controller at all: HLT exits to user space.
    None,
}

impl Irqchip {
    /// Every mode, in the order `--irqchip` lists them.
    pub const ALL: [Irqchip; 3] = [Irqchip::Kernel, Irqchip::Split, Irqchip::None];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Irqchip::Kernel => "kernel",
            Irqchip::Split => "split",
            Irqchip::None => "none",
        }
    }

    /// Whether the vCPUs have in-kernel LAPICs.
    pub fn has_lapic(self) -> bool {
        self != Irqchip::None
    }

    /// Whether the IOAPIC and PICs are in the kernel (GSIs, KVM_IRQ_LINE,
    /// irqfds on IOAPIC pins, the PIT).
    pub fn has_ioapic_and_pic(self) -> bool {
        self == Irqchip::Kernel
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_full_irqchip_has_a_pic_and_ioapic() {
        assert!(Irqchip::Kernel.has_ioapic_and_pic() && Irqchip::Kernel.has_lapic());
        assert!(!Irqchip::Split.has_ioapic_and_pic() && Irqchip::Split.has_lapic());
        assert!(!Irqchip::None.has_ioapic_and_pic() && !Irqchip::None.has_lapic());
        let names: Vec<&str> = Irqchip::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names, ["kernel", "split", "none"]);
    }
}
