//! The x86 probe's scenarios (the `pc` machine): port I/O, the APIC in
//! xAPIC and x2APIC modes, the PC's PCI configuration mechanisms, and those
//! both architectures have alike (`common`). Each holds its ABI record.

use trapline_abi::scenario;
use trapline_bus::ExitKind;
use trapline_lab_devices::probe::ProbeRegister;

use crate::catalog::common::{self, NO_PEER_COALESCED, NO_PEER_LAB_THREADS, NO_PEER_PV_PORT};
use crate::catalog::record::Check::*;
use crate::catalog::record::MachineKind::*;
use crate::catalog::record::{Peer, Scenario, TestdevBar};

// Why a scenario is not run on the QEMU peer (`qemu-system-x86_64 -M pc`).
const NO_PEER_IOEVENTFD: Peer = Peer::Skipped(
    "QEMU registers no ioeventfd on trapline's probe addresses (compare the pci-testdev rows instead)",
);
const NO_PEER_ECAM: Peer = Peer::Skipped("QEMU's pc machine has no ECAM window");

/// Every x86 probe scenario, in report order.
pub const SCENARIOS: &[Scenario] = &[
    common::NOOP,
    Scenario {
        id: scenario::HYPERCALL,
        group: "trap",
        path: "vmcall/vmmcall (by CPU vendor) handled by KVM: two world switches",
        machine: Hypercall,
        check: NoExits,
        peer: Peer::Skipped("the hypercall never returns on this host; not repeated on the peer"),
    },
    Scenario {
        id: scenario::CPUID,
        group: "trap",
        path: "CPUID: an unconditional intercept served in the kernel",
        machine: Main,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::HLT,
        group: "trap",
        path: "HLT without an in-kernel irqchip: KVM_EXIT_HLT round trip to trapline",
        machine: NoIrqchip,
        check: UserExit(ExitKind::Hlt, None),
        peer: Peer::Skipped("QEMU runs with KVM's in-kernel irqchip, so HLT never reaches user space"),
    },
    Scenario {
        id: scenario::PIO_KERNEL_PIC,
        group: "pio",
        path: "IN from port 0x4D0 (ELCR of KVM's in-kernel PIC): I/O served in the kernel",
        machine: Main,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::PIO_USER_OUT,
        group: "pio",
        path: "OUT to a trapline device: exit to user space, bus dispatch",
        machine: Main,
        check: UserExit(ExitKind::PioWrite, Some(ProbeRegister::PioUser)),
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::PIO_USER_IN,
        group: "pio",
        path: "IN from a trapline device: exit to user space, value checked",
        machine: Main,
        check: UserExit(ExitKind::PioRead, None),
        peer: Peer::ValueUnchecked,
    },
    Scenario {
        id: scenario::PIO_KERNEL_WILDCARD,
        group: "pio",
        path: "OUT to a port with a KVM ioeventfd, no datamatch",
        machine: Main,
        check: IoEvent("pio-wildcard"),
        peer: NO_PEER_IOEVENTFD,
    },
    Scenario {
        id: scenario::PIO_KERNEL_DATAMATCH,
        group: "pio",
        path: "OUT to a port with a KVM ioeventfd, 32-bit datamatch",
        machine: Main,
        check: IoEvent("pio-datamatch"),
        peer: NO_PEER_IOEVENTFD,
    },
    Scenario {
        id: scenario::MMIO_USER_READ,
        group: "mmio",
        path: "load from a trapline MMIO device: exit to user space, value checked",
        machine: Main,
        check: UserExit(ExitKind::MmioRead, None),
        peer: Peer::ValueUnchecked,
    },
    common::MMIO_USER_WRITE,
    Scenario {
        id: scenario::MMIO_KERNEL_WILDCARD,
        group: "mmio",
        path: "store to a KVM ioeventfd, length 0 (any length: fast MMIO)",
        machine: Main,
        check: IoEvent("mmio-wildcard"),
        peer: NO_PEER_IOEVENTFD,
    },
    Scenario {
        id: scenario::MMIO_KERNEL_DATAMATCH,
        group: "mmio",
        path: "store to a KVM ioeventfd, 32-bit datamatch",
        machine: Main,
        check: IoEvent("mmio-datamatch"),
        peer: NO_PEER_IOEVENTFD,
    },
    common::COALESCED_MMIO,
    Scenario {
        id: scenario::COALESCED_PIO,
        group: "coalesced",
        path: "OUT into a coalesced PIO zone: queued in the ring",
        machine: Main,
        check: Coalesced(ProbeRegister::PioCoalesced),
        peer: NO_PEER_COALESCED,
    },
    common::RAM_READ,
    common::RO_MEMSLOT_READ,
    common::RO_MEMSLOT_WRITE,
    Scenario {
        id: scenario::VMM_FLOOR_PIO,
        group: "vmm",
        path: "pio-user-out answered in trapline's run loop before any dispatch",
        machine: Main,
        check: Floor,
        peer: Peer::Skipped("trapline's in-loop floor handler has no QEMU counterpart"),
    },
    common::PCI_MMIO_NO_EVENTFD,
    common::PCI_MMIO_WILDCARD_EVENTFD,
    common::PCI_MMIO_DATAMATCH_EVENTFD,
    Scenario { id: scenario::PCI_MMIO_PV_EVENTFD, group: "pci", path: "paravirtual MMIO doorbell: the identity written to one PV port with a PIO datamatch ioeventfd (KVM never merged PV MMIO)", machine: Main, check: Testdev(TestdevBar::Mem, None), peer: NO_PEER_PV_PORT },
    Scenario { id: scenario::PCI_PORTIO_NO_EVENTFD, group: "pci", path: "pci-testdev BAR1 OUTB, no ioeventfd: exit to user space", machine: Main, check: Testdev(TestdevBar::Io, Some(ExitKind::PioWrite)), peer: Peer::Runs },
    Scenario { id: scenario::PCI_PORTIO_WILDCARD_EVENTFD, group: "pci", path: "pci-testdev BAR1 OUTB to a wildcard ioeventfd", machine: Main, check: Testdev(TestdevBar::Io, None), peer: Peer::Runs },
    Scenario { id: scenario::PCI_PORTIO_DATAMATCH_EVENTFD, group: "pci", path: "pci-testdev BAR1 OUTB to a 1-byte datamatch ioeventfd", machine: Main, check: Testdev(TestdevBar::Io, None), peer: Peer::Runs },
    Scenario { id: scenario::PCI_PORTIO_PV_EVENTFD, group: "pci", path: "paravirtual PIO doorbell: 32-bit OUT of the identity to the PV port (datamatch ioeventfd)", machine: Main, check: Testdev(TestdevBar::Io, None), peer: NO_PEER_PV_PORT },
    Scenario { id: scenario::PCI_CONFIG_READ_CF8, group: "pci-config", path: "config dword read through CF8/CFC: OUT address + IN data, two exits", machine: Main, check: ExitsPerIter(&[(ExitKind::PioWrite, 1), (ExitKind::PioRead, 1)]), peer: Peer::Runs },
    common::pci_config_read_ecam(NO_PEER_ECAM),
    common::pci_config_read_ecam_ro(NO_PEER_ECAM),
    Scenario { id: scenario::PCI_SCAN_CF8, group: "pci-config", path: "enumerate bus 0 (256 devfn, vendor+device) through CF8/CFC", machine: Main, check: Scan(&[(ExitKind::PioWrite, 256), (ExitKind::PioRead, 256)]), peer: Peer::Runs },
    common::pci_scan_ecam(NO_PEER_ECAM),
    common::pci_scan_ecam_ro(NO_PEER_ECAM),
    Scenario { id: scenario::IPI, group: "irq", path: "IPI to vCPU 1 (spinning, interrupts on) and wait for its handler: round trip (xAPIC ICR)", machine: Smp, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::IPI_HALT, group: "irq", path: "IPI to vCPU 1 waiting in HLT: wake-up round trip (xAPIC)", machine: Smp, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::SELF_IPI, group: "irq", path: "self-IPI through the xAPIC ICR, taken by the handler", machine: Smp, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::EOI, group: "irq", path: "the EOI write in the handler (xAPIC MMIO), timed inside the handler", machine: Smp, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::IPI_X2APIC, group: "irq", path: "IPI round trip through the x2APIC ICR MSR", machine: SmpX2apic, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::IPI_HALT_X2APIC, group: "irq", path: "IPI to a halted vCPU through x2APIC", machine: SmpX2apic, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::SELF_IPI_X2APIC, group: "irq", path: "self-IPI through the x2APIC SELF_IPI MSR", machine: SmpX2apic, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::EOI_X2APIC, group: "irq", path: "the EOI write (x2APIC MSR), timed inside the handler", machine: SmpX2apic, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::IRQFD, group: "irq", path: "host thread writes an irqfd bound to an IOAPIC pin; latency to the guest handler (shared-TSC estimate)", machine: Main, check: Irqfd , peer: NO_PEER_LAB_THREADS },
    common::DOORBELL_USER_MMIO,
    common::DOORBELL_IOEVENTFD_MMIO,
    Scenario { id: scenario::DOORBELL_IOEVENTFD_PIO, group: "doorbell", path: "ring = OUT to a KVM ioeventfd (iosignalfd-pio)", machine: Main, check: Doorbell("doorbell-pio", None), peer: NO_PEER_LAB_THREADS },
    Scenario { id: scenario::DOORBELL_PV, group: "doorbell", path: "ring = the doorbell's identity written to the PV port, a datamatch ioeventfd (stands in for a hypercall)", machine: Main, check: Doorbell("doorbell-pv", None), peer: NO_PEER_LAB_THREADS },
    Scenario { id: scenario::PIO_UART_OUT, group: "pio", path: "OUTB to the 16550 UART's scratch register: exit to user space into trapline's serial device", machine: Main, check: UserExit(ExitKind::PioWrite, None), peer: Peer::Runs },
];
