//! The results model: what one `trapline bench` run measured, as written to
//! and read from `trapline-bench/1` JSON.
//!
//! The runner fills raw [`Sample`]s into [`ScenarioResult`]s, pushes them
//! into a [`Report`] and calls [`Report::finish`], which computes every
//! summary field (stats, net, ns, exits per iteration, derived values).
//! Everything a renderer shows is in the JSON, so a saved report renders
//! exactly as the live one did.

mod anatomy;
mod exit_counts;
pub(crate) mod tails;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use trapline_bus::{ExitKind, ExitSnapshot};

pub use anatomy::{Anatomy, AnatomyPath, RoundTripSource, Spread};

use crate::error::ReportError;
use crate::noise::NoiseFlag;
use crate::stats::Stats;
pub use tails::{Tails, OVERHEAD_GOAL_PCT, PERCENTILES};

/// The schema identifier this crate writes and reads.
pub const SCHEMA: &str = "trapline-bench/1";

/// The largest saved report [`Report::load`] reads. A default run's
/// report is under a megabyte and grows with `--repeat` (a sample is a few
/// hundred bytes): 128 MiB holds every run the flags allow with room to
/// spare, and a pipe or device that never ends is refused after it.
pub const MAX_REPORT_BYTES: u64 = 128 << 20;

/// The scenario whose median is subtracted from every scenario of the same
/// VMM to give its net cost.
pub const BASELINE_SCENARIO: &str = "noop";

/// The VMM name of trapline's own scenarios; other VMMs' scenarios are keyed
/// `vmm:name`.
pub const TRAPLINE_VMM: &str = "trapline";

/// Scenarios whose cycles are timed inside the guest around the operation
/// itself, not around a loop of it (see the ABI's scenario list): `eoi` and
/// `eoi-x2apic` sum the EOI writes timed in the interrupt handler, `irqfd`
/// sums host-stamp-to-guest-handler delays. The noop baseline is the cost of
/// an empty *loop*, so subtracting it from them means nothing:
/// [`Report::finish`] leaves their `net` empty (`None`) on every VMM, and the
/// views show no net value for them. The only copy of this list.
pub const SELF_TIMED: [&str; 3] = ["eoi", "eoi-x2apic", "irqfd"];

/// One benchmark run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`SCHEMA`] for reports this build writes.
    pub schema: String,
    /// The program that wrote the report.
    pub tool: ToolInfo,
    /// The machine it ran on.
    pub host: HostInfo,
    /// How the run was configured.
    pub config: RunConfig,
    /// One entry per scenario and VMM, in run order.
    #[serde(default)]
    pub scenarios: Vec<ScenarioResult>,
    /// Values computed from several scenarios (see [`crate::derive`]).
    #[serde(default)]
    pub derived: Vec<Derived>,
    /// When the run started (RFC 3339, as the runner formats it).
    #[serde(default)]
    pub started_at: String,
    /// Wall-clock duration of the whole run.
    #[serde(default)]
    pub wall_seconds: f64,
    /// Set when a stop signal ended the run before it measured everything:
    /// what it ran and what it did not. `None`: the run is complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
    /// The anatomy of user exits (`--view anatomy`), when the run measured
    /// it; older saved runs have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anatomy: Option<Anatomy>,
}

/// What a run stopped early (SIGINT, SIGTERM or SIGHUP) measured and left
/// out. The report holds every scenario with a result; those without one
/// are named here instead.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partial {
    /// The signal that stopped it: `SIGINT`, `SIGTERM` or `SIGHUP`.
    pub stopped_by: String,
    /// VM runs (and raw-KVM floor loops) that ran to their end and were
    /// kept; the one the signal cut short is not counted.
    pub runs_done: u32,
    /// VM runs the whole run would have taken.
    pub runs_planned: u32,
    /// Scenarios left with no result, by key (`name`, `vmm:name`).
    pub not_run: Vec<String>,
}

