//! The lab's scenarios: what each measures, which machine it needs, and
//! how its result is checked.

use trapline_abi::{scenario, ScenarioId};
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

use Check::*;
use MachineKind::*;

// Why a group of scenarios is not run on the QEMU peer.
const NO_PEER_IOEVENTFD: Peer = Peer::Skipped(
    "QEMU registers no ioeventfd on trapline's probe addresses (compare the pci-testdev rows instead)",
);
const NO_PEER_COALESCED: Peer =
    Peer::Skipped("QEMU has no coalesced zone on trapline's probe addresses");
const NO_PEER_RO_MEMSLOT: Peer = Peer::Skipped("the read-only memslot page is trapline's");
const NO_PEER_PV_PORT: Peer =
    Peer::Skipped("the PV doorbell port is trapline's (KVM never merged PV MMIO)");
const NO_PEER_ECAM: Peer = Peer::Skipped("QEMU's pc machine has no ECAM window");
const NO_PEER_LAB_THREADS: Peer =
    Peer::Skipped("needs trapline's lab host threads (irqfd injector, doorbell consumer)");

mod arm64;
pub use arm64::{kvmtool_peer, ARM64_SCENARIOS};

/// The probe scenarios of the architecture trapline is built for.
#[cfg(target_arch = "x86_64")]
pub const SCENARIOS: &[Scenario] = X86_SCENARIOS;
/// The probe scenarios of the architecture trapline is built for.
#[cfg(target_arch = "aarch64")]
pub const SCENARIOS: &[Scenario] = ARM64_SCENARIOS;

