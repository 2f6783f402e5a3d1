//! The arm64 probe's scenarios (the `virt` machine, KVM's vGICv3): those
//! of the x86 catalog that exist on arm64, under the same names where the
//! meaning is the same (word for word in `common` where the record is too),
//! and the arm64-only ones (`hypercall-user`, `sysreg-trap`,
//! `mmio-vgic-read`). Each holds its ABI record, as on x86.

use trapline_abi::scenario;
use trapline_bus::ExitKind;

use crate::catalog::common::{self, NO_PEER_COALESCED, NO_PEER_LAB_THREADS, NO_PEER_PV_PORT};
use crate::catalog::record::Check::*;
use crate::catalog::record::MachineKind::*;
use crate::catalog::record::{Peer, Scenario, TestdevBar};

// Why a scenario is not run on the QEMU peer (`qemu-system-aarch64 -M virt`).
const NO_PEER_IOEVENTFD: Peer =
    Peer::Skipped("QEMU registers no ioeventfd on trapline's probe addresses");

// QEMU's `virt` has no read-only ECAM (trapline's `--ecam-ro`).
const NO_PEER_ECAM_RO: Peer = Peer::Skipped("the read-only ECAM window is trapline's (--ecam-ro)");

const NO_PEER_SMCCC_FILTER: Peer = Peer::Skipped(
    "QEMU asks KVM to forward no SMCCC call to it: KVM answers the HVC itself (the hypercall row)",
);

/// kvmtool's decision for `s` (`--peer kvmtool`, the probe's kvmtool
/// build): it runs what the QEMU peer runs, with the same checks (an
/// unassigned address is an exit lkvm ignores, a read of it unchecked),
/// and leaves out the rest for kvmtool's own reasons.
pub fn kvmtool_peer(s: &Scenario) -> Peer {
    if matches!(s.group, "pci" | "pci-config") {
        return Peer::Skipped(
            "kvmtool's arm64 machine has no pci-testdev, and the probe's kvmtool build knows no ECAM there",
        );
    }
    match s.peer {
        p if p == NO_PEER_IOEVENTFD => {
            Peer::Skipped("kvmtool registers no ioeventfd on trapline's probe addresses")
        }
        p if p == NO_PEER_COALESCED => {
            Peer::Skipped("kvmtool has no coalesced zone on trapline's probe addresses")
        }
        p if p == NO_PEER_SMCCC_FILTER => Peer::Skipped(
            "kvmtool asks KVM to forward no SMCCC call to it: KVM answers the HVC itself (the hypercall row)",
        ),
        p => p,
    }
}

