//! The `vmm` view: trapline's own footprint (CPU time to the first KVM_RUN,
//! resident memory beyond guest RAM) against its goals and Firecracker's
//! published promises, then what one user-space exit costs in trapline's
//! dispatch, beside a bare KVM_RUN loop; and the floor ladder, what each
//! piece of the VM's configuration costs per in-kernel exit.

use serde::Serialize;

use super::common::{self, finite, host_caption, Measured, NOT_MEASURED};
use crate::derive::startfloor::{self, Comparison};
use crate::derive::startup::{self, GroupValue, PhaseValue};
use crate::derive::{
    names, DISPATCH_OVERHEAD, HANDLING_PER_USER_EXIT, PREMIUM_RATIO_RAW_KVM_VMM, STAT_OVERHEAD,
    STAT_OVERHEAD_SHARE, USER_EXIT_PREMIUM,
};
use crate::fmt;
use crate::model::{cycles_to_ns, Report, Verdict, TRAPLINE_VMM};
use crate::render::charts::{hbars, HBars, Series, Swatch};
use crate::render::grid::{Align, Grid, Row, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::unit::Unit;

/// Where Firecracker's figures come from.
pub const FIRECRACKER_SOURCE: &str = "Firecracker's SPECIFICATION.md: its VMM \"starts (up to \
API socket availability) within 8 CPU ms\", and its VMM threads have \"a memory overhead <= 5 \
MiB\" for a microVM with 1 vCPU and 128 MiB of RAM (on an m5d.metal or m6g.metal host)";

/// What is comparable.
pub const CAPTION: &str = "trapline's own cost as a process (median over fresh `trapline run` \
processes on this host) against trapline's goals and Firecracker's published promises, then \
what one exit to user space costs in trapline's dispatch; Firecracker's figures were measured \
on its own hosts and its CPU figure stops at API socket availability, before any KVM_RUN, so \
they give scale rather than a like-for-like race";

use crate::derive::goals::footprint_check;
pub use crate::derive::goals::{FootprintGoal, FOOTPRINT_GOALS};

/// One footprint row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FootprintRow {
    /// Derived value name.
    pub name: &'static str,
    /// What it measures.
    pub what: &'static str,
    /// `ms` or `MiB`.
    pub unit: Unit,
    /// trapline on this host, when measured.
    pub this_host: Option<f64>,
    /// trapline's goal (at most).
    pub goal: f64,
    /// Firecracker's promise (at most).
    pub firecracker: f64,
    /// `this_host <= goal`, when measured (kept for readers of older
    /// output; [`FootprintRow::verdict`] says it in the summary's words).
    pub passes_goal: Option<bool>,
    /// `met` or `missed`, when measured: the summary's verdict words.
    pub verdict: Option<Verdict>,
    /// `this_host <= firecracker`, when measured.
    pub within_firecracker: Option<bool>,
    /// `ok`, [`NOT_MEASURED`], or why the value is unusable.
    pub status: String,
    /// How the lab computed it.
    pub formula: Option<String>,
}

impl FootprintRow {
    fn build(report: &Report, g: &FootprintGoal) -> Self {
        let base = Self {
            name: g.name,
            what: g.what,
            unit: g.unit,
            this_host: None,
            goal: g.goal,
            firecracker: g.firecracker,
            passes_goal: None,
            verdict: None,
            within_firecracker: None,
            status: NOT_MEASURED.to_string(),
            formula: None,
        };
        let Some(d) = report.derived(g.name) else {
            return base;
        };
        let formula = Some(d.formula.clone());
        if d.unit != g.unit {
            return Self {
                status: format!(
                    "unusable: unit {:?}, expected {:?}",
                    d.unit,
                    g.unit.as_str()
                ),
                formula,
                ..base
            };
        }
        match finite(d.value) {
            None => Self {
                status: "unusable: not a finite number".to_string(),
                formula,
                ..base
            },
            Some(v) => {
                let verdict = footprint_check(report, g).map(|c| c.verdict);
                Self {
                    this_host: Some(v),
                    passes_goal: verdict.map(|v| v == Verdict::Met),
                    verdict,
                    within_firecracker: Some(v <= g.firecracker),
                    status: "ok".to_string(),
                    formula,
                    ..base
                }
            }
        }
    }

