//! Every scenario the report reads by name, and who reads it: the seed
//! tables' rows and findings, the derived values' inputs, the baselines,
//! the vmm view's rows and the floor ladder's paths.
//!
//! The report knows no scenario list of its own (it renders whatever the
//! lab measured, and shows "not measured" for a name it finds no row
//! for), so a renamed scenario would quietly empty a row. This list lets a
//! test where the lab's names are visible
//! (`crates/lab/tests/scenario_names.rs`) check every one of them against
//! the ABI's scenarios and the rows the lab produces.

use crate::derive::{ladder, names, ECAM_RO_READ, RAM_READ};
use crate::model::{BASELINE_SCENARIO, SELF_TIMED, TRAPLINE_VMM};
use crate::views::{paper, seed, vmm, View};

/// One scenario the report reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioUse {
    /// The VMM whose row it reads (`trapline`, a peer, a ladder rung).
    pub vmm: String,
    /// The scenario's name.
    pub scenario: String,
    /// Who reads it, in words (for a test's message).
    pub by: String,
}

/// The scenarios the seed views read on an arm64 host (a row's `arm64`
/// scenario, else its own, none for an `arm64_missing` row), from the seed
/// tables that have arm64 rows (an arm64 caption or a row mapping).
pub fn arm64_scenario_uses() -> Vec<ScenarioUse> {
    let mut out = Vec::new();
    for t in seed::list::tables() {
        if t.arm64_caption.is_none() && !t.rows.iter().any(|r| r.has_arm64_mapping()) {
            continue;
        }
        let file = format!("seeds/{}.toml", t.view);
        for r in &t.rows {
            if let Some(s) = r.scenario_on(true) {
                out.push(ScenarioUse {
                    vmm: TRAPLINE_VMM.to_string(),
                    scenario: s.to_string(),
                    by: format!("{file} row {:?} on arm64", r.label),
                });
            }
        }
    }
    out
}

/// Every scenario the report reads, with who reads it (a name read in
/// several places is listed once per place).
pub fn scenario_uses() -> Vec<ScenarioUse> {
    let mut out = Vec::new();
    let mut add = |vmm: &str, scenario: &str, by: String| {
        out.push(ScenarioUse {
            vmm: vmm.to_string(),
            scenario: scenario.to_string(),
            by,
        });
    };
    for t in seed::list::tables() {
        let file = format!("seeds/{}.toml", t.view);
        for r in &t.rows {
            let Some(s) = r.scenario() else { continue };
            add(TRAPLINE_VMM, s, format!("{file} row {:?}", r.label));
            if let Some(peer) = &t.peer {
                add(peer, s, format!("{file} row {:?} (peer)", r.label));
            }
        }
        for a in &t.also {
            if let Some(s) = &a.scenario {
                add(TRAPLINE_VMM, s, format!("{file} also {:?}", a.name));
            }
        }
        if let Some(f) = &t.hooks.findings {
            for s in f.reads() {
                add(TRAPLINE_VMM, &s, format!("the findings of {file}"));
            }
        }
    }
    // The standard derived values, on trapline and on the bare floor (the
    // raw-KVM premium), and the profile's overhead on the unprofiled rows.
    for (vmm, inputs) in [
        (
            TRAPLINE_VMM,
            &[
                names::PIO_USER_OUT,
                names::PIO_KERNEL_WILDCARD,
                names::VMM_FLOOR_PIO,
            ][..],
        ),
        (
            names::RAW_KVM_VMM,
            &[
                names::PIO_USER_OUT,
                names::PIO_KERNEL_WILDCARD,
                // arm64's premium is on MMIO (no port I/O).
                names::MMIO_USER_WRITE,
                names::MMIO_KERNEL_WILDCARD,
            ][..],
        ),
        (names::UNPROFILED_VMM, &[names::PIO_USER_OUT][..]),
    ] {
        for s in inputs {
            add(vmm, s, "the standard derived values".into());
        }
        add(vmm, BASELINE_SCENARIO, "net cycles (the baseline)".into());
    }
    for s in [ECAM_RO_READ, RAM_READ] {
        add(TRAPLINE_VMM, s, "the ecam-ro-vs-ram derived value".into());
    }
    for s in SELF_TIMED {
        add(TRAPLINE_VMM, s, "SELF_TIMED (no net value)".into());
    }
    for s in paper::X2APIC_VARIANTS {
        add(TRAPLINE_VMM, s, "the paper view's x2APIC note".into());
    }
    for (vmm, s) in vmm::EXIT_SCENARIOS
        .into_iter()
        .chain(vmm::ARM64_EXIT_SCENARIOS)
    {
        add(vmm, s, "the vmm view's cost per exit".into());
    }
    for l in [ladder::X86, ladder::ARM64] {
        for r in l.rungs {
            add(
                r.vmm,
                BASELINE_SCENARIO,
                "the floor ladder (net cycles)".into(),
            );
            for s in l.kernel_paths.iter().filter(|p| l.runs(r, p)) {
                add(r.vmm, s, format!("the floor ladder's {} rung", r.piece));
            }
        }
        for s in l.kernel_paths {
            add(TRAPLINE_VMM, s, "the floor ladder (trapline's gap)".into());
        }
    }
    out
}