/// Every arm64 probe scenario, in report order.
pub const SCENARIOS: &[Scenario] = &[
    common::NOOP,
    Scenario {
        id: scenario::HYPERCALL,
        group: "trap",
        path: "HVC with an unknown SMCCC function id: KVM answers NOT_SUPPORTED itself (the paper's Hypercall)",
        machine: Main,
        check: NoExits,
        peer: Peer::Runs,
    },
    // -- armfloor: the hypercall answered by trapline (one block, to merge).
    Scenario {
        id: scenario::HYPERCALL_USER,
        group: "trap",
        path: "HVC that KVM's SMCCC filter forwards to trapline (KVM_EXIT_HYPERCALL, Linux 6.4+), answered in x0: the paper's Hypercall served by the VMM",
        machine: Main,
        check: UserExit(ExitKind::Hypercall, None),
        peer: NO_PEER_SMCCC_FILTER,
    },
    // -- end armfloor
    Scenario {
        id: scenario::SYSREG_TRAP,
        group: "trap",
        path: "MRS of ID_AA64PFR0_EL1: trapped (HCR_EL2.TID3) and emulated in the kernel, as CPUID on x86 (the paper's Trap)",
        machine: Main,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::MMIO_VGIC_READ,
        group: "mmio",
        path: "load of GICD_IIDR: MMIO served by KVM's in-kernel vGIC (the paper's I/O Kernel)",
        machine: Main,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::MMIO_USER_READ,
        group: "mmio",
        path: "load from a trapline MMIO device: exit to user space, value checked (the paper's I/O User)",
        machine: Main,
        check: UserExit(ExitKind::MmioRead, None),
        peer: Peer::ValueUnchecked,
    },
    common::MMIO_USER_WRITE,
    Scenario {
        id: scenario::MMIO_KERNEL_WILDCARD,
        group: "mmio",
        path: "store to a KVM ioeventfd, length 0 (any length)",
        machine: Main,
        check: IoEvent("mmio-wildcard"),
        peer: NO_PEER_IOEVENTFD,
    },
    Scenario {
        id: scenario::MMIO_KERNEL_DATAMATCH,
        group: "mmio",
        path: "store to a KVM ioeventfd, 32-bit datamatch (seed 000's mmio_kernel, without a kernel patch)",
        machine: Main,
        check: IoEvent("mmio-datamatch"),
        peer: NO_PEER_IOEVENTFD,
    },
    common::COALESCED_MMIO,
    common::RAM_READ,
    common::RO_MEMSLOT_READ,
    common::RO_MEMSLOT_WRITE,
    common::DOORBELL_USER_MMIO,
    common::DOORBELL_IOEVENTFD_MMIO,
    Scenario {
        id: scenario::DOORBELL_PV,
        group: "doorbell",
        path: "ring = the doorbell's identity stored to the PV page, a 32-bit datamatch MMIO ioeventfd (x86's PV port, on MMIO)",
        machine: Main,
        check: Doorbell("doorbell-pv", None),
        peer: NO_PEER_LAB_THREADS,
    },
    // pci-testdev on the virt machine's PCIe host (seed 003 on ARM): BAR0
    // in the 32-bit MMIO window, BAR1 through the PCI I/O window (MMIO
    // mapped to port space); the guest finds both by ECAM. Then seed 004's
    // config reads by ECAM, exiting and from a read-only memslot.
    common::PCI_MMIO_NO_EVENTFD,
    common::PCI_MMIO_WILDCARD_EVENTFD,
    common::PCI_MMIO_DATAMATCH_EVENTFD,
    Scenario {
        id: scenario::PCI_MMIO_PV_EVENTFD,
        group: "pci",
        path: "paravirtual doorbell selected on BAR0: the identity stored to the PV port in the PCI I/O window (32-bit datamatch ioeventfd)",
        machine: Main,
        check: Testdev(TestdevBar::Mem, None),
        peer: NO_PEER_PV_PORT,
    },
    Scenario {
        id: scenario::PCI_PORTIO_NO_EVENTFD,
        group: "pci",
        path: "pci-testdev BAR1 byte store through the PCI I/O window, no ioeventfd: exit to user space",
        machine: Main,
        check: Testdev(TestdevBar::IoWindow, Some(ExitKind::MmioWrite)),
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::PCI_PORTIO_WILDCARD_EVENTFD,
        group: "pci",
        path: "pci-testdev BAR1 byte store through the I/O window to a wildcard ioeventfd (1 byte, on MMIO)",
        machine: Main,
        check: Testdev(TestdevBar::IoWindow, None),
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::PCI_PORTIO_DATAMATCH_EVENTFD,
        group: "pci",
        path: "pci-testdev BAR1 byte store through the I/O window to a 1-byte datamatch ioeventfd",
        machine: Main,
        check: Testdev(TestdevBar::IoWindow, None),
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::PCI_PORTIO_PV_EVENTFD,
        group: "pci",
        path: "paravirtual doorbell selected on BAR1: the identity stored to the PV port in the PCI I/O window (32-bit datamatch ioeventfd)",
        machine: Main,
        check: Testdev(TestdevBar::IoWindow, None),
        peer: NO_PEER_PV_PORT,
    },
    common::pci_config_read_ecam(Peer::Runs),
    common::pci_config_read_ecam_ro(NO_PEER_ECAM_RO),
    common::pci_scan_ecam(Peer::Runs),
    common::pci_scan_ecam_ro(NO_PEER_ECAM_RO),
    Scenario {
        id: scenario::IPI,
        group: "irq",
        path: "SGI to vCPU 1 (spinning, IRQs unmasked) through ICC_SGI1R_EL1 and wait for its handler: round trip",
        machine: Smp,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::IPI_HALT,
        group: "irq",
        path: "SGI to vCPU 1 waiting in WFI: wake-up round trip",
        machine: Smp,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::SELF_IPI,
        group: "irq",
        path: "SGI to this vCPU, taken by its handler",
        machine: Smp,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::EOI,
        group: "irq",
        path: "the ICC_EOIR1_EL1 write in the handler (GICv3: stays in the CPU), timed inside the handler",
        machine: Smp,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::IRQFD,
        group: "irq",
        path: "host thread writes an irqfd bound to an SPI (edge); latency to the guest handler (counter-offset estimate)",
        machine: Main,
        check: Irqfd,
        peer: NO_PEER_LAB_THREADS,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The arm64 catalog has what the issue asks of the arm64 probe.
    #[test]
    fn the_arm64_catalog_has_the_papers_rows() {
        for name in [
            "noop",
            "hypercall",
            "hypercall-user",
            "sysreg-trap",
            "mmio-vgic-read",
            "mmio-user-read",
            "mmio-user-write",
            "mmio-kernel-wildcard",
            "mmio-kernel-datamatch",
            "coalesced-mmio",
            "ro-memslot-read",
            "ro-memslot-write",
            "ipi",
            "eoi",
            "irqfd",
            "doorbell-user-mmio",
            "doorbell-ioeventfd-mmio",
            "doorbell-pv",
            "pci-config-read-ecam",
            "pci-config-read-ecam-ro",
            "pci-scan-ecam",
            "pci-scan-ecam-ro",
        ] {
            assert!(SCENARIOS.iter().any(|s| s.name() == name), "{name}");
        }
        // Seed 003's eight pci-testdev variants, the I/O BAR's through the
        // PCI I/O window.
        let testdev: Vec<_> = SCENARIOS
            .iter()
            .filter(|s| matches!(s.check, Testdev(..)))
            .collect();
        assert_eq!(testdev.len(), 8);
        for s in testdev {
            let io = s.name().starts_with("portio-");
            assert!(
                matches!(s.check, Testdev(TestdevBar::IoWindow, _)) == io,
                "{}",
                s.name()
            );
            assert!(
                !matches!(
                    s.check,
                    Testdev(TestdevBar::Io, _) | Testdev(_, Some(ExitKind::PioWrite))
                ),
                "{}",
                s.name()
            );
        }
        // No port I/O, no CF8/CFC, no APIC modes on arm64.
        for s in SCENARIOS {
            assert!(matches!(s.machine, Main | Smp | EcamRo), "{}", s.name());
            assert!(!s.name().starts_with("pio-"), "{}", s.name());
            assert!(!s.name().contains("cf8"), "{}", s.name());
        }
    }
}
