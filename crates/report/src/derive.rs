//! Values computed from several scenarios: what a user-space exit costs
//! beyond an in-kernel one, and how much of that is trapline's own.
//!
//! Every helper returns `None` when an input is missing, unmeasured or would
//! make the value meaningless (a zero denominator); it never panics.
//! Differences use gross medians of the same VMM, so the loop baseline
//! cancels out. [`findings`] holds the seeds' conclusions, computed the
//! same way for their published numbers and for this host.

pub mod findings;
pub mod goals;
pub mod ladder;
pub mod startup;

use crate::fmt::cycles;
use crate::model::{cycles_to_ns, scenario_key, Derived, Report, ValueRange, TRAPLINE_VMM};
use crate::unit::Unit;

/// `pio-user-out − pio-kernel-wildcard`: the cost of completing a PIO write
/// in user space rather than with an in-kernel ioeventfd.
pub const USER_EXIT_PREMIUM: &str = "user-exit-premium";
/// `vmm-floor-pio − pio-kernel-wildcard`: the same premium when trapline
/// answers in its run loop before any bus lookup: its own floor. (The
/// floor of KVM itself, with no VMM around it, is the `raw-kvm` VMM's
/// user-exit premium.)
pub const VMM_FLOOR_PREMIUM: &str = "vmm-floor-premium";
/// `pio-user-out − vmm-floor-pio`: what trapline's exit decoding and bus
/// dispatch add on top of the floor.
pub const DISPATCH_OVERHEAD: &str = "dispatch-overhead";
/// `user-exit-premium / vmm-floor-premium`.
pub const PREMIUM_RATIO: &str = "premium-ratio-vs-vmm-floor";
/// `user-exit-premium / raw-kvm:user-exit-premium`, when a `raw-kvm` VMM
/// was measured alongside.
pub const PREMIUM_RATIO_RAW_KVM_VMM: &str = "premium-ratio-vs-raw-kvm";
/// trapline's goal for [`PREMIUM_RATIO_RAW_KVM_VMM`]: a user exit through
/// trapline costs at most 10 % more than through a bare KVM_RUN loop (the
/// lab's first goal, issue 3).
pub const PREMIUM_RATIO_RAW_KVM_GOAL: f64 = 1.10;

/// CPU time (unit `ms`) from exec of a fresh `trapline run` to its first
/// KVM_RUN, median over several processes. Measured by the lab outside the
/// scenarios, so [`crate::Report::finish`] keeps it rather than recomputing.
pub const VMM_CPU_TO_FIRST_KVM_RUN: &str = "vmm-cpu-to-first-kvm-run";
/// Resident memory (unit `MiB`) of a `trapline run` process outside guest
/// RAM; measured like [`VMM_CPU_TO_FIRST_KVM_RUN`].
pub const VMM_RSS_BEYOND_GUEST: &str = "vmm-rss-beyond-guest";
/// The footprint values: derived values not computed from scenarios.
pub const FOOTPRINT: [&str; 2] = [VMM_CPU_TO_FIRST_KVM_RUN, VMM_RSS_BEYOND_GUEST];

/// Scenario names the standard values use.
pub mod names {
    /// PIO write completed in user space.
    pub const PIO_USER_OUT: &str = "pio-user-out";
    /// PIO write completed by a wildcard ioeventfd.
    pub const PIO_KERNEL_WILDCARD: &str = "pio-kernel-wildcard";
    /// PIO write answered by the run loop's floor handler.
    pub const VMM_FLOOR_PIO: &str = "vmm-floor-pio";
    /// MMIO write completed in user space: the user exit where there is
    /// no port I/O (arm64).
    pub const MMIO_USER_WRITE: &str = "mmio-user-write";
    /// MMIO write completed by a wildcard ioeventfd.
    pub const MMIO_KERNEL_WILDCARD: &str = "mmio-kernel-wildcard";
    /// The VMM name of a bare KVM_RUN loop measured as a peer.
    pub const RAW_KVM_VMM: &str = "raw-kvm";
    /// The VMM name of trapline's rows measured without the exit profile.
    pub const UNPROFILED_VMM: &str = "trapline-nostat";
}