    /// `met`, `missed` (the summary's words for a goal) or why there is
    /// no verdict.
    pub fn result(&self) -> String {
        self.verdict
            .map_or_else(|| self.status.clone(), |v| v.as_str().to_string())
    }

    fn goal_spec(&self) -> Option<&'static FootprintGoal> {
        FOOTPRINT_GOALS.iter().find(|g| g.name == self.name)
    }

    fn shown_unit(&self) -> Unit {
        self.goal_spec().map_or(self.unit, |g| g.shown_unit)
    }

    fn short(&self) -> &'static str {
        self.goal_spec().map_or(self.name, |g| g.short)
    }
}

/// Whether an exit-cost row is a scenario or a derived value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CostKind {
    /// A measured scenario: median cycles per iteration.
    Scenario,
    /// A derived value (difference of medians, or a ratio).
    Derived,
}

/// One row of the cost-per-exit table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExitCostRow {
    /// Scenario key or derived name.
    pub name: String,
    /// Scenario or derived.
    pub kind: CostKind,
    /// `cycles` or `x`.
    pub unit: Unit,
    /// Median cycles per iteration (scenario), the derived value otherwise.
    pub value: Option<f64>,
    /// Scenario median net of the same VMM's noop loop.
    pub net: Option<f64>,
    /// `value` in nanoseconds (cycles only; needs the TSC frequency).
    pub ns: Option<f64>,
    /// `ok`, `unsupported: …`, `failed: …` or [`NOT_MEASURED`].
    pub status: String,
    /// The scenario's path, or the derived value's formula.
    pub what: String,
}

/// Scenario rows of the cost table, in order: trapline's, then the bare
/// KVM_RUN loop's.
pub const EXIT_SCENARIOS: [(&str, &str); 4] = [
    (TRAPLINE_VMM, names::PIO_USER_OUT),
    (TRAPLINE_VMM, names::VMM_FLOOR_PIO),
    (names::RAW_KVM_VMM, names::PIO_USER_OUT),
    (names::RAW_KVM_VMM, names::PIO_KERNEL_WILDCARD),
];

/// [`EXIT_SCENARIOS`] on arm64 (no port I/O: the user exit and its
/// in-kernel counterpart are MMIO writes; no in-loop floor port).
pub const ARM64_EXIT_SCENARIOS: [(&str, &str); 4] = [
    (TRAPLINE_VMM, names::MMIO_USER_WRITE),
    (TRAPLINE_VMM, names::MMIO_KERNEL_WILDCARD),
    (names::RAW_KVM_VMM, names::MMIO_USER_WRITE),
    (names::RAW_KVM_VMM, names::MMIO_KERNEL_WILDCARD),
];

/// Derived rows of the cost table, in order, with their formula when the
/// report cannot give one.
pub const EXIT_DERIVED: [(&str, &str); 6] = [
    (USER_EXIT_PREMIUM, "pio-user-out − pio-kernel-wildcard"),
    (DISPATCH_OVERHEAD, "pio-user-out − vmm-floor-pio"),
    (
        PREMIUM_RATIO_RAW_KVM_VMM,
        "user-exit-premium / raw-kvm:user-exit-premium",
    ),
    (
        HANDLING_PER_USER_EXIT,
        "pio-user-out.handling.median: trapline's own cycles per exit, TSC-measured",
    ),
    (STAT_OVERHEAD, "pio-user-out − trapline-nostat:pio-user-out"),
    (STAT_OVERHEAD_SHARE, "stat-overhead / user-exit-premium"),
];

