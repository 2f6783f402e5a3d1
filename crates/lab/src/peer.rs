//! The peers as the lab runs them: trapline-peers' QEMU (its probe boot
//! and result lines), and the catalog's rules for which scenario runs
//! there and with how many vCPUs.

pub use trapline_peers::qemu::{parse, run_probe, Qemu};

use crate::catalog::{MachineKind, Peer, Scenario};

/// Why `s` is not run on the peer, if it is not (the scenario's own
/// [`Peer`] rule).
pub fn not_applicable(s: &Scenario) -> Option<&'static str> {
    match s.peer {
        Peer::Skipped(why) => Some(why),
        Peer::Runs | Peer::ValueUnchecked => None,
    }
}

/// Whether `s`'s read-back value goes unchecked on the peer.
pub fn value_unchecked(s: &Scenario) -> bool {
    s.peer == Peer::ValueUnchecked
}

/// vCPUs the probe needs for a machine kind, on QEMU and in trapline's
/// own probe VM alike (the probe's `cpus=` word follows it).
pub fn cpus_for(kind: MachineKind) -> u32 {
    match kind {
        MachineKind::Smp | MachineKind::SmpX2apic => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_has_a_peer_decision() {
        use crate::catalog::{ARM64_SCENARIOS, X86_SCENARIOS};
        for s in X86_SCENARIOS.iter().chain(ARM64_SCENARIOS) {
            // Either QEMU serves it or there is a reason; both are fine,
            // but a reason must be a sentence.
            if let Some(r) = not_applicable(s) {
                assert!(r.len() > 20, "{}", s.name());
            }
        }
        let pio_user_out = X86_SCENARIOS
            .iter()
            .find(|s| s.name() == "pio-user-out")
            .unwrap();
        assert!(not_applicable(pio_user_out).is_none());
    }

    /// kvmtool runs the probe's scenarios that need only what its machine
    /// offers, and says why for the rest in its own words.
    #[test]
    fn kvmtool_runs_what_its_machine_offers() {
        use crate::catalog::{kvmtool_peer, Peer, ARM64_SCENARIOS};
        let runs: Vec<&str> = ARM64_SCENARIOS
            .iter()
            .filter(|s| !matches!(kvmtool_peer(s), Peer::Skipped(_)))
            .map(|s| s.name())
            .collect();
        let mut expected = [
            "noop",
            "hypercall",
            "sysreg-trap",
            "mmio-vgic-read",
            "mmio-user-read",
            "mmio-user-write",
            "ram-read",
            "ipi",
            "ipi-halt",
            "self-ipi",
            "eoi",
        ];
        let mut got = runs.clone();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected);
        for s in ARM64_SCENARIOS {
            match kvmtool_peer(s) {
                Peer::Skipped(why) => assert!(!why.contains("QEMU"), "{}: {why}", s.name()),
                Peer::ValueUnchecked => assert_eq!(s.name(), "mmio-user-read"),
                Peer::Runs => {}
            }
        }
    }
}
