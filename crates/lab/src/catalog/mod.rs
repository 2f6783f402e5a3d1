//! The lab's scenarios: what each measures, which machine it needs, and
//! how its result is checked. A record's fields are `record`'s; the
//! records both architectures have alike are `common`'s; each
//! architecture's list, in report order, is in `arch/`.

mod arch;
mod common;
mod record;

pub use arch::aarch64::{kvmtool_peer, SCENARIOS as ARM64_SCENARIOS};
pub use arch::x86_64::SCENARIOS as X86_SCENARIOS;
pub use arch::SCENARIOS;
pub use record::{Check, MachineKind, Peer, Scenario, TestdevBar};

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
    use trapline_abi::scenario;
    use Check::*;
    use MachineKind::*;

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