/// How many names of a long list a one-line note shows before "and N more".
const NOTE_NAMES: usize = 8;

impl Partial {
    /// One line for people: `partial run: stopped by SIGINT after 12 of 40
    /// VM runs; not run (3): a, b, c`.
    pub fn note(&self) -> String {
        format!("partial run: {}", self.detail())
    }

    /// [`note`](Self::note) without its `partial run: ` (for a page that
    /// titles it).
    pub fn detail(&self) -> String {
        let mut s = format!(
            "stopped by {} after {} of {} VM runs",
            self.stopped_by, self.runs_done, self.runs_planned
        );
        if self.not_run.is_empty() {
            s.push_str("; every scenario has a result, some from fewer repeats");
        } else {
            let shown: Vec<&str> = self
                .not_run
                .iter()
                .take(NOTE_NAMES)
                .map(String::as_str)
                .collect();
            s.push_str(&format!(
                "; not run ({}): {}",
                self.not_run.len(),
                shown.join(", ")
            ));
            if self.not_run.len() > NOTE_NAMES {
                s.push_str(&format!(" and {} more", self.not_run.len() - NOTE_NAMES));
            }
        }
        s
    }
}

/// Name and version of the program that wrote a report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// E.g. `trapline`.
    pub name: String,
    /// E.g. `0.1.0`.
    pub version: String,
}

impl ToolInfo {
    /// A tool name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
        }
    }
}

/// The host a run measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: String,
    /// `vendor_id` from /proc/cpuinfo.
    pub cpu_vendor: String,
    /// `uname -r`.
    pub kernel: String,
    /// KVM_GET_API_VERSION.
    pub kvm_api_version: i64,
    /// Online CPUs.
    pub nproc: u32,
    /// TSC frequency in kHz (KVM_GET_TSC_KHZ); 0 when unknown, in which case
    /// no nanosecond figures are computed.
    pub tsc_khz: u64,
    /// TSC frequency measured against the monotonic clock, if it was.
    #[serde(default)]
    pub tsc_khz_crosscheck: Option<u64>,
    /// 1, 5 and 15 minute load averages at the start of the run.
    #[serde(default)]
    pub load_avg: [f64; 3],
    /// KVM_CHECK_EXTENSION results by capability name.
    #[serde(default)]
    pub kvm_caps: BTreeMap<String, i64>,
    /// Set when the host is itself a guest (nested virtualization): every
    /// exit then also costs an exit to L0, and numbers are not comparable to
    /// bare metal.
    #[serde(default)]
    pub nested_note: Option<String>,
    /// Set when the host's CPU is itself emulated (an arm64 host on QEMU's
    /// `max` CPU under TCG): `nested_note` then says so, and every rendering
    /// calls the caveat "emulated host" (times are behaviour, not speed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// The probe's clock when it is not the TSC: on arm64 the generic
    /// timer's virtual counter (`CNTVCT_EL0`), whose ticks (at `tsc_khz`)
    /// fill the reports' cycle columns. `None`: the TSC, in CPU cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<String>,
    /// The host's architecture when it is not x86_64 (`aarch64`); `None`
    /// for x86_64, as every report before the arm64 lab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
}

/// [`HostInfo::arch`] of an arm64 host.
pub const ARCH_ARM64: &str = "aarch64";

impl HostInfo {
    /// Whether the report was measured on an arm64 host (seed views then
    /// use their rows' arm64 scenarios).
    pub fn is_arm64(&self) -> bool {
        self.arch.as_deref() == Some(ARCH_ARM64)
    }

