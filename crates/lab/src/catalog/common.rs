//! The scenarios both architectures have alike, word for word, and the
//! reasons both give for leaving a scenario off the peer. Each
//! architecture's list (`arch/`) names them where they stand in its order.

use trapline_abi::scenario;
use trapline_bus::ExitKind;
use trapline_lab_devices::probe::ProbeRegister;

use crate::catalog::record::Check::*;
use crate::catalog::record::MachineKind::*;
use crate::catalog::record::{Peer, Scenario, TestdevBar};

// Why a scenario is not run on the peer, on either architecture.
pub(super) const NO_PEER_COALESCED: Peer =
    Peer::Skipped("QEMU has no coalesced zone on trapline's probe addresses");
pub(super) const NO_PEER_RO_MEMSLOT: Peer =
    Peer::Skipped("the read-only memslot page is trapline's");
pub(super) const NO_PEER_PV_PORT: Peer =
    Peer::Skipped("the PV doorbell port is trapline's (KVM never merged PV MMIO)");
pub(super) const NO_PEER_LAB_THREADS: Peer =
    Peer::Skipped("needs trapline's lab host threads (irqfd injector, doorbell consumer)");

pub(super) const NOOP: Scenario = Scenario {
    id: scenario::NOOP,
    group: "baseline",
    path: "empty loop: the cost subtracted from every other scenario",
    machine: Main,
    check: NoExits,
    peer: Peer::Runs,
};

pub(super) const MMIO_USER_WRITE: Scenario = Scenario {
    id: scenario::MMIO_USER_WRITE,
    group: "mmio",
    path: "store to a trapline MMIO device: exit to user space",
    machine: Main,
    check: UserExit(ExitKind::MmioWrite, Some(ProbeRegister::MmioUser)),
    peer: Peer::Runs,
};

pub(super) const COALESCED_MMIO: Scenario = Scenario {
    id: scenario::COALESCED_MMIO,
    group: "coalesced",
    path: "store into a coalesced MMIO zone: queued in the ring, drained on the next exit",
    machine: Main,
    check: Coalesced(ProbeRegister::MmioCoalesced),
    peer: NO_PEER_COALESCED,
};

pub(super) const RAM_READ: Scenario = Scenario {
    id: scenario::RAM_READ,
    group: "memslot",
    path: "load from ordinary guest RAM",
    machine: Main,
    check: NoExits,
    peer: Peer::Runs,
};

pub(super) const RO_MEMSLOT_READ: Scenario = Scenario {
    id: scenario::RO_MEMSLOT_READ,
    group: "memslot",
    path: "load from a KVM_MEM_READONLY memslot: a RAM read, value checked",
    machine: Main,
    check: NoExits,
    peer: NO_PEER_RO_MEMSLOT,
};

pub(super) const RO_MEMSLOT_WRITE: Scenario = Scenario {
    id: scenario::RO_MEMSLOT_WRITE,
    group: "memslot",
    path: "store to a KVM_MEM_READONLY memslot: exits as MMIO",
    machine: Main,
    check: UserExit(ExitKind::MmioWrite, Some(ProbeRegister::RoMemslot)),
    peer: NO_PEER_RO_MEMSLOT,
};

pub(super) const DOORBELL_USER_MMIO: Scenario = Scenario {
    id: scenario::DOORBELL_USER_MMIO,
    group: "doorbell",
    path: "ring = MMIO store exiting to trapline, which signals the consumer's eventfd (seed 002's qemu-mmio)",
    machine: Main,
    check: Doorbell("doorbell-user-mmio", Some(ExitKind::MmioWrite)),
    peer: NO_PEER_LAB_THREADS,
};

pub(super) const DOORBELL_IOEVENTFD_MMIO: Scenario = Scenario {
    id: scenario::DOORBELL_IOEVENTFD_MMIO,
    group: "doorbell",
    path: "ring = MMIO store to a KVM ioeventfd (iosignalfd-mmio)",
    machine: Main,
    check: Doorbell("doorbell-mmio", None),
    peer: NO_PEER_LAB_THREADS,
};

pub(super) const PCI_MMIO_NO_EVENTFD: Scenario = Scenario {
    id: scenario::PCI_MMIO_NO_EVENTFD,
    group: "pci",
    path: "pci-testdev BAR0 byte store, no ioeventfd: exit to user space",
    machine: Main,
    check: Testdev(TestdevBar::Mem, Some(ExitKind::MmioWrite)),
    peer: Peer::Runs,
};

pub(super) const PCI_MMIO_WILDCARD_EVENTFD: Scenario = Scenario {
    id: scenario::PCI_MMIO_WILDCARD_EVENTFD,
    group: "pci",
    path: "pci-testdev BAR0 byte store to a wildcard ioeventfd (any length)",
    machine: Main,
    check: Testdev(TestdevBar::Mem, None),
    peer: Peer::Runs,
};

pub(super) const PCI_MMIO_DATAMATCH_EVENTFD: Scenario = Scenario {
    id: scenario::PCI_MMIO_DATAMATCH_EVENTFD,
    group: "pci",
    path: "pci-testdev BAR0 byte store to a 1-byte datamatch ioeventfd",
    machine: Main,
    check: Testdev(TestdevBar::Mem, None),
    peer: Peer::Runs,
};

/// Seed 004's config read by ECAM; `peer`: whether the peer's machine has an
/// ECAM window.
pub(super) const fn pci_config_read_ecam(peer: Peer) -> Scenario {
    Scenario {
        id: scenario::PCI_CONFIG_READ_ECAM,
        group: "pci-config",
        path: "config dword read through ECAM: one MMIO exit",
        machine: Main,
        check: ExitsPerIter(&[(ExitKind::MmioRead, 1)]),
        peer,
    }
}

/// Seed 004's config read by ECAM mapped read-only (`--ecam-ro`, trapline's
/// own); `peer`: why the peer does not run it.
pub(super) const fn pci_config_read_ecam_ro(peer: Peer) -> Scenario {
    Scenario {
        id: scenario::PCI_CONFIG_READ_ECAM_RO,
        group: "pci-config",
        path: "config dword read through ECAM mapped read-only over a shadow: no exit (seed 004)",
        machine: EcamRo,
        check: ExitsPerIter(&[]),
        peer,
    }
}

/// A bus-0 scan by ECAM; `peer`: whether the peer's machine has an ECAM window.
pub(super) const fn pci_scan_ecam(peer: Peer) -> Scenario {
    Scenario {
        id: scenario::PCI_SCAN_ECAM,
        group: "pci-config",
        path: "enumerate bus 0 through ECAM",
        machine: Main,
        check: Scan(&[(ExitKind::MmioRead, 256)]),
        peer,
    }
}

/// A bus-0 scan by read-only ECAM (`--ecam-ro`, trapline's own); `peer`: why
/// the peer does not run it.
pub(super) const fn pci_scan_ecam_ro(peer: Peer) -> Scenario {
    Scenario {
        id: scenario::PCI_SCAN_ECAM_RO,
        group: "pci-config",
        path: "enumerate bus 0 through read-only ECAM",
        machine: EcamRo,
        check: Scan(&[]),
        peer,
    }
}