/// trapline's own handling cycles per user exit, measured directly: the
/// median over samples of `pio-user-out`'s handling time (the exit
/// profile's TSC pair from KVM_RUN's return to the next KVM_RUN).
pub const HANDLING_PER_USER_EXIT: &str = "handling-per-user-exit";
/// `pio-user-out` with the exit profile on minus the same without it: what
/// `--stat` adds per user exit.
pub const STAT_OVERHEAD: &str = "stat-overhead";
/// [`STAT_OVERHEAD`] as a fraction of [`USER_EXIT_PREMIUM`] (goal:
/// [`STAT_OVERHEAD_SHARE_GOAL`]).
pub const STAT_OVERHEAD_SHARE: &str = "stat-overhead-share-of-premium";
/// The most [`STAT_OVERHEAD_SHARE`] may be (the profile's issue, 13).
pub const STAT_OVERHEAD_SHARE_GOAL: f64 = 0.05;

/// `minuend − subtrahend` (median cycles per iteration, both on `vmm`),
/// named `name` (prefixed `vmm:` for VMMs other than trapline).
pub fn difference(
    report: &Report,
    vmm: &str,
    name: &str,
    minuend: &str,
    subtrahend: &str,
    meaning: &str,
) -> Option<Derived> {
    let a = report.scenario(vmm, minuend)?;
    let b = report.scenario(vmm, subtrahend)?;
    let (sa, sb) = (a.stats.as_ref()?, b.stats.as_ref()?);
    if !a.is_measured() || !b.is_measured() {
        return None;
    }
    let value = sa.median - sb.median;
    if !value.is_finite() {
        return None;
    }
    let mut note = format!(
        "{meaning}; spread ±{} cyc (sum of MADs)",
        crate::fmt::grouped(sa.mad + sb.mad)
    );
    if let Some(ns) = cycles_to_ns(value, report.host.tsc_khz) {
        note.push_str(&format!("; ≈ {}", crate::fmt::time_ns(ns)));
    }
    Some(Derived {
        name: scenario_key(vmm, name),
        value,
        unit: Unit::Cycles.to_string(),
        formula: format!(
            "{} − {}",
            scenario_key(vmm, minuend),
            scenario_key(vmm, subtrahend)
        ),
        note: Some(note),
        range: ValueRange::around(value, sa.mad + sb.mad),
        goal: None,
    })
}

/// `num / den` as a unitless ratio (`x`); `None` unless both are finite and
/// `den` is positive.
pub fn ratio(name: &str, num: &Derived, den: &Derived, meaning: &str) -> Option<Derived> {
    if den.value.is_nan() || den.value <= 0.0 || !num.value.is_finite() || !den.value.is_finite() {
        return None;
    }
    Some(Derived {
        name: name.to_string(),
        value: num.value / den.value,
        unit: Unit::Ratio.to_string(),
        formula: format!("{} / {}", num.name, den.name),
        note: Some(meaning.to_string()),
        range: num
            .range
            .zip(den.range)
            .and_then(|(n, d)| ValueRange::over(n, d)),
        goal: None,
    })
}

impl Report {
    /// Computes every summary field: per-scenario stats, ns and exits per
    /// iteration, net cost over each VMM's baseline (none for
    /// [`SELF_TIMED`](crate::model::SELF_TIMED) scenarios), and the standard
    /// derived values (replacing those already there; values measured
    /// outside the scenarios, such as [`FOOTPRINT`] and start-up's phases
    /// ([`startup`]), are kept). Idempotent.
    pub fn finish(&mut self) {
        self.summarize();
        let kept: Vec<Derived> = self
            .derived
            .drain(..)
            .filter(|d| FOOTPRINT.contains(&d.name.as_str()) || startup::is_phase_value(&d.name))
            .collect();
        self.derived = standard(self);
        self.derived.extend(kept);
        self.judge_goals();
    }
}

