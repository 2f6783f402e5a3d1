//! The floor ladder: raw /dev/kvm VMs, each with one more piece of
//! trapline's VM configuration than the last, up to one configured like
//! trapline's lab machine (`trapline-pc`). Each rung runs the probe's own
//! loops (same bytes, same alignment), so the difference between two rungs'
//! net costs is what that piece costs per exit, and trapline against
//! `trapline-pc` is what trapline's own VMM adds to an in-kernel path.
//!
//! This module names the rungs and computes the derived values; the lab
//! (`crates/floor/`) builds the VMs. Each architecture has its
//! own ladder ([`X86`], [`ARM64`]): the pieces that exist there, up to a
//! rung configured like trapline's lab machine on it (`trapline-pc`,
//! `trapline-virt`); a report's ladder is its host's ([`for_report`]).

use crate::model::{scenario_key, Derived, Report, ValueRange, TRAPLINE_VMM};
use crate::unit::Unit;

/// One rung: a VMM name in the report, the rung it adds a piece to, and
/// the piece in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rung {
    /// VMM name of its rows (`raw-kvm+irqchip`).
    pub vmm: &'static str,
    /// The rung it adds to (`None` for the bare floor).
    pub parent: Option<&'static str>,
    /// Short name of the piece (`irqchip`); derived values are
    /// `piece:<piece>:<scenario>`.
    pub piece: &'static str,
    /// What the piece is.
    pub what: &'static str,
}

/// The bare floor's VMM name.
pub const BARE: &str = "raw-kvm";
/// The rung configured like trapline's lab machine.
pub const TRAPLINE_PC: &str = "trapline-pc";

/// The rungs, bare first; each main rung adds to the one before it, and
/// the three side rungs (the PIT, the split irqchip, many ioeventfds)
/// branch off. `trapline-pc` has what trapline's lab machine has: the
/// full irqchip and no PIT.
pub const RUNGS: [Rung; 11] = [
    Rung {
        vmm: BARE,
        parent: None,
        piece: "bare",
        what: "one 8 MiB memslot, a TSS, a bare KVM_RUN loop",
    },
    Rung {
        vmm: "raw-kvm+idmap",
        parent: Some(BARE),
        piece: "idmap",
        what: "trapline's KVM_SET_IDENTITY_MAP_ADDR and KVM_SET_TSS_ADDR",
    },
    Rung {
        vmm: "raw-kvm+cpuid",
        parent: Some("raw-kvm+idmap"),
        piece: "cpuid",
        what: "KVM_SET_CPUID2 with KVM's supported CPUID, as trapline sets it",
    },
    Rung {
        vmm: "raw-kvm+irqchip",
        parent: Some("raw-kvm+cpuid"),
        piece: "irqchip",
        what: "KVM_CREATE_IRQCHIP: LAPIC, IOAPIC and PICs in the kernel",
    },
    Rung {
        vmm: "raw-kvm+ioeventfds",
        parent: Some("raw-kvm+irqchip"),
        piece: "ioeventfds",
        what: "trapline's other lab ioeventfds on both buses (datamatch, doorbells, PV port)",
    },
    Rung {
        vmm: "raw-kvm+coalesced",
        parent: Some("raw-kvm+ioeventfds"),
        piece: "coalesced",
        what: "trapline's two coalesced zones (an MMIO page, a port)",
    },
    Rung {
        vmm: "raw-kvm+memslots",
        parent: Some("raw-kvm+coalesced"),
        piece: "memslots",
        what: "trapline's memslots: 128 MiB of RAM and the read-only probe page",
    },
    Rung {
        vmm: TRAPLINE_PC,
        parent: Some("raw-kvm+memslots"),
        piece: "irqfd",
        what: "an irqfd on the lab's GSI: now configured like trapline's lab machine",
    },
    Rung {
        vmm: "raw-kvm+pit",
        parent: Some("raw-kvm+irqchip"),
        piece: "pit",
        what: "KVM_CREATE_PIT2 (trapline's lab machines have none: no scenario needs it)",
    },
    Rung {
        vmm: "raw-kvm+split-irqchip",
        parent: Some("raw-kvm+cpuid"),
        piece: "split-irqchip",
        what: "KVM_CAP_SPLIT_IRQCHIP instead of the full irqchip: LAPIC in the kernel only",
    },
    Rung {
        vmm: "trapline-pc+64-ioeventfds",
        parent: Some(TRAPLINE_PC),
        piece: "64-ioeventfds",
        what: "64 more ioeventfds on each bus than trapline-pc",
    },
];