    /// What the caveat beside the numbers is called: "emulated host" or
    /// "nested virtualization" (`None`: bare metal, no caveat).
    pub fn caveat_title(&self) -> Option<&'static str> {
        match (&self.nested_note, self.emulated) {
            (None, _) => None,
            (Some(_), true) => Some("emulated host"),
            (Some(_), false) => Some("nested virtualization"),
        }
    }

    /// The clock and its frequency as a report names them: `TSC 3.000
    /// GHz`, or on arm64 `counter CNTVCT_EL0 62.500 MHz (ticks, not CPU
    /// cycles)`.
    pub fn clock_text(&self) -> String {
        match &self.counter {
            None => format!("TSC {:.3} GHz", self.tsc_khz as f64 / 1e6),
            Some(c) => format!(
                "counter {c} {:.3} MHz (ticks, not CPU cycles)",
                self.tsc_khz as f64 / 1e3
            ),
        }
    }
}

/// How the run was configured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Timed repeats per scenario (one [`Sample`] each).
    pub repeat: u32,
    /// Cycles a timed loop is grown to last at least.
    pub goal_cycles: u64,
    /// Lower bound on loop iterations.
    pub min_iters: u64,
    /// Upper bound on loop iterations.
    pub max_iters: u64,
    /// Untimed warm-up repeats before the timed ones.
    pub warmup: u32,
    /// Whether `--quick` shortened the run.
    pub quick: bool,
    /// Scenario filter, if any.
    #[serde(default)]
    pub only: Option<String>,
    /// Peer VMM measured alongside trapline (e.g. `qemu`), if any.
    #[serde(default)]
    pub peer: Option<String>,
    /// The peer's CPU model (`host`, `max`, or `default` for QEMU's own
    /// default), when a peer ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_cpu: Option<String>,
    /// Why the peer's CPU model is not `host`, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_cpu_note: Option<String>,
}

/// Outcome of one scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured; `stats` is set.
    #[default]
    Ok,
    /// The host or VMM cannot run it (missing capability, …); see `reason`.
    Unsupported,
    /// It was attempted and went wrong; see `reason`.
    Failed,
}

impl Status {
    /// `ok`, `unsupported` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unsupported => "unsupported",
            Status::Failed => "failed",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One timed loop.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Loop iterations.
    pub iterations: u64,
    /// RDTSC delta around the whole loop.
    pub cycles: u64,
    /// Host-side exit counts during the loop, by kind. In JSON, the
    /// non-zero kinds' names (e.g. `pio-write`) to their counts, sorted by
    /// name; a name this build does not know fails the load (see
    /// `exit_counts`).
    #[serde(default, with = "exit_counts")]
    pub exits: ExitSnapshot,
    /// trapline's own handling of the exits that reached it during the
    /// loop (the `--stat` profile's TSC pair), when profiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handling: Option<Handling>,
    /// KVM's own per-vCPU counters that moved during the loop (its binary
    /// statistics: `exits`, `io_exits`, … in-kernel exits included).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kvm_exits: BTreeMap<String, u64>,
}

/// Exits that reached trapline and the TSC cycles it spent on them, from
/// KVM_RUN's return to the next KVM_RUN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handling {
    /// Exits.
    pub exits: u64,
    /// Cycles.
    pub cycles: u64,
}

impl Sample {
    /// A sample without exit counts.
    pub fn new(iterations: u64, cycles: u64) -> Self {
        Self {
            iterations,
            cycles,
            exits: ExitSnapshot::default(),
            handling: None,
            kvm_exits: BTreeMap::new(),
        }
    }

    /// Sets one kind's exit count (builder style).
    pub fn with_exits(mut self, kind: ExitKind, count: u64) -> Self {
        self.exits = self.exits.with_count(kind, count);
        self
    }

    /// Cycles per iteration, or `None` for an empty loop.
    pub fn per_iter(&self) -> Option<f64> {
        (self.iterations > 0).then(|| self.cycles as f64 / self.iterations as f64)
    }
}

