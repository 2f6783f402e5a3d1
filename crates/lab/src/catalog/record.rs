//! What one scenario record says: the machine it needs, how its result is
//! checked, and its rule on the peer. Each architecture's records are in
//! `arch/`.

use trapline_abi::ScenarioId;
use trapline_bus::ExitKind;
use trapline_lab_devices::probe::ProbeRegister;

/// Which machine a probe scenario runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MachineKind {
    /// The main machine: in-kernel irqchip, every lab fast path.
    Main,
    /// No in-kernel irqchip, so HLT exits to user space.
    NoIrqchip,
    /// Alone, with a short timeout: a hypercall may never return (it spins
    /// inside KVM on nested hosts).
    Hypercall,
    /// The main machine with the ECAM window mapped read-only over its
    /// config-space shadow (`--ecam-ro`).
    EcamRo,
    /// Two vCPUs (probe `cpus=2`), APICs in xAPIC mode.
    Smp,
    /// Two vCPUs with the APICs switched to x2APIC mode (probe `x2apic=1`).
    SmpX2apic,
}

impl MachineKind {
    /// What progress lines call this machine: its kind in the words of
    /// docs/bench.md and of `trapline run`'s flags, never the Rust type.
    pub fn name(self) -> &'static str {
        match self {
            MachineKind::Main => "main",
            MachineKind::NoIrqchip => "no-irqchip",
            MachineKind::Hypercall => "hypercall",
            MachineKind::EcamRo => "ecam-ro",
            MachineKind::Smp => "2-vCPU",
            MachineKind::SmpX2apic => "2-vCPU x2APIC",
        }
    }
}

/// Which pci-testdev BAR a scenario drives (and reads `count` back from).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestdevBar {
    /// BAR0, memory.
    Mem,
    /// BAR1, I/O ports, reached with IN/OUT (x86).
    Io,
    /// BAR1 reached through the PCI I/O window, a memory range mapped to
    /// port space (arm64's `virt`): loads and stores, MMIO exits.
    IoWindow,
}

impl TestdevBar {
    /// The exit the guest's once-per-batch `count` read makes.
    pub fn count_read(self) -> ExitKind {
        match self {
            TestdevBar::Mem => ExitKind::MmioRead,
            TestdevBar::Io => ExitKind::PioRead,
            TestdevBar::IoWindow => ExitKind::MmioRead,
        }
    }
}

/// How a scenario proves it measured what it claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Served in the kernel or by hardware: no exit reaches trapline.
    NoExits,
    /// Each iteration is exactly one exit of this kind, and (for writes)
    /// the probe device saw every one.
    UserExit(ExitKind, Option<ProbeRegister>),
    /// A KVM ioeventfd: no exits, and the eventfd fired once per iteration.
    IoEvent(&'static str),
    /// A coalesced zone: fewer than one exit per iteration, and every write
    /// reached the device through the ring.
    Coalesced(ProbeRegister),
    /// The in-loop floor handler: one Floor exit per iteration and nothing
    /// reached the bus.
    Floor,
    /// pci-testdev: the device's `count` (read by the guest after each
    /// batch through this BAR) equals every write the guest made, and each
    /// iteration is exactly one exit of this kind (none for the eventfd
    /// paths).
    Testdev(TestdevBar, Option<ExitKind>),
    /// Exactly these exits per iteration, and the value the guest read back
    /// was checked by the guest (config reads).
    ExitsPerIter(&'static [(ExitKind, u64)]),
    /// A bus-0 scan: these exits per iteration and the guest found exactly
    /// the functions the machine has.
    Scan(&'static [(ExitKind, u64)]),
    /// irqfd: the host's injector got an acknowledgement for every
    /// injection, and the batch made no exit but the ucall that started it.
    Irqfd,
    /// A doorbell: the consumer thread counted every ring exactly (zero
    /// lost notifications), with this exit per ring (none for KVM paths).
    Doorbell(&'static str, Option<ExitKind>),
}

/// One scenario.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// Its id, name and C name: the ABI's record, from which the probe's
    /// `SCENARIO_*` defines are generated.
    pub id: ScenarioId,
    /// Report group.
    pub group: &'static str,
    /// One line on the mechanism.
    pub path: &'static str,
    /// Machine it needs.
    pub machine: MachineKind,
    /// Its check.
    pub check: Check,
    /// Whether it runs on the QEMU peer, and what is checked there.
    pub peer: Peer,
}

impl Scenario {
    /// CLI and JSON name (the ABI's name).
    pub const fn name(&self) -> &'static str {
        self.id.name
    }
}

/// A scenario on the QEMU peer (`--peer qemu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// Runs, with the guest's own check.
    Runs,
    /// Runs, but the value it reads back cannot be checked there: nothing
    /// answers trapline's probe addresses on QEMU, so the read returns what
    /// QEMU gives an unassigned address (all-ones on x86, 0 on arm64's
    /// `virt`); it is still an exit to QEMU's user space, which is what is
    /// timed.
    ValueUnchecked,
    /// Not run on the peer, for this reason (shown in the report).
    Skipped(&'static str),
}
