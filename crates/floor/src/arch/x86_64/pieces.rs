//! What a raw x86 VM of the floor ladder has (see `vm` and `ladder`).

/// Which interrupt controller the VM has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Irqchip {
    /// None: KVM_RUN's bare minimum.
    None,
    /// KVM_CREATE_IRQCHIP: LAPICs, IOAPIC and PICs in the kernel.
    Kernel,
    /// KVM_CAP_SPLIT_IRQCHIP: LAPICs in the kernel, IOAPIC and PIC in user space.
    Split,
}

/// The pieces of trapline's VM configuration a raw VM may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pieces {
    /// trapline's KVM_SET_IDENTITY_MAP_ADDR and KVM_SET_TSS_ADDR (else the
    /// bare floor's TSS only).
    pub idmap_tss: bool,
    /// KVM_SET_CPUID2 with what KVM supports, APIC ID patched, as trapline does.
    pub cpuid: bool,
    /// The interrupt controller.
    pub irqchip: Irqchip,
    /// KVM_CREATE_PIT2 (needs the kernel irqchip).
    pub pit: bool,
    /// The other ioeventfds trapline's lab machine registers (datamatch
    /// port and page, MMIO wildcard or PIO wildcard, three doorbells).
    pub lab_ioeventfds: bool,
    /// This many more PIO and as many MMIO ioeventfds, on unused addresses.
    pub extra_ioeventfds: u32,
    /// trapline's two coalesced zones (an MMIO page and a port).
    pub coalesced: bool,
    /// trapline's memslots: 128 MiB of RAM and the read-only probe page.
    pub memslots: bool,
    /// An irqfd on trapline's lab GSI (needs the kernel irqchip).
    pub irqfd: bool,
}

impl Pieces {
    /// The bare floor: one small memslot, a TSS, nothing else.
    pub const BARE: Pieces = Pieces {
        idmap_tss: false,
        cpuid: false,
        irqchip: Irqchip::None,
        pit: false,
        lab_ioeventfds: false,
        extra_ioeventfds: 0,
        coalesced: false,
        memslots: false,
        irqfd: false,
    };
}