/// Every x86 probe scenario, in report order.
pub const X86_SCENARIOS: &[Scenario] = &[
    Scenario {
        id: scenario::NOOP,
        group: "baseline",
        path: "empty loop: the cost subtracted from every other scenario",
        machine: Main,
        check: NoExits,
        peer: Peer::Runs,
    },
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
    Scenario {
        id: scenario::MMIO_USER_WRITE,
        group: "mmio",
        path: "store to a trapline MMIO device: exit to user space",
        machine: Main,
        check: UserExit(ExitKind::MmioWrite, Some(ProbeRegister::MmioUser)),
        peer: Peer::Runs,
    },
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
    Scenario {
        id: scenario::COALESCED_MMIO,
        group: "coalesced",
        path: "store into a coalesced MMIO zone: queued in the ring, drained on the next exit",
        machine: Main,
        check: Coalesced(ProbeRegister::MmioCoalesced),
        peer: NO_PEER_COALESCED,
    },
    Scenario {
        id: scenario::COALESCED_PIO,
        group: "coalesced",
        path: "OUT into a coalesced PIO zone: queued in the ring",
        machine: Main,
        check: Coalesced(ProbeRegister::PioCoalesced),
        peer: NO_PEER_COALESCED,
    },
    Scenario {
        id: scenario::RAM_READ,
        group: "memslot",
        path: "load from ordinary guest RAM",
        machine: Main,
        check: NoExits,
        peer: Peer::Runs,
    },
    Scenario {
        id: scenario::RO_MEMSLOT_READ,
        group: "memslot",
        path: "load from a KVM_MEM_READONLY memslot: a RAM read, value checked",
        machine: Main,
        check: NoExits,
        peer: NO_PEER_RO_MEMSLOT,
    },
    Scenario {
        id: scenario::RO_MEMSLOT_WRITE,
        group: "memslot",
        path: "store to a KVM_MEM_READONLY memslot: exits as MMIO",
        machine: Main,
        check: UserExit(ExitKind::MmioWrite, Some(ProbeRegister::RoMemslot)),
        peer: NO_PEER_RO_MEMSLOT,
    },
    Scenario {
        id: scenario::VMM_FLOOR_PIO,
        group: "vmm",
        path: "pio-user-out answered in trapline's run loop before any dispatch",
        machine: Main,
        check: Floor,
        peer: Peer::Skipped("trapline's in-loop floor handler has no QEMU counterpart"),
    },
    Scenario { id: scenario::PCI_MMIO_NO_EVENTFD, group: "pci", path: "pci-testdev BAR0 byte store, no ioeventfd: exit to user space", machine: Main, check: Testdev(TestdevBar::Mem, Some(ExitKind::MmioWrite)), peer: Peer::Runs },
    Scenario { id: scenario::PCI_MMIO_WILDCARD_EVENTFD, group: "pci", path: "pci-testdev BAR0 byte store to a wildcard ioeventfd (any length)", machine: Main, check: Testdev(TestdevBar::Mem, None), peer: Peer::Runs },
    Scenario { id: scenario::PCI_MMIO_DATAMATCH_EVENTFD, group: "pci", path: "pci-testdev BAR0 byte store to a 1-byte datamatch ioeventfd", machine: Main, check: Testdev(TestdevBar::Mem, None), peer: Peer::Runs },
    Scenario { id: scenario::PCI_MMIO_PV_EVENTFD, group: "pci", path: "paravirtual MMIO doorbell: the identity written to one PV port with a PIO datamatch ioeventfd (KVM never merged PV MMIO)", machine: Main, check: Testdev(TestdevBar::Mem, None), peer: NO_PEER_PV_PORT },
    Scenario { id: scenario::PCI_PORTIO_NO_EVENTFD, group: "pci", path: "pci-testdev BAR1 OUTB, no ioeventfd: exit to user space", machine: Main, check: Testdev(TestdevBar::Io, Some(ExitKind::PioWrite)), peer: Peer::Runs },
    Scenario { id: scenario::PCI_PORTIO_WILDCARD_EVENTFD, group: "pci", path: "pci-testdev BAR1 OUTB to a wildcard ioeventfd", machine: Main, check: Testdev(TestdevBar::Io, None), peer: Peer::Runs },
    Scenario { id: scenario::PCI_PORTIO_DATAMATCH_EVENTFD, group: "pci", path: "pci-testdev BAR1 OUTB to a 1-byte datamatch ioeventfd", machine: Main, check: Testdev(TestdevBar::Io, None), peer: Peer::Runs },
    Scenario { id: scenario::PCI_PORTIO_PV_EVENTFD, group: "pci", path: "paravirtual PIO doorbell: 32-bit OUT of the identity to the PV port (datamatch ioeventfd)", machine: Main, check: Testdev(TestdevBar::Io, None), peer: NO_PEER_PV_PORT },
    Scenario { id: scenario::PCI_CONFIG_READ_CF8, group: "pci-config", path: "config dword read through CF8/CFC: OUT address + IN data, two exits", machine: Main, check: ExitsPerIter(&[(ExitKind::PioWrite, 1), (ExitKind::PioRead, 1)]), peer: Peer::Runs },
    Scenario { id: scenario::PCI_CONFIG_READ_ECAM, group: "pci-config", path: "config dword read through ECAM: one MMIO exit", machine: Main, check: ExitsPerIter(&[(ExitKind::MmioRead, 1)]), peer: NO_PEER_ECAM },
    Scenario { id: scenario::PCI_CONFIG_READ_ECAM_RO, group: "pci-config", path: "config dword read through ECAM mapped read-only over a shadow: no exit (seed 004)", machine: EcamRo, check: ExitsPerIter(&[]), peer: NO_PEER_ECAM },
    Scenario { id: scenario::PCI_SCAN_CF8, group: "pci-config", path: "enumerate bus 0 (256 devfn, vendor+device) through CF8/CFC", machine: Main, check: Scan(&[(ExitKind::PioWrite, 256), (ExitKind::PioRead, 256)]), peer: Peer::Runs },
    Scenario { id: scenario::PCI_SCAN_ECAM, group: "pci-config", path: "enumerate bus 0 through ECAM", machine: Main, check: Scan(&[(ExitKind::MmioRead, 256)]), peer: NO_PEER_ECAM },
    Scenario { id: scenario::PCI_SCAN_ECAM_RO, group: "pci-config", path: "enumerate bus 0 through read-only ECAM", machine: EcamRo, check: Scan(&[]), peer: NO_PEER_ECAM },
    Scenario { id: scenario::IPI, group: "irq", path: "IPI to vCPU 1 (spinning, interrupts on) and wait for its handler: round trip (xAPIC ICR)", machine: Smp, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::IPI_HALT, group: "irq", path: "IPI to vCPU 1 waiting in HLT: wake-up round trip (xAPIC)", machine: Smp, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::SELF_IPI, group: "irq", path: "self-IPI through the xAPIC ICR, taken by the handler", machine: Smp, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::EOI, group: "irq", path: "the EOI write in the handler (xAPIC MMIO), timed inside the handler", machine: Smp, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::IPI_X2APIC, group: "irq", path: "IPI round trip through the x2APIC ICR MSR", machine: SmpX2apic, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::IPI_HALT_X2APIC, group: "irq", path: "IPI to a halted vCPU through x2APIC", machine: SmpX2apic, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::SELF_IPI_X2APIC, group: "irq", path: "self-IPI through the x2APIC SELF_IPI MSR", machine: SmpX2apic, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::EOI_X2APIC, group: "irq", path: "the EOI write (x2APIC MSR), timed inside the handler", machine: SmpX2apic, check: NoExits , peer: Peer::Runs },
    Scenario { id: scenario::IRQFD, group: "irq", path: "host thread writes an irqfd bound to an IOAPIC pin; latency to the guest handler (shared-TSC estimate)", machine: Main, check: Irqfd , peer: NO_PEER_LAB_THREADS },
    Scenario { id: scenario::DOORBELL_USER_MMIO, group: "doorbell", path: "ring = MMIO store exiting to trapline, which signals the consumer's eventfd (seed 002's qemu-mmio)", machine: Main, check: Doorbell("doorbell-user-mmio", Some(ExitKind::MmioWrite)), peer: NO_PEER_LAB_THREADS },
    Scenario { id: scenario::DOORBELL_IOEVENTFD_MMIO, group: "doorbell", path: "ring = MMIO store to a KVM ioeventfd (iosignalfd-mmio)", machine: Main, check: Doorbell("doorbell-mmio", None), peer: NO_PEER_LAB_THREADS },
    Scenario { id: scenario::DOORBELL_IOEVENTFD_PIO, group: "doorbell", path: "ring = OUT to a KVM ioeventfd (iosignalfd-pio)", machine: Main, check: Doorbell("doorbell-pio", None), peer: NO_PEER_LAB_THREADS },
    Scenario { id: scenario::DOORBELL_PV, group: "doorbell", path: "ring = the doorbell's identity written to the PV port, a datamatch ioeventfd (stands in for a hypercall)", machine: Main, check: Doorbell("doorbell-pv", None), peer: NO_PEER_LAB_THREADS },
    Scenario { id: scenario::PIO_UART_OUT, group: "pio", path: "OUTB to the 16550 UART's scratch register: exit to user space into trapline's serial device", machine: Main, check: UserExit(ExitKind::PioWrite, None), peer: Peer::Runs },
];