/// The standard derived values for every VMM in the report (names prefixed
/// `vmm:` for VMMs other than trapline), in a fixed order.
pub fn standard(report: &Report) -> Vec<Derived> {
    let mut out = Vec::new();
    let mut vmms: Vec<&str> = Vec::new();
    for s in &report.scenarios {
        if !vmms.contains(&s.vmm.as_str()) {
            vmms.push(&s.vmm);
        }
    }
    // trapline first, then peers in run order.
    vmms.sort_by_key(|v| *v != TRAPLINE_VMM);
    for vmm in vmms {
        // On PIO where there is port I/O; on arm64 (no PIO) the same
        // premium is taken on MMIO.
        let premium = difference(
            report,
            vmm,
            USER_EXIT_PREMIUM,
            names::PIO_USER_OUT,
            names::PIO_KERNEL_WILDCARD,
            "cost of a PIO write completed in user space over one completed by an in-kernel ioeventfd",
        )
        .or_else(|| {
            report.scenario(vmm, names::PIO_USER_OUT).is_none().then(|| {
                difference(
                    report,
                    vmm,
                    USER_EXIT_PREMIUM,
                    names::MMIO_USER_WRITE,
                    names::MMIO_KERNEL_WILDCARD,
                    "cost of an MMIO write completed in user space over one completed by an in-kernel ioeventfd",
                )
            })?
        });
        let floor = difference(
            report,
            vmm,
            VMM_FLOOR_PREMIUM,
            names::VMM_FLOOR_PIO,
            names::PIO_KERNEL_WILDCARD,
            "user-exit premium when trapline's run loop answers before any bus lookup",
        );
        let dispatch = difference(
            report,
            vmm,
            DISPATCH_OVERHEAD,
            names::PIO_USER_OUT,
            names::VMM_FLOOR_PIO,
            "exit decoding and bus dispatch added on top of the floor",
        );
        let ratio_v = match (&premium, &floor) {
            (Some(p), Some(f)) => ratio(
                &scenario_key(vmm, PREMIUM_RATIO),
                p,
                f,
                "user-exit premium as a multiple of trapline's own floor",
            ),
            _ => None,
        };
        out.extend([premium, floor, dispatch, ratio_v].into_iter().flatten());
    }
    let raw_vmm_premium = scenario_key(names::RAW_KVM_VMM, USER_EXIT_PREMIUM);
    let vs_raw = match (
        out.iter().find(|d| d.name == USER_EXIT_PREMIUM),
        out.iter().find(|d| d.name == raw_vmm_premium),
    ) {
        (Some(p), Some(r)) => ratio(
            PREMIUM_RATIO_RAW_KVM_VMM,
            p,
            r,
            "trapline's user-exit premium as a multiple of a bare KVM_RUN loop's",
        ),
        _ => None,
    };
    out.extend(vs_raw);
    out.extend(profile_values(report, &out));
    out.extend(crate::derive::ladder::values(report));
    out
}