/// One scenario on one VMM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// Scenario name, e.g. `pio-user-out`.
    pub name: String,
    /// Family: `baseline`, `trap`, `pio`, `mmio`, `coalesced`, `memslot`,
    /// `vmm`, `pci`, `irq`, `doorbell`, …
    pub group: String,
    /// One line: which mechanism serves it.
    pub path: String,
    /// `trapline`, `qemu`, `raw-kvm`, …
    pub vmm: String,
    /// Outcome.
    pub status: Status,
    /// Why it is unsupported or failed.
    #[serde(default)]
    pub reason: Option<String>,
    /// Raw timed loops.
    #[serde(default)]
    pub samples: Vec<Sample>,
    /// Cycles per iteration over the samples.
    #[serde(default)]
    pub stats: Option<Stats>,
    /// Cycles per iteration minus the same VMM's baseline median.
    #[serde(default)]
    pub net: Option<Stats>,
    /// Median cycles per iteration in nanoseconds (needs `host.tsc_khz`).
    #[serde(default)]
    pub ns_per_iter: Option<f64>,
    /// Host-side exits per loop iteration, by kind name: where the samples'
    /// typed counts become names, for the renderers.
    #[serde(default)]
    pub exits_per_iter: BTreeMap<String, f64>,
    /// trapline's own handling time per exit that reached it, in cycles
    /// (one value per sample: its handling cycles over its exits),
    /// measured directly with the TSC around each exit's handling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handling: Option<Stats>,
    /// KVM's own counters per loop iteration (in-kernel exits included).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kvm_exits_per_iter: BTreeMap<String, f64>,
    /// What its repeats say about the host's noise (a wide spread,
    /// outliers, two clusters); empty when they look clean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<NoiseFlag>,
    /// The distribution of its recorded pass (p50 … max beside the
    /// median), trapline's probe only; `None`: not recorded (a peer, or a
    /// report from before tails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tails: Option<Tails>,
    /// What the scenario verified, e.g. `eventfd count = N`.
    #[serde(default)]
    pub check: Option<String>,
    /// Scenario-specific extras.
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl ScenarioResult {
    /// A scenario on trapline with status ok and no samples yet.
    pub fn new(name: impl Into<String>, group: impl Into<String>, path: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            group: group.into(),
            path: path.into(),
            vmm: TRAPLINE_VMM.to_string(),
            status: Status::Ok,
            reason: None,
            samples: Vec::new(),
            stats: None,
            net: None,
            ns_per_iter: None,
            exits_per_iter: BTreeMap::new(),
            handling: None,
            kvm_exits_per_iter: BTreeMap::new(),
            noise: Vec::new(),
            tails: None,
            check: None,
            extra: BTreeMap::new(),
        }
    }

    /// Sets the recorded distribution (builder style).
    pub fn with_tails(mut self, tails: Tails) -> Self {
        self.tails = Some(tails);
        self
    }

    /// Sets the VMM (builder style).
    pub fn with_vmm(mut self, vmm: impl Into<String>) -> Self {
        self.vmm = vmm.into();
        self
    }

    /// Sets the samples (builder style).
    pub fn with_samples(mut self, samples: Vec<Sample>) -> Self {
        self.samples = samples;
        self
    }

    /// Sets what the scenario verified (builder style).
    pub fn with_check(mut self, check: impl Into<String>) -> Self {
        self.check = Some(check.into());
        self
    }

    /// Adds an extra value (builder style).
    pub fn with_extra(
        mut self,
        key: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }

    /// Marks it unsupported (builder style).
    pub fn unsupported(mut self, reason: impl Into<String>) -> Self {
        self.status = Status::Unsupported;
        self.reason = Some(reason.into());
        self
    }

    /// Marks it failed (builder style).
    pub fn failed(mut self, reason: impl Into<String>) -> Self {
        self.status = Status::Failed;
        self.reason = Some(reason.into());
        self
    }

    /// The name reports use: `name` on trapline, `vmm:name` elsewhere.
    pub fn key(&self) -> String {
        scenario_key(&self.vmm, &self.name)
    }

    /// Whether the scenario is timed inside the guest ([`SELF_TIMED`]), so
    /// it has no net cost.
    pub fn is_self_timed(&self) -> bool {
        SELF_TIMED.contains(&self.name.as_str())
    }

    /// Whether the scenario has numbers to show.
    pub fn is_measured(&self) -> bool {
        self.status == Status::Ok && self.stats.is_some()
    }

    /// Median cycles per iteration, when measured.
    pub fn median(&self) -> Option<f64> {
        self.stats
            .as_ref()
            .filter(|_| self.status == Status::Ok)
            .map(|s| s.median)
    }

    /// Cycles per iteration of every non-empty sample.
    pub fn per_iter_cycles(&self) -> Vec<f64> {
        self.samples.iter().filter_map(Sample::per_iter).collect()
    }

    /// Fills `stats`, `ns_per_iter` and `exits_per_iter` from the samples.
    /// An ok scenario without a usable sample becomes failed.
    pub fn compute(&mut self, tsc_khz: u64) {
        if self.status != Status::Ok {
            self.noise = Vec::new();
            self.stats = None;
            self.net = None;
            self.ns_per_iter = None;
            return;
        }
        self.stats = Stats::of(&self.per_iter_cycles());
        self.noise = crate::noise::assess(&self.per_iter_cycles());
        let timed_median = Stats::of(&self.per_iter_cycles()).map(|s| s.median);
        let self_timed = self.is_self_timed();
        if let Some(t) = &mut self.tails {
            // A self-timed scenario's recorded values are taken as its
            // batches take them: recording adds nothing to what is timed.
            t.set_overhead(timed_median.filter(|_| !self_timed));
            self.noise.extend(crate::noise::assess_tails(t));
        }
        let Some(stats) = &self.stats else {
            self.status = Status::Failed;
            if self.reason.is_none() {
                self.reason = Some("no timed samples".to_string());
            }
            self.ns_per_iter = None;
            self.net = None;
            return;
        };
        self.ns_per_iter = cycles_to_ns(stats.median, tsc_khz);
        self.exits_per_iter = self.per_iter_counts(|s| s.exits.nonzero());
        let per_exit: Vec<f64> = self
            .samples
            .iter()
            .filter_map(|s| s.handling)
            .filter(|h| h.exits > 0)
            .map(|h| h.cycles as f64 / h.exits as f64)
            .collect();
        self.handling = Stats::of(&per_exit);
        self.kvm_exits_per_iter = self.per_iter_counts(|s| {
            s.kvm_exits
                .iter()
                .map(|(name, count)| (name.as_str(), *count))
        });
    }

    /// The (name, count) pairs `counts` gives for each sample with
    /// iterations, summed per name and divided by those samples'
    /// iterations.
    fn per_iter_counts<'a, I, K>(
        &'a self,
        counts: impl Fn(&'a Sample) -> I,
    ) -> BTreeMap<String, f64>
    where
        I: IntoIterator<Item = (K, u64)>,
        K: AsRef<str>,
    {
        let timed = || self.samples.iter().filter(|s| s.iterations > 0);
        let iterations = timed().fold(0u64, |acc, s| acc.saturating_add(s.iterations));
        let mut totals: BTreeMap<String, u64> = BTreeMap::new();
        for (name, count) in timed().flat_map(counts) {
            let slot = totals.entry(name.as_ref().to_string()).or_default();
            *slot = slot.saturating_add(count);
        }
        totals
            .into_iter()
            .map(|(name, count)| (name, count as f64 / iterations as f64))
            .collect()
    }

    /// Fills `net` as per-iteration cycles minus `baseline`; `None` for a
    /// [`SELF_TIMED`] scenario, whose cycles are not a loop.
    pub fn compute_net(&mut self, baseline: Option<f64>) {
        self.net = match (baseline, self.status) {
            _ if self.is_self_timed() => None,
            (Some(base), Status::Ok) => {
                let values: Vec<f64> = self
                    .per_iter_cycles()
                    .into_iter()
                    .map(|v| v - base)
                    .collect();
                Stats::of(&values)
            }
            _ => None,
        };
    }
}

