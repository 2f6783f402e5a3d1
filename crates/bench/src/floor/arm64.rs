//! The raw-KVM floor on arm64: not built yet (a bare arm64 KVM_RUN loop
//! running the arm64 probe's own loop bytes is open work), so the ladder
//! has no loops there and the lab measures no floor rows. The names match
//! the x86 floor's, so the runner is the same code on both.

use trapline_report::ladder::Rung;

/// The floor's loops (none is run on arm64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorKind {
    /// The empty loop.
    Noop,
    /// A user exit.
    PioUserOut,
    /// An ioeventfd on a port.
    PioKernelWildcard,
    /// An ioeventfd on an MMIO page.
    MmioKernelWildcard,
    /// A RAM read.
    RamRead,
}

impl FloorKind {
    /// The scenario name the loop measures.
    pub fn name(self) -> &'static str {
        match self {
            FloorKind::Noop => "noop",
            FloorKind::PioUserOut => "pio-user-out",
            FloorKind::PioKernelWildcard => "pio-kernel-wildcard",
            FloorKind::MmioKernelWildcard => "mmio-kernel-wildcard",
            FloorKind::RamRead => "ram-read",
        }
    }
}

/// One measurement of a floor loop.
#[derive(Clone, Copy, Debug, Default)]
pub struct FloorSample {
    /// Iterations timed.
    pub iterations: u64,
    /// Their total cycles.
    pub cycles: u64,
    /// Exits that reached the loop's user space.
    pub user_exits: u64,
    /// The ioeventfd's count.
    pub eventfd_count: u64,
    /// The value read back.
    pub value: u64,
}

/// A raw VM's configuration (nothing to configure yet on arm64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pieces;

/// Always an error on arm64: there is no floor to measure yet.
pub fn measure_to_goal(
    _kvm: &kvm_ioctls::Kvm,
    _pieces: Pieces,
    kind: FloorKind,
    _goal: u64,
    _min: u64,
    _max: u64,
) -> Result<FloorSample, String> {
    Err(format!(
        "the raw-KVM floor ({}) is not built for arm64 yet",
        kind.name()
    ))
}

/// The ladder's rungs on arm64: none runs a loop.
pub mod ladder {
    use super::{FloorKind, Pieces, Rung};

    /// No rung has pieces on arm64.
    pub fn pieces(_vmm: &str) -> Option<Pieces> {
        None
    }

    /// No rung runs a loop on arm64.
    pub fn kinds(_rung: &Rung) -> Vec<FloorKind> {
        Vec::new()
    }

    /// One line on what the rung is, for reports.
    pub fn path(rung: &Rung) -> String {
        format!(
            "the raw-KVM floor ({}) is not built for arm64 yet",
            rung.vmm
        )
    }
}