/// The rows of [`EXIT_DERIVED`] that are ratios (unit `x`).
const RATIO_ROWS: [&str; 2] = [PREMIUM_RATIO_RAW_KVM_VMM, STAT_OVERHEAD_SHARE];

fn scenario_path(report: &Report, vmm: &str, name: &str) -> String {
    report
        .scenario(vmm, name)
        .map(|s| s.path.clone())
        .unwrap_or_default()
}

impl ExitCostRow {
    fn scenario(report: &Report, vmm: &str, name: &str) -> Self {
        let m = Measured::lookup(report, vmm, name);
        let ns = m.median.and_then(|c| cycles_to_ns(c, report.host.tsc_khz));
        Self {
            name: m.scenario.clone(),
            kind: CostKind::Scenario,
            unit: Unit::Cycles,
            value: m.median,
            net: m.net,
            ns: ns.and_then(finite),
            status: m.status_text(),
            what: scenario_path(report, vmm, name),
        }
    }

    fn derived(report: &Report, name: &str, formula: &str) -> Self {
        let unit = if RATIO_ROWS.contains(&name) {
            Unit::Ratio
        } else {
            Unit::Cycles
        };
        let d = report
            .derived(name)
            .filter(|d| d.unit == unit)
            .and_then(|d| finite(d.value).map(|v| (v, d.formula.clone())));
        let (value, status, what) = match d {
            Some((v, f)) => (Some(v), "ok".to_string(), f),
            None => (None, NOT_MEASURED.to_string(), formula.to_string()),
        };
        let ns = if unit == Unit::Cycles {
            value.and_then(|c| cycles_to_ns(c, report.host.tsc_khz))
        } else {
            None
        };
        Self {
            name: name.to_string(),
            kind: CostKind::Derived,
            unit,
            value,
            net: None,
            ns: ns.and_then(finite),
            status,
            what,
        }
    }

    /// The value with its unit, `–` when absent.
    fn shown(&self) -> String {
        match (self.value, self.unit) {
            (None, _) => "–".to_string(),
            (Some(v), Unit::Ratio) => fmt::ratio_x(v),
            (Some(v), _) => fmt::cycles(v),
        }
    }
}

/// The whole view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VmmView {
    /// `vmm`.
    pub view: &'static str,
    /// What is comparable.
    pub caption: String,
    /// Citation of Firecracker's figures.
    pub firecracker_source: &'static str,
    /// One row per [`FOOTPRINT_GOALS`] entry.
    pub footprint: Vec<FootprintRow>,
    /// Where the CPU time to the first KVM_RUN goes: each marked phase's
    /// median (empty when the run recorded none).
    pub startup: Vec<PhaseValue>,
    /// The phases summed by group: exec to main, KVM's creation ioctls,
    /// trapline's own work.
    pub startup_groups: Vec<GroupValue>,
    /// trapline's start-up against the start-up floor, when measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startfloor: Option<Comparison>,
    /// Scenarios ([`EXIT_SCENARIOS`]), then derived values ([`EXIT_DERIVED`]).
    pub cost_per_exit: Vec<ExitCostRow>,
    /// The floor ladder: what each piece of trapline's VM configuration
    /// costs per in-kernel exit (empty when no rung was measured).
    pub ladder: Vec<LadderRow>,
    /// The ladder's in-kernel paths, its columns (the report's host's).
    #[serde(skip)]
    pub ladder_paths: &'static [&'static str],
}

/// One row of the ladder table: a piece (or the whole gap, or trapline
/// against `trapline-pc`) and its cost on each in-kernel path, in
/// the report's ladder's `kernel_paths` order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LadderRow {
    /// `piece:<piece>`, `floor-gap` or `trapline-vs-trapline-pc`.
    pub name: String,
    /// `cycles` or `x`.
    pub unit: Unit,
    /// Per path: the cost (cycles with spread) or ratio, when measured.
    pub values: Vec<Option<crate::derive::ladder::Cost>>,
    /// What it is.
    pub what: String,
}