/// The arm64 rung configured like trapline's lab machine (the `virt`
/// machine with the lab's fast paths).
pub const TRAPLINE_VIRT: &str = "trapline-virt";

/// The arm64 rungs, bare first, each adding to the one before it: the
/// pieces of trapline's `virt` machine (no TSS, CPUID or PIT there; the
/// interrupt controller is the vGICv3 and its ITS).
pub const ARM64_RUNGS: [Rung; 7] = [
    Rung {
        vmm: BARE,
        parent: None,
        piece: "bare",
        what:
            "one 8 MiB memslot, the vCPU initialized as trapline's (PSCI 0.2), a bare KVM_RUN loop",
    },
    Rung {
        vmm: "raw-kvm+vgic",
        parent: Some(BARE),
        piece: "vgic",
        what: "KVM's vGICv3 (distributor and redistributors at the virt machine's addresses)",
    },
    Rung {
        vmm: "raw-kvm+its",
        parent: Some("raw-kvm+vgic"),
        piece: "its",
        what: "the vGIC's ITS, as trapline's virt machine has it",
    },
    Rung {
        vmm: "raw-kvm+ioeventfds",
        parent: Some("raw-kvm+its"),
        piece: "ioeventfds",
        what: "trapline's other lab MMIO ioeventfds (datamatch, doorbell)",
    },
    Rung {
        vmm: "raw-kvm+coalesced",
        parent: Some("raw-kvm+ioeventfds"),
        piece: "coalesced",
        what: "trapline's coalesced MMIO page",
    },
    Rung {
        vmm: "raw-kvm+memslots",
        parent: Some("raw-kvm+coalesced"),
        piece: "memslots",
        what: "trapline's memslots: 128 MiB of RAM and the read-only probe page",
    },
    Rung {
        vmm: TRAPLINE_VIRT,
        parent: Some("raw-kvm+memslots"),
        piece: "irqfd",
        what: "an irqfd on the lab's SPI: now configured like trapline's lab machine",
    },
];

/// One architecture's ladder: its rungs, the rung configured like
/// trapline's lab machine, and the in-kernel paths every rung runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ladder {
    /// The rungs, bare first.
    pub rungs: &'static [Rung],
    /// The rung configured like trapline's lab machine.
    pub top: &'static str,
    /// Scenarios every rung runs besides `noop`: the in-kernel paths.
    pub kernel_paths: &'static [&'static str],
}

/// The x86 ladder.
pub const X86: Ladder = Ladder {
    rungs: &RUNGS,
    top: TRAPLINE_PC,
    kernel_paths: &KERNEL_PATHS,
};

/// The arm64 ladder: no port I/O; the vGIC's MMIO (the paper's I/O
/// Kernel) on the rungs that have a vGIC.
pub const ARM64: Ladder = Ladder {
    rungs: &ARM64_RUNGS,
    top: TRAPLINE_VIRT,
    kernel_paths: &ARM64_KERNEL_PATHS,
};

/// The arm64 rungs' in-kernel paths.
pub const ARM64_KERNEL_PATHS: [&str; 3] = ["mmio-kernel-wildcard", "ram-read", "mmio-vgic-read"];

/// The ladder of the host this binary runs on (what the lab measures).
#[cfg(not(target_arch = "aarch64"))]
pub const HOST: Ladder = X86;
/// The ladder of the host this binary runs on (what the lab measures).
#[cfg(target_arch = "aarch64")]
pub const HOST: Ladder = ARM64;

/// The ladder a report was measured on (by its host's architecture).
pub fn for_report(report: &Report) -> &'static Ladder {
    if report.host.is_arm64() {
        &ARM64
    } else {
        &X86
    }
}

