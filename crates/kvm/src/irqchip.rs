//! The VM's interrupt controllers: KVM's full in-kernel irqchip, the split
//! irqchip (LAPICs in the kernel, no IOAPIC or PIC), or none; and the
//! in-kernel PIT, which KVM only gives a VM with the full irqchip. The
//! choice is a plain value on both architectures (so the configuration and
//! the command line are the same code); only x86 creates anything from it
//! (`arch::x86_64::irqchip::create`), and arm64's machine accepts only
//! [`Irqchip::Kernel`] (its vGICv3).

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