impl LadderRow {
    fn rows(report: &Report) -> Vec<LadderRow> {
        use crate::derive::ladder::{self, Cost};
        let this = ladder::for_report(report);
        let kernel_paths = this.kernel_paths;
        let mut rows = Vec::new();
        for r in this.rungs.iter().filter(|r| r.parent.is_some()) {
            rows.push(LadderRow {
                name: format!("piece:{}", r.piece),
                unit: Unit::Cycles,
                values: kernel_paths
                    .iter()
                    .map(|p| ladder::piece_cost(report, r, p))
                    .collect(),
                what: format!("{} (over {})", r.what, r.parent.unwrap_or_default()),
            });
        }
        rows.push(LadderRow {
            name: "floor-gap".into(),
            unit: Unit::Cycles,
            values: kernel_paths
                .iter()
                .map(|p| ladder::gap(report, p))
                .collect(),
            what: "trapline's net minus the bare floor's: what the pieces add up to".into(),
        });
        rows.push(LadderRow {
            name: format!("trapline-vs-{}", this.top),
            unit: Unit::Ratio,
            values: kernel_paths
                .iter()
                .map(|p| {
                    ladder::vs_trapline_pc(report, p).map(|v| Cost {
                        cycles: v,
                        spread: 0.0,
                    })
                })
                .collect(),
            what: format!(
                "trapline's gross cycles over a raw VM configured like it (goal: {})",
                ladder::vs_trapline_pc_goal_text()
            ),
        });
        // Only when some rung above the bare floor was measured: the gap
        // alone explains nothing.
        let pieces = rows.len() - 2;
        if rows[..pieces]
            .iter()
            .all(|r| r.values.iter().all(Option::is_none))
        {
            return Vec::new();
        }
        rows
    }

    fn cell(&self, i: usize) -> String {
        match (self.values.get(i).cloned().flatten(), self.unit) {
            (None, _) => "–".to_string(),
            (Some(c), Unit::Ratio) => fmt::ratio_x(c.cycles),
            (Some(c), _) => format!("{} ±{}", fmt::cycles(c.cycles), fmt::cycles(c.spread)),
        }
    }
}

/// The ladder table's column for an in-kernel path.
fn ladder_column(path: &str) -> &'static str {
    match path {
        "pio-kernel-wildcard" => "pio ioeventfd",
        "mmio-kernel-wildcard" => "mmio ioeventfd",
        "ram-read" => "RAM read",
        "mmio-vgic-read" => "vGIC read",
        _ => "path",
    }
}

/// The footprint values as a number with its unit: `2.14 CPU-ms`.
fn amount(v: f64, unit: Unit) -> String {
    format!("{v:.2} {unit}")
}

fn bound(v: f64, unit: Unit) -> String {
    format!("≤ {} {unit}", fmt::raw(v))
}

impl VmmView {
    /// Builds the view from `report`.
    pub fn build(report: &Report) -> Self {
        let footprint = FOOTPRINT_GOALS
            .iter()
            .map(|g| FootprintRow::build(report, g))
            .collect();
        let exits = if report.host.is_arm64() {
            &ARM64_EXIT_SCENARIOS
        } else {
            &EXIT_SCENARIOS
        };
        let cost_per_exit = exits
            .iter()
            .map(|(vmm, name)| ExitCostRow::scenario(report, vmm, name))
            .chain(
                EXIT_DERIVED
                    .iter()
                    .map(|(name, formula)| ExitCostRow::derived(report, name, formula)),
            )
            .collect();
        let startup = startup::phases(report);
        let startup_groups = startup::groups(&startup);
        Self {
            view: "vmm",
            caption: host_caption(CAPTION, &report.host),
            firecracker_source: FIRECRACKER_SOURCE,
            footprint,
            startup,
            startup_groups,
            startfloor: startfloor::comparison(report),
            cost_per_exit,
            ladder: LadderRow::rows(report),
            ladder_paths: crate::derive::ladder::for_report(report).kernel_paths,
        }
    }

