//! Start-up's split: where the CPU time from exec to the first KVM_RUN
//! ([`super::VMM_CPU_TO_FIRST_KVM_RUN`]) goes. A `trapline run` with
//! `TRAPLINE_FOOTPRINT=1` prints one line per phase, up to a named mark
//! (trapline-machine's `footprint::marks`): the process CPU time and the
//! page faults spent in it. The lab keeps each phase's median as two
//! derived values, [`cpu_name`] (µs) and [`faults_name`] (a count); this
//! table says what each mark's phase covers and to which group it belongs.

use crate::model::Report;
use crate::unit::Unit;

/// Prefix of a phase's median CPU time (unit [`Unit::Micros`]).
pub const CPU_PREFIX: &str = "vmm-startup:";
/// Prefix of a phase's median page faults (unit [`Unit::Count`]).
pub const FAULTS_PREFIX: &str = "vmm-startup-faults:";

/// Who a phase's CPU time belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    /// The kernel's exec, static glibc's start-up and Rust's runtime, up to
    /// `main`: what any static program pays.
    ExecToMain,
    /// KVM creating the VM and its vCPUs (the ioctls, with the little
    /// set-up trapline does around them).
    KvmCreation,
    /// trapline's own work.
    Trapline,
}

impl Group {
    /// Every group, in the order shown.
    pub const ALL: [Group; 3] = [Group::ExecToMain, Group::KvmCreation, Group::Trapline];

    /// The group's name in tables and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Group::ExecToMain => "exec-to-main",
            Group::KvmCreation => "kvm-creation",
            Group::Trapline => "trapline",
        }
    }

    /// What the group holds, in words.
    pub const fn what(self) -> &'static str {
        match self {
            Group::ExecToMain => {
                "exec and the runtimes' start, to main (any static program pays it)"
            }
            Group::KvmCreation => {
                "KVM's VM and vCPU creation ioctls, with trapline's set-up around them"
            }
            Group::Trapline => "trapline's own work",
        }
    }
}

/// One mark's phase: from the previous mark (exec, for the first) to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// The mark's name as the child prints it (`until="…"`).
    pub mark: &'static str,
    /// The phase's short name in derived values' names.
    pub slug: &'static str,
    /// Its group.
    pub group: Group,
    /// What the phase covers, in words.
    pub what: &'static str,
}

/// Every phase a `trapline run` marks, in order. The only copy of what
/// the marks cover (the marks themselves are in trapline-machine and the
/// cli; a mark not listed here is shown under its own name, as
/// trapline's).
pub const PHASES: [Phase; 10] = [
    Phase {
        mark: "main",
        slug: "exec-to-main",
        group: Group::ExecToMain,
        what: "exec, static glibc's start-up (its CPUID probe of the caches included) and \
               Rust's runtime start, to trapline's main",
    },
    Phase {
        mark: "arguments parsed",
        slug: "arguments",
        group: Group::Trapline,
        what: "the command line parsed (clap)",
    },
    Phase {
        mark: "files opened",
        slug: "files",
        group: Group::Trapline,
        what: "the image opened (a file mapped, a built-in one borrowed), /dev/kvm opened",
    },
    Phase {
        mark: "vm created",
        slug: "vm",
        group: Group::KvmCreation,
        what: "the VM: KVM_CREATE_VM, its TSS and identity map, the in-kernel irqchip and PIT, \
               guest RAM mapped and given to KVM as a memory slot, KVM_GET_SUPPORTED_CPUID",
    },
    Phase {
        mark: "image loaded",
        slug: "image",
        group: Group::Trapline,
        what: "the image and its boot data written into guest RAM (first touches of its pages)",
    },
    Phase {
        mark: "platform built",
        slug: "platform",
        group: Group::Trapline,
        what: "the platform: firmware tables, buses, devices and their eventfds",
    },
    Phase {
        mark: "vcpus created",
        slug: "vcpus",
        group: Group::KvmCreation,
        what: "the vCPUs: KVM_CREATE_VCPU, their CPUID (KVM_SET_CPUID2) and registers",
    },
    Phase {
        mark: "vcpu filter compiled",
        slug: "vcpu-filter",
        group: Group::Trapline,
        what: "the vCPU threads' seccomp filter compiled",
    },
    Phase {
        mark: "worker started",
        slug: "virtio-worker",
        group: Group::Trapline,
        what: "the virtio worker thread (started only with disks)",
    },
    Phase {
        mark: "first KVM_RUN",
        slug: "vcpu-thread",
        group: Group::Trapline,
        what: "vCPU 0's thread spawned and started, up to its first KVM_RUN",
    },
];

