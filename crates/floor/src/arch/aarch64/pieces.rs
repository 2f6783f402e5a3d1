//! What a raw arm64 VM of the floor ladder has (see `vm` and `ladder`).

/// The pieces of trapline's `virt` machine a raw VM may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pieces {
    /// KVM's vGICv3 (distributor and redistributors).
    pub vgic: bool,
    /// The vGIC's ITS (needs the vGIC).
    pub its: bool,
    /// The other MMIO ioeventfds trapline's lab machine registers
    /// (datamatch page, kernel doorbell, the wildcard page when not measured).
    pub lab_ioeventfds: bool,
    /// trapline's coalesced MMIO page.
    pub coalesced: bool,
    /// trapline's memslots: 128 MiB of RAM and the read-only probe page.
    pub memslots: bool,
    /// An irqfd on the lab's SPI (needs the vGIC).
    pub irqfd: bool,
}

impl Pieces {
    /// The bare floor: one small memslot, the vCPU, nothing else.
    pub const BARE: Pieces = Pieces {
        vgic: false,
        its: false,
        lab_ioeventfds: false,
        coalesced: false,
        memslots: false,
        irqfd: false,
    };
}