    /// The ladder table: cycles per iteration (net of each rung's noop)
    /// with the spread (sum of MADs), per in-kernel path.
    fn ladder_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut cols = vec![("piece", Left)];
        cols.extend(self.ladder_paths.iter().map(|p| (ladder_column(p), Right)));
        cols.push(("what", Left));
        let mut g = Grid::new(&cols);
        for r in &self.ladder {
            let mut cells = vec![r.name.clone()];
            cells.extend((0..self.ladder_paths.len()).map(|i| r.cell(i)));
            cells.push(r.what.clone());
            g.push(Row::cells(cells));
        }
        g
    }

    /// Start-up's split: the groups' sums, then each phase.
    fn startup_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("phase", Left),
            ("group", Left),
            ("CPU µs", Right),
            ("faults", Right),
            ("what", Left),
        ]);
        let faults = |f: Option<f64>| f.map_or_else(|| "–".to_string(), |f| format!("{f:.0}"));
        for r in &self.startup_groups {
            g.push(Row::cells(vec![
                "sum".to_string(),
                r.group.name().to_string(),
                format!("{:.0}", r.cpu_us),
                faults(Some(r.faults)),
                r.what.to_string(),
            ]));
        }
        for r in &self.startup {
            g.push(Row::cells(vec![
                r.phase.clone(),
                r.group.name().to_string(),
                format!("{:.0}", r.cpu_us),
                faults(r.faults),
                r.what.clone(),
            ]));
        }
        g
    }

    /// Start-up against the start-up floor: span by span, then the total
    /// with its verdict and the floor's memory; one row saying why when
    /// the floor was not measured.
    fn startfloor_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("up to mark", Left),
            ("floor", Right),
            ("faults", Right),
            ("trapline", Right),
            ("goal", Right),
            ("verdict", Left),
        ]);
        let dash = || "–".to_string();
        let Some(c) = &self.startfloor else {
            let mut cells = vec!["start-up floor".to_string()];
            cells.extend(std::iter::repeat_with(dash).take(4));
            cells.push(startfloor::NOT_MEASURED_WHY.to_string());
            g.push(Row::cells(cells));
            return g;
        };
        for s in &c.spans {
            g.push(Row::cells(vec![
                s.span.clone(),
                format!("{:.0} µs", s.floor_us),
                s.floor_faults.map_or_else(dash, |f| format!("{f:.0}")),
                s.multiple.map_or_else(dash, fmt::ratio_x),
                dash(),
                String::new(),
            ]));
        }
        g.push(Row::cells(vec![
            "total: CPU to the first KVM_RUN".to_string(),
            c.floor_cpu_ms
                .map_or_else(dash, |v| amount(v, Unit::CpuMillis)),
            dash(),
            c.multiple.map_or_else(dash, |m| fmt::ratio_x(m.value)),
            format!("{:.2}x", startfloor::MULTIPLE_GOAL),
            c.multiple
                .map_or_else(|| NOT_MEASURED.to_string(), |m| m.verdict.to_string()),
        ]));
        g.push(Row::cells(vec![
            "memory beyond guest RAM".to_string(),
            c.floor_rss_mib.map_or_else(dash, |v| amount(v, Unit::MiB)),
            dash(),
            dash(),
            dash(),
            String::new(),
        ]));
        g
    }

    /// The second table, for people.
    fn cost_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("cost", Left),
            ("value", Right),
            ("net cyc", Right),
            ("ns", Right),
            ("status", Left),
            ("what", Left),
        ]);
        for r in &self.cost_per_exit {
            let value = match (r.value, r.unit) {
                (Some(_), Unit::Cycles) => format!("{} cyc", r.shown()),
                _ => r.shown(),
            };
            g.push(Row::cells(vec![
                r.name.clone(),
                value,
                fmt::opt(r.net, fmt::cycles),
                fmt::opt(r.ns, fmt::ns),
                r.status.clone(),
                r.what.clone(),
            ]));
        }
        g.droppable(&["ns", "net cyc"]);
        g
    }

    /// The CSV grid's footprint rows.
    fn footprint_csv(&self, g: &mut Grid) {
        for r in &self.footprint {
            g.push(Row::cells(vec![
                "footprint".to_string(),
                r.name.to_string(),
                "derived".to_string(),
                raw_opt(r.this_host),
                r.unit.to_string(),
                String::new(),
                String::new(),
                fmt::raw(r.goal),
                fmt::raw(r.firecracker),
                r.result(),
                r.formula.clone().unwrap_or_else(|| r.what.to_string()),
            ]));
        }
    }

    /// The CSV grid's start-up rows: the groups, then the phases.
    fn startup_csv(&self, g: &mut Grid) {
        // A start-up row: kind, name, CPU µs, what it is; the columns
        // between (spread, goals, verdict) do not apply.
        let startup_row = |kind: &str, name: String, cpu_us: f64, note: String| {
            let mut cells = vec![kind.to_string(), name, "derived".to_string()];
            cells.extend([fmt::raw(cpu_us), Unit::Micros.to_string()]);
            cells.extend(std::iter::repeat_n(String::new(), 5));
            cells.push(note);
            Row::cells(cells)
        };
        for r in &self.startup_groups {
            g.push(startup_row(
                "startup-group",
                r.group.name().to_string(),
                r.cpu_us,
                format!(
                    "{} (sum of its phases' medians; {} faults)",
                    r.what,
                    fmt::raw(r.faults)
                ),
            ));
        }
        for r in &self.startup {
            g.push(startup_row(
                "startup",
                r.phase.clone(),
                r.cpu_us,
                match r.faults {
                    Some(f) => format!("{} ({}; {} faults)", r.what, r.group.name(), fmt::raw(f)),
                    None => format!("{} ({})", r.what, r.group.name()),
                },
            ));
        }
    }

    /// The CSV grid's floor-ladder rows, one a rung and path.
    fn ladder_csv(&self, g: &mut Grid) {
        for r in &self.ladder {
            for (i, path) in self.ladder_paths.iter().enumerate() {
                let v = r.values.get(i).cloned().flatten();
                g.push(Row::cells(vec![
                    "ladder".to_string(),
                    format!("{}:{path}", r.name),
                    "derived".to_string(),
                    raw_opt(v.as_ref().map(|c| c.cycles)),
                    r.unit.to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    r.what.clone(),
                ]));
            }
        }
    }

    /// The CSV grid's cost-per-exit rows.
    fn cost_per_exit_csv(&self, g: &mut Grid) {
        for r in &self.cost_per_exit {
            g.push(Row::cells(vec![
                "cost-per-exit".to_string(),
                r.name.clone(),
                match r.kind {
                    CostKind::Scenario => "scenario",
                    CostKind::Derived => "derived",
                }
                .to_string(),
                raw_opt(r.value),
                r.unit.to_string(),
                raw_opt(r.net),
                raw_opt(r.ns),
                String::new(),
                String::new(),
                r.status.clone(),
                r.what.clone(),
            ]));
        }
    }
}