/// Look a scenario up.
pub fn find(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name() == name)
}

/// Does `name` (or `vmm:name`) match any of the comma-separated glob
/// patterns (`*` matches any run of characters)?
pub fn matches(patterns: &str, vmm: &str, name: &str) -> bool {
    let key = format!("{vmm}:{name}");
    patterns
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .any(|p| glob(p, name) || glob(p, &key))
}

fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            if rest.is_empty() {
                return true;
            }
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && glob(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CATALOGS: [(&str, &[Scenario]); 2] = [("x86", X86_SCENARIOS), ("arm64", ARM64_SCENARIOS)];

    /// Every ABI scenario is in some architecture's catalog, at most once
    /// in each; the x86 catalog has every scenario but the arm64-only ones.
    #[test]
    fn every_abi_scenario_has_exactly_one_lab_record_per_architecture() {
        for a in trapline_abi::SCENARIOS {
            let mut found = 0;
            for (arch, list) in CATALOGS {
                let n = list.iter().filter(|s| s.id == *a).count();
                assert!(n <= 1, "{} has {n} {arch} lab records", a.name);
                found += n;
            }
            assert!(found >= 1, "{} is in no catalog", a.name);
        }
        let arm64_only = [
            scenario::SYSREG_TRAP,
            scenario::MMIO_VGIC_READ,
            scenario::HYPERCALL_USER,
        ];
        for a in trapline_abi::SCENARIOS {
            let on_x86 = X86_SCENARIOS.iter().any(|s| s.id == *a);
            assert_eq!(on_x86, !arm64_only.contains(a), "{}", a.name);
        }
    }

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
            assert!(ARM64_SCENARIOS.iter().any(|s| s.name() == name), "{name}");
        }
        // Seed 003's eight pci-testdev variants, the I/O BAR's through the
        // PCI I/O window.
        let testdev: Vec<_> = ARM64_SCENARIOS
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
        for s in ARM64_SCENARIOS {
            assert!(matches!(s.machine, Main | Smp | EcamRo), "{}", s.name());
            assert!(!s.name().starts_with("pio-"), "{}", s.name());
            assert!(!s.name().contains("cf8"), "{}", s.name());
        }
    }

    /// The probe runs a scenario with the routine its ABI record names; the
    /// catalog's group, machine and check say what that routine must be,
    /// so the two records cannot drift apart.
    #[test]
    fn every_abi_routine_agrees_with_the_catalog() {
        use trapline_abi::Routine;
        for s in CATALOGS.iter().flat_map(|(_, l)| l.iter()) {
            let want = match (s.group, s.check) {
                ("pci" | "pci-config", _) => Routine::Pci,
                ("irq", Irqfd) => Routine::Irqfd,
                ("irq", _) => Routine::Ipi,
                _ => Routine::Exits,
            };
            assert_eq!(s.id.routine, want, "{}: group {}", s.name(), s.group);
            // Only the IPI routine brings vCPU 1 up and switches APIC modes.
            assert_eq!(
                matches!(s.machine, Smp | SmpX2apic),
                s.id.routine == Routine::Ipi,
                "{}: machine {:?}",
                s.name(),
                s.machine
            );
        }
    }

    /// The guest checks the value a scenario reads back where the catalog
    /// says it does: config reads (and only they) check the vendor/device
    /// dword, and the reads whose value the peer cannot check (nothing
    /// answers there) are ones the guest checks against the probe value.
    #[test]
    fn every_abi_value_check_agrees_with_the_catalog() {
        use trapline_abi::Expect;
        for s in CATALOGS.iter().flat_map(|(_, l)| l.iter()) {
            let config_read = matches!(s.check, ExitsPerIter(_));
            assert_eq!(
                s.id.expect == Expect::PciTestdevId,
                config_read,
                "{}: check {:?}",
                s.name(),
                s.check
            );
            if s.peer == Peer::ValueUnchecked {
                assert_eq!(s.id.expect, Expect::ProbeReadValue, "{}", s.name());
            }
        }
    }

    #[test]
    fn patterns() {
        assert!(matches("pio-*", "trapline", "pio-user-out"));
        assert!(!matches("pio-*", "trapline", "mmio-user-read"));
        assert!(matches("*wildcard", "trapline", "mmio-kernel-wildcard"));
        assert!(matches("noop, cpuid", "trapline", "cpuid"));
        assert!(matches("raw-kvm:*", "raw-kvm", "noop"));
        assert!(!matches("raw-kvm:*", "trapline", "noop"));
        assert!(matches("*user*", "trapline", "pio-user-in"));
        assert!(!matches("", "trapline", "noop"));
    }
}