impl Ladder {
    /// The rung called `vmm` on this ladder.
    pub fn rung(&self, vmm: &str) -> Option<&'static Rung> {
        self.rungs.iter().find(|r| r.vmm == vmm)
    }

    /// Whether `rung` runs `path`: every in-kernel path, but the vGIC's
    /// read only where there is a vGIC (every arm64 rung above the bare
    /// floor).
    pub fn runs(&self, rung: &Rung, path: &str) -> bool {
        path != "mmio-vgic-read" || rung.parent.is_some()
    }

    /// `trapline-vs-<top>:<scenario>`.
    pub fn vs_name(&self, scenario: &str) -> String {
        format!("trapline-vs-{}:{scenario}", self.top)
    }
}

/// The most trapline's gross cycles on an in-kernel path may be over
/// `trapline-pc`'s, a raw VM configured like it (issue 14's goal: within
/// 5 %).
pub const VS_TRAPLINE_PC_GOAL: f64 = 1.05;

/// [`VS_TRAPLINE_PC_GOAL`] as the notes state it: `within 5 %`.
pub fn vs_trapline_pc_goal_text() -> String {
    format!("within {:.0} %", (VS_TRAPLINE_PC_GOAL - 1.0) * 100.0)
}

/// Scenarios every rung runs besides `noop`: the in-kernel paths.
pub const KERNEL_PATHS: [&str; 3] = ["pio-kernel-wildcard", "mmio-kernel-wildcard", "ram-read"];

/// `piece:<piece>:<scenario>`.
pub fn piece_name(piece: &str, scenario: &str) -> String {
    format!("piece:{piece}:{scenario}")
}

/// `trapline-vs-trapline-pc:<scenario>`.
pub fn vs_name(scenario: &str) -> String {
    format!("trapline-vs-trapline-pc:{scenario}")
}

/// `floor-gap:<scenario>`: trapline's net minus the bare floor's.
pub fn gap_name(scenario: &str) -> String {
    format!("floor-gap:{scenario}")
}

/// The rung called `vmm` on either architecture's ladder (whether a row
/// is a floor row).
pub fn rung(vmm: &str) -> Option<&'static Rung> {
    X86.rung(vmm).or_else(|| ARM64.rung(vmm))
}

/// Net median and MAD of `vmm:name` (its own noop subtracted).
fn net(report: &Report, vmm: &str, name: &str) -> Option<(f64, f64)> {
    let s = report.scenario(vmm, name)?;
    if !s.is_measured() {
        return None;
    }
    let n = s.net.as_ref()?;
    let base_mad = report
        .scenario(vmm, crate::model::BASELINE_SCENARIO)
        .and_then(|b| b.stats.as_ref())
        .map_or(0.0, |b| b.mad);
    n.median.is_finite().then_some((n.median, n.mad + base_mad))
}

/// One piece's cost on one path: the difference of two rungs' net medians.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Cost {
    /// Cycles per iteration.
    pub cycles: f64,
    /// Sum of the MADs involved (both scenarios and both baselines).
    pub spread: f64,
}

/// `vmm`'s net on `path` minus `below`'s, with their spreads summed.
fn net_difference(report: &Report, vmm: &str, below: &str, path: &str) -> Option<Cost> {
    let (a, am) = net(report, vmm, path)?;
    let (b, bm) = net(report, below, path)?;
    Some(Cost {
        cycles: a - b,
        spread: am + bm,
    })
}

/// The cost of `rung`'s piece on `path` (`None` when either rung lacks it).
pub fn piece_cost(report: &Report, rung: &Rung, path: &str) -> Option<Cost> {
    net_difference(report, rung.vmm, rung.parent?, path)
}

/// trapline's net minus the bare floor's on `path`: the whole gap.
pub fn gap(report: &Report, path: &str) -> Option<Cost> {
    net_difference(report, TRAPLINE_VMM, BARE, path)
}

/// trapline's gross median over `trapline-pc`'s on `path` (on arm64,
/// `trapline-virt`'s: the report's ladder's top rung).
pub fn vs_trapline_pc(report: &Report, path: &str) -> Option<f64> {
    let top = for_report(report).top;
    let gross = |vmm: &str| {
        report
            .scenario(vmm, path)
            .filter(|s| s.is_measured())
            .and_then(|s| s.stats.as_ref())
            .map(|s| s.median)
    };
    let (t, p) = (gross(TRAPLINE_VMM)?, gross(top)?);
    (p > 0.0 && t.is_finite()).then(|| t / p)
}