impl Page for VmmView {
    fn title(&self) -> String {
        "trapline's own footprint and cost per exit".to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    /// The footprint table.
    fn grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("measure", Left),
            ("trapline", Right),
            ("goal", Right),
            ("Firecracker", Right),
            ("verdict", Left),
        ]);
        for r in &self.footprint {
            let unit = r.shown_unit();
            g.push(Row::cells(vec![
                format!("{} ({})", r.what, r.name),
                r.this_host
                    .map_or_else(|| "–".to_string(), |v| amount(v, unit)),
                bound(r.goal, unit),
                bound(r.firecracker, unit),
                r.result(),
            ]));
        }
        g.droppable(&["Firecracker", "goal"]);
        g
    }

    fn extra_grids(&self) -> Vec<(String, Grid)> {
        let mut v = Vec::new();
        if !self.startup.is_empty() {
            v.push((
                "Start-up, phase by phase: median CPU time and page faults from exec to the \
                 first KVM_RUN"
                    .to_string(),
                self.startup_grid(),
            ));
            v.push((
                "Start-up against the start-up floor (trapline-start-floor: exec, /dev/kvm, \
                 the VM and its interrupt controller, guest RAM, one vCPU, one KVM_RUN), \
                 timed in the same run: the floor's medians and trapline's multiple of them"
                    .to_string(),
                self.startfloor_grid(),
            ));
        }
        v.push(("Cost per exit".to_string(), self.cost_grid()));
        if !self.ladder.is_empty() {
            v.push((
                "The floor ladder: what each piece of the VM configuration costs per in-kernel exit"
                    .to_string(),
                self.ladder_grid(),
            ));
        }
        v
    }

    /// Both tables in one: `table` says which; raw numbers, empty when absent.
    fn csv_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("table", Left),
            ("name", Left),
            ("kind", Left),
            ("value", Right),
            ("unit", Left),
            ("net_cycles", Right),
            ("ns", Right),
            ("goal", Right),
            ("firecracker", Right),
            ("result", Left),
            ("what", Left),
        ]);
        self.footprint_csv(&mut g);
        self.startup_csv(&mut g);
        self.ladder_csv(&mut g);
        self.cost_per_exit_csv(&mut g);
        g
    }

    fn sections(&self) -> Vec<Section> {
        let [cpu, rss] = FOOTPRINT_GOALS;
        let mut notes = vec![
            format!("{FIRECRACKER_SOURCE}."),
            format!(
                "Goals are trapline's own: at most {} CPU-ms from exec to the first KVM_RUN and \
                 at most {} MiB resident beyond guest RAM; the verdict is met when the median \
                 is at most the goal, missed when it is above.",
                cpu.goal, rss.goal
            ),
        ];
        for r in &self.footprint {
            if let Some(f) = &r.formula {
                notes.push(format!("{}: {f}.", r.name));
            }
        }
        if !self.startup.is_empty() {
            notes.push(
                "Start-up's phases: each phase runs from the previous mark (exec, for the first) \
                 to its own; CPU time of the whole process (all threads) and minor page faults, \
                 medians over the same fresh processes. The medians of the phases need not add \
                 up to the median total; a group's figure is the sum of its phases' medians. \
                 exec-to-main is what any static program pays on this host; kvm-creation is \
                 mostly KVM's own work in the creation ioctls."
                    .to_string(),
            );
        }
        if self.startfloor.is_some() {
            notes.push(format!(
                "Start-up floor: {} runs as many times as `trapline run`, alternately; a span \
                 runs from one of its marks to the next, and trapline's multiple of a span is \
                 the median of trapline's phases between the same two marks, summed per \
                 process, over the floor's median (the last span is trapline's filter and vCPU \
                 thread against the floor's nothing: it enters the guest on its main thread). \
                 The total's verdict takes the range both medians' MADs allow.",
                startfloor::PROGRAM
            ));
        }
        notes.push(
            "Cost per exit: gross median cycles per loop iteration for scenarios (net subtracts \
             the same VMM's noop loop); derived values are differences of gross medians, so the \
             loop overhead cancels. raw-kvm rows are a bare KVM_RUN loop with no VMM around it."
                .to_string(),
        );
        if !self.ladder.is_empty() {
            notes.push(
                "The floor ladder: raw /dev/kvm VMs running the probe's own loops (same bytes, \
                 same alignment), each rung with one more piece of trapline's configuration up \
                 to trapline-pc, configured like trapline's lab machine. A piece's cost is its \
                 rung's net median minus the rung below's, with the spread (sum of the four \
                 MADs); a negative or within-spread cost is no cost."
                    .to_string(),
            );
        }
        if self.footprint.iter().all(|r| r.this_host.is_none()) {
            notes.push(format!(
                "The footprint was not measured in this run (it needs the trapline binary: `{} \
                 bench` measures it with fresh `trapline run` processes).",
                TRAPLINE_VMM
            ));
        }
        vec![Section {
            heading: "Notes".to_string(),
            items: notes,
            fold: false,
        }]
    }

    /// Cycle rows only (the footprint is not in cycles).
    fn kut(&self) -> Vec<KutLine> {
        self.cost_per_exit
            .iter()
            .filter(|r| r.unit == Unit::Cycles)
            .map(|r| KutLine {
                name: r.name.clone(),
                cycles: r.value,
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        let footprint_series = |name: &str, color, value: fn(&FootprintRow) -> Option<f64>| {
            Series::plain(name, color, self.footprint.iter().map(value))
        };
        let footprint = HBars {
            title: "Footprint against goal and Firecracker".to_string(),
            x_desc: "each row in its own unit: CPU-ms (top), MiB (bottom)".to_string(),
            categories: self
                .footprint
                .iter()
                .map(|r| r.short().to_string())
                .collect(),
            series: vec![
                footprint_series("trapline", Swatch::Blue, |r| r.this_host),
                footprint_series("goal", Swatch::Green, |r| Some(r.goal)),
                footprint_series("Firecracker", Swatch::Orange, |r| Some(r.firecracker)),
            ],
            tsc_khz: 0,
            cut_outliers: true,
        };
        let footprint_svg = if self.footprint.iter().any(|r| r.this_host.is_some()) {
            hbars(&footprint)
        } else {
            Err("trapline's footprint was not measured in this run".to_string())
        };
        let callout = self
            .footprint
            .iter()
            .map(|r| {
                let unit = r.shown_unit();
                format!(
                    "{}: {} (goal {}, Firecracker {}): {}",
                    r.name,
                    r.this_host
                        .map_or_else(|| NOT_MEASURED.to_string(), |v| amount(v, unit)),
                    bound(r.goal, unit),
                    bound(r.firecracker, unit),
                    r.result()
                )
            })
            .collect();
        let cycle_rows: Vec<&ExitCostRow> = self
            .cost_per_exit
            .iter()
            .filter(|r| r.unit == Unit::Cycles && r.value.is_some())
            .collect();
        let cost = HBars {
            title: "Cycles per exit".to_string(),
            x_desc: "cycles (scenarios: gross median per iteration; derived: difference)"
                .to_string(),
            categories: cycle_rows.iter().map(|r| r.name.clone()).collect(),
            series: vec![Series::plain(
                "cycles",
                Swatch::Red,
                cycle_rows.iter().map(|r| r.value),
            )],
            tsc_khz: 0,
            cut_outliers: true,
        };
        vec![
            Chart {
                title: "Footprint".to_string(),
                caption: format!(
                    "trapline's medians beside its goals and Firecracker's promises. {}.",
                    FIRECRACKER_SOURCE
                ),
                svg: footprint_svg,
                callout,
            },
            Chart {
                title: "Cost per exit".to_string(),
                caption: "What a PIO exit costs through trapline, through the run loop's floor \
                          handler and through a bare KVM_RUN loop; rows not measured have no bar."
                    .to_string(),
                svg: hbars(&cost),
                callout: Vec::new(),
            },
        ]
    }
}

/// A raw number for the CSV, empty when absent.
fn raw_opt(v: Option<f64>) -> String {
    v.map(fmt::raw).unwrap_or_default()
}