impl View {
    /// The scenarios it reads on a run measured on x86_64, or on arm64
    /// (`arm64`: the seed rows' arm64 scenarios), as `vmm:name` keys, when
    /// it reads a known few; `None` when it shows the whole run (see
    /// [`view_needs`]).
    pub fn needs(self, arm64: bool) -> Option<Vec<String>> {
        view_needs(self, arm64)
    }
}

/// What `--view anatomy` measures besides its own pass: the baseline, each
/// user path's scenario (its round trip from timed batches) and the bare
/// floor's user exit.
fn anatomy_view_needs(arm64: bool) -> Vec<String> {
    let mut v = vec![BASELINE_SCENARIO.to_string()];
    v.extend(
        crate::views::anatomy::anatomy_paths(arm64)
            .iter()
            .map(|s| s.to_string()),
    );
    v.push("raw-kvm:pio-user-out".into());
    v
}

/// The scenarios `view` reads, as `vmm:name` keys (noop, the baseline,
/// first), when it reads a known few: a seed table's rows, the values its
/// findings and notes read; `seeds`, every seed's; `vmm`, its exit-cost
/// rows and the floor ladder. `None` for `all`, which shows the whole run. The lab measures only these for
/// `--view`.
pub fn view_needs(view: View, arm64: bool) -> Option<Vec<String>> {
    let tables: Vec<&seed::SeedTable> = match view {
        View::Seed(id) => vec![id.table()],
        View::Seeds => seed::list::tables().collect(),
        View::Vmm => return Some(vmm_view_needs(arm64)),
        View::Anatomy => return Some(anatomy_view_needs(arm64)),
        _ => return None,
    };
    let mut names = vec![BASELINE_SCENARIO.to_string()];
    for t in tables {
        names.extend(
            t.rows
                .iter()
                .filter_map(|r| r.scenario_on(arm64))
                .map(String::from),
        );
        names.extend(t.also.iter().filter_map(|a| a.scenario.clone()));
        if let Some(f) = &t.hooks.findings {
            names.extend(f.reads());
        }
        if t.view == "paper" {
            names.extend(paper::X2APIC_VARIANTS.iter().map(|s| s.to_string()));
        }
    }
    let mut keys: Vec<String> = Vec::new();
    for n in names {
        let key = format!("{TRAPLINE_VMM}:{n}");
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    Some(keys)
}

/// What the vmm view reads: its cost-per-exit rows (the user exit and its
/// in-kernel counterpart on trapline and the bare floor: port I/O on x86,
/// MMIO on arm64), the unprofiled VM that the user-exit row brings along,
/// and every floor-ladder rung's kernel paths, each VM's noop baseline
/// first. Not the rest of the catalog.
fn vmm_view_needs(arm64: bool) -> Vec<String> {
    let (exit_rows, ladder) = if arm64 {
        (&vmm::ARM64_EXIT_SCENARIOS, &ladder::ARM64)
    } else {
        (&vmm::EXIT_SCENARIOS, &ladder::X86)
    };
    let mut keys: Vec<String> = Vec::new();
    let mut add = |vmm: &str, name: &str| {
        let key = format!("{vmm}:{name}");
        if !keys.contains(&key) {
            keys.push(key);
        }
    };
    add(TRAPLINE_VMM, BASELINE_SCENARIO);
    for (vmm, name) in exit_rows {
        add(vmm, BASELINE_SCENARIO);
        add(vmm, name);
    }
    if !arm64 {
        // The user-exit premium's in-kernel side on trapline.
        add(TRAPLINE_VMM, names::PIO_KERNEL_WILDCARD);
    }
    for path in ladder.kernel_paths {
        add(TRAPLINE_VMM, path);
    }
    for r in ladder.rungs {
        add(r.vmm, BASELINE_SCENARIO);
        for path in ladder.kernel_paths {
            add(r.vmm, path);
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vmm_view_needs_its_exit_rows_and_the_ladder_not_the_catalog() {
        let v = view_needs(View::Vmm, false).unwrap();
        assert_eq!(v[0], "trapline:noop");
        for k in [
            "trapline:pio-user-out",
            "trapline:vmm-floor-pio",
            "trapline:pio-kernel-wildcard",
            "raw-kvm:pio-user-out",
            "raw-kvm:pio-kernel-wildcard",
            "raw-kvm+memslots:ram-read",
        ] {
            assert!(v.contains(&k.to_string()), "{k}: {v:?}");
        }
        // Every rung's kernel paths, with its baseline.
        for r in &ladder::RUNGS {
            assert!(v.contains(&format!("{}:noop", r.vmm)), "{}", r.vmm);
        }
        assert!(!v.contains(&"trapline:cpuid".to_string()));
        assert!(!v.iter().any(|k| k.starts_with("trapline:pci-")));
        assert_eq!(view_needs(View::All, false), None);
        // On arm64: MMIO exits and the arm64 ladder, the vGIC read included.
        let arm = view_needs(View::Vmm, true).unwrap();
        for k in [
            "trapline:mmio-user-write",
            "raw-kvm:mmio-user-write",
            "raw-kvm:mmio-kernel-wildcard",
            "trapline-virt:mmio-vgic-read",
        ] {
            assert!(arm.contains(&k.to_string()), "{k}: {arm:?}");
        }
        assert!(!arm.iter().any(|k| k.contains("pio-")), "{arm:?}");
    }

    #[test]
    fn a_seed_view_needs_its_rows_and_the_baseline_only() {
        let paper = view_needs("paper".parse().unwrap(), false).unwrap();
        assert_eq!(paper[0], "trapline:noop");
        for s in ["cpuid", "pio-kernel-pic", "ipi", "eoi", "ipi-x2apic"] {
            assert!(paper.contains(&format!("trapline:{s}")), "{s}: {paper:?}");
        }
        assert!(!paper.contains(&"trapline:pci-scan-cf8".to_string()));
        let seeds = view_needs(View::Seeds, false).unwrap();
        assert!(paper.iter().all(|k| seeds.contains(k)));
        assert!(seeds.contains(&"trapline:pci-config-read-cf8".to_string()));
        // On arm64 the rows' arm64 scenarios: Trap is the ID-register trap.
        let arm = view_needs("paper".parse().unwrap(), true).unwrap();
        for s in [
            "sysreg-trap",
            "mmio-vgic-read",
            "mmio-user-read",
            "hypercall",
        ] {
            assert!(arm.contains(&format!("trapline:{s}")), "{s}: {arm:?}");
        }
        assert!(!arm.contains(&"trapline:cpuid".to_string()));
        assert_eq!(view_needs(View::All, false), None);
        // On arm64: MMIO exits and the arm64 ladder, the vGIC read included.
        let arm = view_needs(View::Vmm, true).unwrap();
        for k in [
            "trapline:mmio-user-write",
            "raw-kvm:mmio-user-write",
            "raw-kvm:mmio-kernel-wildcard",
            "trapline-virt:mmio-vgic-read",
        ] {
            assert!(arm.contains(&k.to_string()), "{k}: {arm:?}");
        }
        assert!(!arm.iter().any(|k| k.contains("pio-")), "{arm:?}");
    }

    /// Within the report: a seed's findings read only scenarios its file
    /// has a published value for (a row, or an `also` standing for one),
    /// so a renamed row or findings name cannot leave a finding with no
    /// seed value.
    #[test]
    fn every_findings_input_has_a_published_value_in_its_file() {
        for t in seed::list::tables() {
            let Some(f) = &t.hooks.findings else { continue };
            for s in f.reads() {
                assert!(
                    t.published_for(&s).is_some(),
                    "the findings of seeds/{}.toml read {s}, which no row or `also` of the file \
                     publishes",
                    t.view
                );
            }
        }
    }

    #[test]
    fn the_list_names_every_seed_row_and_the_ladder() {
        let uses = scenario_uses();
        let has = |vmm: &str, s: &str| uses.iter().any(|u| u.vmm == vmm && u.scenario == s);
        assert!(
            has(TRAPLINE_VMM, "pio-kernel-pic"),
            "paper and vmexit-arm rows"
        );
        assert!(has("qemu", "mmio-no-eventfd:pci-mem"), "pci-testdev's peer");
        assert!(has("raw-kvm+idmap", "pio-kernel-wildcard"));
        assert!(has(ladder::TRAPLINE_PC, BASELINE_SCENARIO));
        assert!(has(names::UNPROFILED_VMM, names::PIO_USER_OUT));
    }
}