/// Pretty JSON of `v`, never failing: an error becomes `{"error": …}`.
pub fn pretty_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v)
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
}

/// The name reports use for scenario `name` on `vmm`.
pub fn scenario_key(vmm: &str, name: &str) -> String {
    if vmm == TRAPLINE_VMM {
        name.to_string()
    } else {
        format!("{vmm}:{name}")
    }
}

/// Cycles to nanoseconds at `tsc_khz`; `None` when the frequency is unknown.
pub fn cycles_to_ns(cycles: f64, tsc_khz: u64) -> Option<f64> {
    (tsc_khz > 0 && cycles.is_finite()).then(|| cycles * 1e6 / tsc_khz as f64)
}

/// A value computed from several scenarios.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// E.g. `user-exit-premium`.
    pub name: String,
    /// The value in `unit`.
    pub value: f64,
    /// `cycles`, `x`, …
    pub unit: String,
    /// How it was computed, e.g. `pio-user-out − pio-kernel-wildcard`.
    pub formula: String,
    /// What it means, spread, nanoseconds.
    #[serde(default)]
    pub note: Option<String>,
    /// The range the spreads of its inputs allow (their medians ± MADs,
    /// carried through the arithmetic), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<ValueRange>,
    /// Its goal and this run's verdict against it, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<Goal>,
}