/// The exit profile's values: trapline's handling time per user exit and
/// the profile's own overhead.
fn profile_values(report: &Report, standard: &[Derived]) -> Vec<Derived> {
    let mut out = Vec::new();
    let user_out = report.scenario(TRAPLINE_VMM, names::PIO_USER_OUT);
    // Where there is no port I/O (arm64), the MMIO user exit's.
    let (user_exit, what) = match user_out {
        Some(s) => (Some(s), "PIO"),
        None => (
            report.scenario(TRAPLINE_VMM, names::MMIO_USER_WRITE),
            "MMIO",
        ),
    };
    if let Some(h) = user_exit
        .filter(|s| s.is_measured())
        .and_then(|s| s.handling.as_ref())
    {
        let mut note = format!(
            "trapline's own cycles per {what} exit to user space, {clock} from KVM_RUN's return to the next \
             KVM_RUN, median of {} samples; spread ±{} cyc (MAD)",
            h.n,
            crate::fmt::grouped(h.mad),
            clock = report.host.counter.as_deref().unwrap_or("TSC"),
        );
        if let Some(ns) = cycles_to_ns(h.median, report.host.tsc_khz) {
            note.push_str(&format!("; ≈ {}", crate::fmt::time_ns(ns)));
        }
        out.push(Derived {
            name: HANDLING_PER_USER_EXIT.into(),
            value: h.median,
            unit: Unit::Cycles.to_string(),
            formula: format!(
                "{}.handling.median",
                user_exit.map_or(names::PIO_USER_OUT, |s| s.name.as_str())
            ),
            note: Some(note),
            range: ValueRange::around(h.median, h.mad),
            goal: None,
        });
    }
    let user_name = user_exit.map_or(names::PIO_USER_OUT, |s| s.name.as_str());
    let off = report.scenario(names::UNPROFILED_VMM, user_name);
    if let (Some(on), Some(off)) = (user_exit, off) {
        if let (true, true, Some(a), Some(b)) = (
            on.is_measured(),
            off.is_measured(),
            on.stats.as_ref(),
            off.stats.as_ref(),
        ) {
            let overhead = Derived {
                name: STAT_OVERHEAD.into(),
                value: a.median - b.median,
                unit: Unit::Cycles.to_string(),
                formula: format!(
                    "{} − {}",
                    user_name,
                    scenario_key(names::UNPROFILED_VMM, user_name)
                ),
                note: Some(format!(
                    "what the exit profile (`--stat`) adds per user exit; spread ±{} cyc (sum of MADs)",
                    crate::fmt::grouped(a.mad + b.mad)
                )),
                range: ValueRange::around(a.median - b.median, a.mad + b.mad),
                goal: None,
            };
            let share = standard
                .iter()
                .find(|d| d.name == USER_EXIT_PREMIUM)
                .and_then(|p| {
                    ratio(
                        STAT_OVERHEAD_SHARE,
                        &overhead,
                        p,
                        &format!(
                            "the profile's overhead as a fraction of the user-exit premium (goal: \
                             under {STAT_OVERHEAD_SHARE_GOAL})"
                        ),
                    )
                });
            out.push(overhead);
            out.extend(share);
        }
    }
    out
}

/// The read-only ECAM config read compared (seed 004's view); also the
/// last of [`findings::pci_config::READS`], so the name is written once.
pub const ECAM_RO_READ: &str = "pci-config-read-ecam-ro";
/// The RAM read the read-only ECAM read is compared with.
pub const RAM_READ: &str = "ram-read";
/// Name of the derived comparison of a read-only ECAM read with a RAM read.
pub const ECAM_RO_VS_RAM: &str = "ecam-ro-vs-ram-read";