/// The range of [`vs_trapline_pc`] the two gross medians' MADs allow.
pub fn vs_trapline_pc_range(report: &Report, path: &str) -> Option<ValueRange> {
    let top = for_report(report).top;
    let gross = |vmm: &str| {
        let st = report
            .scenario(vmm, path)
            .filter(|s| s.is_measured())?
            .stats
            .as_ref()?;
        ValueRange::around(st.median, st.mad)
    };
    ValueRange::over(gross(TRAPLINE_VMM)?, gross(top)?)
}

/// The ladder's derived values: each piece's cost per in-kernel path, the
/// whole gap between trapline and the bare floor, and trapline against a
/// raw VM configured like it.
pub fn values(report: &Report) -> Vec<Derived> {
    let ladder = for_report(report);
    let mut out = Vec::new();
    for r in ladder.rungs {
        let Some(parent) = r.parent else { continue };
        for &path in ladder.kernel_paths {
            let Some(c) = piece_cost(report, r, path) else {
                continue;
            };
            out.push(Derived {
                name: piece_name(r.piece, path),
                value: c.cycles,
                unit: Unit::Cycles.to_string(),
                formula: format!(
                    "net {} − net {}",
                    scenario_key(r.vmm, path),
                    scenario_key(parent, path)
                ),
                note: Some(format!(
                    "what {} costs per iteration of {path}; spread ±{} cyc (sum of MADs)",
                    r.what,
                    crate::fmt::grouped(c.spread)
                )),
                range: ValueRange::around(c.cycles, c.spread),
                goal: None,
            });
        }
    }
    for &path in ladder.kernel_paths {
        if let Some(c) = gap(report, path) {
            out.push(Derived {
                name: gap_name(path),
                value: c.cycles,
                unit: Unit::Cycles.to_string(),
                formula: format!("net {path} − net {}", scenario_key(BARE, path)),
                note: Some(format!(
                    "the gap the ladder's pieces explain; spread ±{} cyc (sum of MADs)",
                    crate::fmt::grouped(c.spread)
                )),
                range: ValueRange::around(c.cycles, c.spread),
                goal: None,
            });
        }
        if let Some(v) = vs_trapline_pc(report, path) {
            out.push(Derived {
                name: ladder.vs_name(path),
                value: v,
                unit: Unit::Ratio.to_string(),
                formula: format!("{path} / {}", scenario_key(ladder.top, path)),
                note: Some(format!(
                    "trapline's gross cycles per iteration over a raw VM with the same \
                     configuration (goal: {})",
                    vs_trapline_pc_goal_text()
                )),
                range: vs_trapline_pc_range(report, path),
                goal: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostInfo, RunConfig, Sample, ScenarioResult, ToolInfo};

    fn s(vmm: &str, name: &str, per_iter: u64) -> ScenarioResult {
        ScenarioResult::new(name, "floor", "t")
            .with_vmm(vmm)
            .with_samples(vec![Sample::new(10, per_iter * 10)])
    }

    #[test]
    fn every_parent_is_a_rung_before_it() {
        for (i, r) in RUNGS.iter().enumerate() {
            if let Some(p) = r.parent {
                let at = RUNGS
                    .iter()
                    .position(|x| x.vmm == p)
                    .expect("parent exists");
                assert!(at < i, "{} comes after its parent {p}", r.vmm);
            }
        }
        assert_eq!(RUNGS[0].vmm, BARE);
        assert!(rung(TRAPLINE_PC).is_some());
    }

    #[test]
    fn pieces_gap_and_ratio() {
        let mut r = Report::new(
            ToolInfo::default(),
            HostInfo::default(),
            RunConfig::default(),
        );
        r.scenarios = vec![
            s(TRAPLINE_VMM, "noop", 1000),
            s(TRAPLINE_VMM, "pio-kernel-wildcard", 2600),
            s(BARE, "noop", 1000),
            s(BARE, "pio-kernel-wildcard", 2000),
            s("raw-kvm+idmap", "noop", 1000),
            s("raw-kvm+idmap", "pio-kernel-wildcard", 2100),
            s(TRAPLINE_PC, "noop", 1000),
            s(TRAPLINE_PC, "pio-kernel-wildcard", 2500),
        ];
        r.finish();
        assert_eq!(
            r.derived("piece:idmap:pio-kernel-wildcard").unwrap().value,
            100.0
        );
        assert_eq!(
            r.derived("floor-gap:pio-kernel-wildcard").unwrap().value,
            600.0
        );
        assert_eq!(
            r.derived("trapline-vs-trapline-pc:pio-kernel-wildcard")
                .unwrap()
                .value,
            1.04
        );
        // No raw-kvm+cpuid rows: no cpuid piece.
        assert!(r.derived("piece:cpuid:pio-kernel-wildcard").is_none());
        assert!(r.derived("piece:idmap:ram-read").is_none());
    }

    #[test]
    fn an_arm64_report_takes_the_arm64_ladder_and_its_mmio_premium() {
        let mut r = Report::new(
            ToolInfo::default(),
            HostInfo {
                arch: Some(crate::model::ARCH_ARM64.into()),
                ..HostInfo::default()
            },
            RunConfig::default(),
        );
        r.scenarios = vec![
            s(TRAPLINE_VMM, "noop", 10),
            s(TRAPLINE_VMM, "mmio-vgic-read", 300),
            s(TRAPLINE_VMM, "mmio-user-write", 2000),
            s(TRAPLINE_VMM, "mmio-kernel-wildcard", 400),
            s(BARE, "noop", 10),
            s(BARE, "mmio-user-write", 1900),
            s(BARE, "mmio-kernel-wildcard", 380),
            s("raw-kvm+vgic", "noop", 10),
            s("raw-kvm+vgic", "mmio-kernel-wildcard", 390),
            s("raw-kvm+vgic", "mmio-vgic-read", 280),
            s("raw-kvm+its", "noop", 10),
            s("raw-kvm+its", "mmio-vgic-read", 290),
            s(TRAPLINE_VIRT, "noop", 10),
            s(TRAPLINE_VIRT, "mmio-vgic-read", 294),
        ];
        r.finish();
        assert_eq!(for_report(&r).top, TRAPLINE_VIRT);
        assert_eq!(
            r.derived("piece:vgic:mmio-kernel-wildcard").unwrap().value,
            10.0
        );
        assert_eq!(r.derived("piece:its:mmio-vgic-read").unwrap().value, 10.0);
        assert_eq!(
            r.derived("floor-gap:mmio-kernel-wildcard").unwrap().value,
            20.0
        );
        let vs = r
            .derived("trapline-vs-trapline-virt:mmio-vgic-read")
            .unwrap();
        assert!((vs.value - 300.0 / 294.0).abs() < 1e-9, "{}", vs.value);
        assert!(r
            .derived("trapline-vs-trapline-pc:mmio-vgic-read")
            .is_none());
        // The premium on MMIO, on trapline and on the bare floor.
        assert_eq!(r.derived("user-exit-premium").unwrap().value, 1600.0);
        assert_eq!(
            r.derived("raw-kvm:user-exit-premium").unwrap().value,
            1520.0
        );
        let ratio = r.derived(crate::derive::PREMIUM_RATIO_RAW_KVM_VMM).unwrap();
        assert!((ratio.value - 1600.0 / 1520.0).abs() < 1e-9);
        // The x86 ladder's names are not used for an arm64 report.
        assert!(r.derived("piece:idmap:ram-read").is_none());
        let goals = crate::derive::goals::goal_checks(&r);
        assert!(goals
            .iter()
            .any(|g| g.derived.as_deref() == Some("trapline-vs-trapline-virt:mmio-vgic-read")));
        assert!(goals
            .iter()
            .any(|g| g.derived.as_deref() == Some(crate::derive::PREMIUM_RATIO_RAW_KVM_VMM)));
        // The vmm view: the MMIO exits' costs, the arm64 ladder's table.
        let v = crate::views::vmm::VmmView::build(&r);
        assert_eq!(v.cost_per_exit[0].name, "mmio-user-write");
        assert_eq!(v.cost_per_exit[2].value, Some(1900.0));
        assert_eq!(v.ladder_paths, &ARM64_KERNEL_PATHS);
        assert!(v
            .ladder
            .iter()
            .any(|l| l.name == "trapline-vs-trapline-virt" && l.values[2].is_some()));
        assert!(v.ladder.iter().any(|l| l.name == "piece:vgic"));
    }
}