/// A value's range from its inputs' spreads.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueRange {
    /// The lowest value the spreads allow.
    pub low: f64,
    /// The highest, `None` when unbounded (a ratio whose denominator's
    /// range reaches zero).
    pub high: Option<f64>,
}

impl ValueRange {
    /// `value ± spread`.
    pub fn around(value: f64, spread: f64) -> Option<ValueRange> {
        (value.is_finite() && spread.is_finite()).then(|| ValueRange {
            low: value - spread.abs(),
            high: Some(value + spread.abs()),
        })
    }

    /// `num / den` over both ranges; `None` unless the denominator is
    /// positive at its low end's value or above (the top is open when the
    /// denominator's range reaches zero).
    pub fn over(num: ValueRange, den: ValueRange) -> Option<ValueRange> {
        let den_high = den.high.filter(|h| *h > 0.0)?;
        let num_high = num.high?;
        Some(ValueRange {
            low: num.low / den_high,
            high: (den.low > 0.0).then(|| num_high / den.low),
        })
    }

    /// `(low, high)`, the top infinite when open.
    pub fn bounds(self) -> (f64, f64) {
        (self.low, self.high.unwrap_or(f64::INFINITY))
    }
}

/// A goal (at most this) and this run's verdict against it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Goal {
    /// The value should be at most this (in the value's unit).
    pub at_most: f64,
    /// `met`, `missed`, or `within spread` (the range straddles the goal:
    /// this run cannot tell).
    pub verdict: Verdict,
}

/// A value against its goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The value (its whole range) is within the goal.
    #[serde(rename = "met")]
    Met,
    /// The value (its whole range) is beyond the goal.
    #[serde(rename = "missed")]
    Missed,
    /// The range straddles the goal: this run cannot tell.
    #[serde(rename = "within spread")]
    WithinSpread,
}

impl Verdict {
    /// The verdict of `value` (with its `range`, when known) against a goal
    /// of at most `goal`.
    pub fn at_most(value: f64, range: Option<(f64, f64)>, goal: f64) -> Verdict {
        let (lo, hi) = range.unwrap_or((value, value));
        if hi <= goal {
            Verdict::Met
        } else if lo > goal {
            Verdict::Missed
        } else {
            Verdict::WithinSpread
        }
    }