/// The phase of a mark, if it is a known one.
pub fn phase(mark: &str) -> Option<&'static Phase> {
    PHASES.iter().find(|p| p.mark == mark)
}

/// A mark's slug: the known phase's, otherwise the mark's name with
/// anything but letters and digits turned into `-`.
pub fn slug(mark: &str) -> String {
    match phase(mark) {
        Some(p) => p.slug.to_string(),
        None => mark
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect(),
    }
}

/// The derived value holding a mark's median CPU time (µs).
pub fn cpu_name(mark: &str) -> String {
    format!("{CPU_PREFIX}{}", slug(mark))
}

/// The derived value holding a mark's median page faults.
pub fn faults_name(mark: &str) -> String {
    format!("{FAULTS_PREFIX}{}", slug(mark))
}

/// Whether a derived value is one of start-up's phases or the start-up
/// floor's (kept by [`Report::finish`] like the footprint they split).
pub fn is_phase_value(name: &str) -> bool {
    name.starts_with(CPU_PREFIX)
        || name.starts_with(FAULTS_PREFIX)
        || super::startfloor::is_floor_value(name)
}

/// One phase as a report holds it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PhaseValue {
    /// Its slug (`exec-to-main`, `arguments`, …).
    pub phase: String,
    /// Its group.
    pub group: Group,
    /// Median CPU time, µs.
    pub cpu_us: f64,
    /// Median page faults, when recorded.
    pub faults: Option<f64>,
    /// What it covers.
    pub what: String,
}

/// The phases a report holds, in [`PHASES`] order, then any other marks in
/// the report's order (as trapline's work).
pub fn phases(report: &Report) -> Vec<PhaseValue> {
    let cpu = report.derived.iter().filter_map(|d| {
        let slug = d.name.strip_prefix(CPU_PREFIX)?;
        (d.unit == Unit::Micros.as_str() && d.value.is_finite()).then_some((slug, d))
    });
    let mut out: Vec<PhaseValue> = cpu
        .map(|(slug, d)| {
            let known = PHASES.iter().find(|p| p.slug == slug);
            let faults = report
                .derived(&format!("{FAULTS_PREFIX}{slug}"))
                .filter(|f| f.unit == Unit::Count.as_str() && f.value.is_finite())
                .map(|f| f.value);
            PhaseValue {
                phase: slug.to_string(),
                group: known.map_or(Group::Trapline, |p| p.group),
                cpu_us: d.value,
                faults,
                what: known.map_or_else(|| d.formula.clone(), |p| p.what.to_string()),
            }
        })
        .collect();
    let order = |v: &PhaseValue| {
        PHASES
            .iter()
            .position(|p| p.slug == v.phase)
            .unwrap_or(PHASES.len())
    };
    out.sort_by_key(order);
    out
}

/// A group's share: the sum of its phases' medians.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GroupValue {
    /// The group.
    pub group: Group,
    /// Sum of its phases' median CPU times, µs.
    pub cpu_us: f64,
    /// Sum of its phases' median page faults (phases without a count add
    /// nothing).
    pub faults: f64,
    /// What the group holds.
    pub what: &'static str,
}

/// Each group's sum over `phases`, in [`Group::ALL`] order; groups with no
/// phase are left out.
pub fn groups(phases: &[PhaseValue]) -> Vec<GroupValue> {
    Group::ALL
        .iter()
        .filter_map(|&g| {
            let mine: Vec<&PhaseValue> = phases.iter().filter(|p| p.group == g).collect();
            (!mine.is_empty()).then(|| GroupValue {
                group: g,
                cpu_us: mine.iter().map(|p| p.cpu_us).sum(),
                faults: mine.iter().filter_map(|p| p.faults).sum(),
                what: g.what(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_have_distinct_slugs_and_names() {
        for (i, p) in PHASES.iter().enumerate() {
            assert!(PHASES[..i]
                .iter()
                .all(|q| q.slug != p.slug && q.mark != p.mark));
            assert_eq!(slug(p.mark), p.slug);
        }
        assert_eq!(cpu_name("main"), "vmm-startup:exec-to-main");
        assert_eq!(
            faults_name("first KVM_RUN"),
            "vmm-startup-faults:vcpu-thread"
        );
        assert_eq!(slug("New Mark_2"), "new-mark-2");
        assert!(is_phase_value("vmm-startup:vm"));
        assert!(!is_phase_value("vmm-rss-beyond-guest"));
    }
}