/// `pci-config-read-ecam-ro ÷ ram-read` (medians), when both were
/// measured: near 1 when the read-only mapping means no exit.
pub fn ecam_ro_vs_ram(report: &Report) -> Option<Derived> {
    let (ro, ram) = (
        findings::median(report, ECAM_RO_READ),
        findings::median(report, RAM_READ),
    );
    let value = crate::guarded::ratio(ro, ram)?;
    let (a, b) = (ro?, ram?);
    Some(Derived {
        name: ECAM_RO_VS_RAM.to_string(),
        value,
        unit: Unit::Ratio.to_string(),
        formula: format!("{ECAM_RO_READ} ÷ {RAM_READ} (medians)"),
        note: Some(format!(
            "a config read through the read-only ECAM mapping costs {} cycles against {} for a \
             RAM read ({}{} cycles); near 1x means it never exits",
            cycles(a),
            cycles(b),
            if a - b >= 0.0 { "+" } else { "" },
            cycles(a - b)
        )),
        range: None,
        goal: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostInfo, RunConfig, Sample, ScenarioResult, ToolInfo};

    fn scenario(name: &str, per_iter: u64) -> ScenarioResult {
        ScenarioResult::new(name, "pio", "test").with_samples(vec![Sample::new(10, per_iter * 10)])
    }

    fn report(scenarios: Vec<ScenarioResult>) -> Report {
        let mut r = Report::new(
            ToolInfo::default(),
            HostInfo::default(),
            RunConfig::default(),
        );
        r.scenarios = scenarios;
        r.finish();
        r
    }

    #[test]
    fn standard_values() {
        let r = report(vec![
            scenario("pio-user-out", 9000),
            scenario("pio-kernel-wildcard", 3000),
            scenario("vmm-floor-pio", 7000),
        ]);
        assert_eq!(r.derived(USER_EXIT_PREMIUM).unwrap().value, 6000.0);
        assert_eq!(r.derived(VMM_FLOOR_PREMIUM).unwrap().value, 4000.0);
        assert_eq!(r.derived(DISPATCH_OVERHEAD).unwrap().value, 2000.0);
        assert_eq!(r.derived(PREMIUM_RATIO).unwrap().value, 1.5);
        assert_eq!(
            r.derived(USER_EXIT_PREMIUM).unwrap().formula,
            "pio-user-out − pio-kernel-wildcard"
        );
    }

    #[test]
    fn missing_input_is_absent() {
        let r = report(vec![
            scenario("pio-user-out", 9000),
            ScenarioResult::new("pio-kernel-wildcard", "pio", "x").unsupported("no ioeventfd"),
        ]);
        assert!(r.derived.is_empty());
        assert!(report(vec![]).derived.is_empty());
    }

    #[test]
    fn peer_vmm_prefixed() {
        let r = report(vec![
            scenario("pio-user-out", 9000),
            scenario("pio-kernel-wildcard", 3000),
            scenario("pio-user-out", 5000).with_vmm("raw-kvm"),
            scenario("pio-kernel-wildcard", 3000).with_vmm("raw-kvm"),
        ]);
        assert_eq!(
            r.derived("raw-kvm:user-exit-premium").unwrap().value,
            2000.0
        );
        assert_eq!(r.derived(PREMIUM_RATIO_RAW_KVM_VMM).unwrap().value, 3.0);
    }

    #[test]
    fn profile_values_need_handling_times_and_an_unprofiled_row() {
        let mut on = scenario("pio-user-out", 9000);
        on.samples[0].handling = Some(crate::model::Handling {
            exits: 10,
            cycles: 4000,
        });
        let r = report(vec![
            on.clone(),
            scenario("pio-kernel-wildcard", 3000),
            scenario("pio-user-out", 8700).with_vmm(names::UNPROFILED_VMM),
        ]);
        assert_eq!(r.derived(HANDLING_PER_USER_EXIT).unwrap().value, 400.0);
        assert_eq!(r.derived(STAT_OVERHEAD).unwrap().value, 300.0);
        assert_eq!(r.derived(STAT_OVERHEAD_SHARE).unwrap().value, 0.05);
        let names: Vec<&str> = r.derived.iter().map(|d| d.name.as_str()).collect();
        let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert!(
            at(HANDLING_PER_USER_EXIT) < at(STAT_OVERHEAD)
                && at(STAT_OVERHEAD) < at(STAT_OVERHEAD_SHARE)
        );
        // Without the unprofiled row, no overhead; without handling, no handling value.
        let r = report(vec![
            scenario("pio-user-out", 9000),
            scenario("pio-kernel-wildcard", 3000),
        ]);
        assert!(r.derived(HANDLING_PER_USER_EXIT).is_none());
        assert!(r.derived(STAT_OVERHEAD).is_none());
    }

    #[test]
    fn zero_denominator_is_absent() {
        let a = Derived {
            name: "a".into(),
            value: 1.0,
            unit: Unit::Cycles.to_string(),
            formula: String::new(),
            note: None,
            range: None,
            goal: None,
        };
        let z = Derived {
            value: 0.0,
            ..a.clone()
        };
        assert!(ratio("r", &a, &z, "").is_none());
    }
}