    /// `met`, `missed` or `within spread`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Missed => "missed",
            Verdict::WithinSpread => "within spread",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Report {
    /// An empty report of the current schema.
    pub fn new(tool: ToolInfo, host: HostInfo, config: RunConfig) -> Self {
        Self {
            schema: SCHEMA.to_string(),
            tool,
            host,
            config,
            scenarios: Vec::new(),
            derived: Vec::new(),
            started_at: String::new(),
            wall_seconds: 0.0,
            partial: None,
            anatomy: None,
        }
    }

    /// Appends a scenario result.
    pub fn push(&mut self, scenario: ScenarioResult) {
        self.scenarios.push(scenario);
    }

    /// Computes the per-scenario summaries: stats, ns and exits per
    /// iteration, and the net cost over each VMM's baseline (none for
    /// [`SELF_TIMED`] scenarios). [`Report::finish`] (in `derive`, which
    /// sits above this module) adds the derived values.
    pub(crate) fn summarize(&mut self) {
        let tsc_khz = self.host.tsc_khz;
        for s in &mut self.scenarios {
            s.compute(tsc_khz);
        }
        let baselines: Vec<Option<f64>> = self
            .scenarios
            .iter()
            .map(|s| self.baseline_median(&s.vmm))
            .collect();
        for (s, base) in self.scenarios.iter_mut().zip(baselines) {
            s.compute_net(base);
        }
    }

    /// The scenario `name` on `vmm`, if present.
    pub fn scenario(&self, vmm: &str, name: &str) -> Option<&ScenarioResult> {
        self.scenarios
            .iter()
            .find(|s| s.vmm == vmm && s.name == name)
    }

    /// Median of `vmm`'s baseline scenario, when it was measured.
    pub fn baseline_median(&self, vmm: &str) -> Option<f64> {
        self.scenario(vmm, BASELINE_SCENARIO)
            .and_then(ScenarioResult::median)
    }

    /// The derived value called `name`, if it could be computed.
    pub fn derived(&self, name: &str) -> Option<&Derived> {
        self.derived.iter().find(|d| d.name == name)
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        pretty_json(self)
    }

    /// Parses a report, checking the schema first so that a report of
    /// another version says so rather than failing on some field.
    pub fn from_json(text: &str) -> Result<Self, ReportError> {
        #[derive(Deserialize)]
        struct Probe {
            #[serde(default)]
            schema: Option<serde_json::Value>,
        }
        let json_err = |source| ReportError::Json {
            expected: SCHEMA,
            source,
        };
        let probe: Probe = serde_json::from_str(text).map_err(json_err)?;
        let found = match probe.schema {
            Some(serde_json::Value::String(s)) if s == SCHEMA => {
                return serde_json::from_str(text).map_err(json_err)
            }
            Some(serde_json::Value::String(s)) => Some(s),
            Some(other) => Some(other.to_string()),
            None => None,
        };
        Err(ReportError::Schema {
            found,
            expected: SCHEMA,
        })
    }

    /// Reads and parses a report file (a pipe or a device too), refusing
    /// one larger than [`MAX_REPORT_BYTES`] before reading past it.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ReportError> {
        use std::io::Read as _;
        let path = path.as_ref();
        let io = |source| ReportError::Io {
            path: path.to_path_buf(),
            source,
        };
        let too_large = || ReportError::TooLarge {
            path: path.to_path_buf(),
            max_mib: MAX_REPORT_BYTES >> 20,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        if file.metadata().map_err(io)?.len() > MAX_REPORT_BYTES {
            return Err(too_large());
        }
        // A pipe or a character device has no length: read one byte past
        // the limit to know it is over.
        let mut text = String::new();
        file.take(MAX_REPORT_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(io)?;
        if text.len() as u64 > MAX_REPORT_BYTES {
            return Err(too_large());
        }
        Self::from_json(&text)
    }
}

impl std::str::FromStr for Report {
    type Err = ReportError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_json(s)
    }
}
