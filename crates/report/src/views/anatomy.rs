//! The `anatomy` view: each user path's round trip split into exit
//! (guest → VMM), the VMM's own handling and entry (VMM → guest), on
//! trapline and on the raw-KVM floor side by side, with their spread and
//! the check that the legs add up (the model: [`crate::model::Anatomy`]).

/// The user paths the anatomy pass measures on an x86 host: every path
/// that reaches user space.
pub const PATHS_X86: [&str; 8] = [
    "pio-user-out",
    "pio-user-in",
    "mmio-user-read",
    "mmio-user-write",
    "hlt",
    "ro-memslot-write",
    "mmio-no-eventfd:pci-mem",
    "portio-no-eventfd:pci-io",
];

/// The same on arm64: MMIO, the read-only memslot, the HVC KVM's SMCCC
/// filter forwards, pci-testdev with no eventfd.
pub const PATHS_ARM64: [&str; 6] = [
    "mmio-user-read",
    "mmio-user-write",
    "ro-memslot-write",
    "hypercall-user",
    "mmio-no-eventfd:pci-mem",
    "portio-no-eventfd:pci-io",
];

/// The anatomy pass's paths on an arm64 host or an x86 one.
pub fn anatomy_paths(arm64: bool) -> &'static [&'static str] {
    if arm64 {
        &PATHS_ARM64
    } else {
        &PATHS_X86
    }
}

use serde::Serialize;

use super::common::{self, host_caption};
use crate::model::{Anatomy, AnatomyPath, Report, RoundTripSource, Spread};
use crate::render::grid::{Align, Cell, Grid, Row, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::unit::Unit;

mod bars;
mod notes;

/// The view: the report's anatomy, if the run measured one.
pub struct AnatomyView<'a> {
    report: &'a Report,
    anatomy: Option<&'a Anatomy>,
}

/// What `--format json` prints for the view.
#[derive(Serialize)]
struct Json<'a> {
    view: &'static str,
    clock: String,
    anatomy: Option<&'a Anatomy>,
    checks: Vec<CheckJson<'a>>,
}

/// One path's sum check in the JSON.
#[derive(Serialize)]
struct CheckJson<'a> {
    name: &'a str,
    vmm: &'a str,
    legs_sum: f64,
    round_trip: f64,
    round_trip_from: &'static str,
    gap_pct: f64,
    within: bool,
}

impl<'a> AnatomyView<'a> {
    /// The view of `report`.
    pub fn build(report: &'a Report) -> Self {
        Self {
            report,
            anatomy: report.anatomy.as_ref(),
        }
    }

    fn paths(&self) -> &'a [AnatomyPath] {
        self.anatomy.map_or(&[], |a| a.paths.as_slice())
    }

    /// The floor's row for `p`'s path, if any.
    fn floor_of(&self, p: &AnatomyPath) -> Option<&'a AnatomyPath> {
        self.paths()
            .iter()
            .find(|f| !f.is_trapline() && f.name == p.name && f.has_legs())
    }
}

/// A spread's median as a number cell.
fn p50(s: Option<Spread>) -> Cell {
    Cell::Num(s.map(|s| s.p50 as f64), Unit::Cycles)
}

/// What a round trip source is called.
fn source_name(s: RoundTripSource) -> &'static str {
    match s {
        RoundTripSource::Batches => "timed batches beside it",
        RoundTripSource::Scenario => "the run's scenario",
        RoundTripSource::Stamped => "stamped round trip",
    }
}

impl Page for AnatomyView<'_> {
    fn title(&self) -> String {
        "The anatomy of a user exit".to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(host_caption(
            &format!(
                "Each user path's round trip split into exit (guest → VMM), the VMM's own \
                 handling and entry (VMM → guest), medians in {} ({}), trapline beside the \
                 raw-KVM floor; the sum is checked against the path's round trip",
                if self.report.host.counter.is_some() {
                    "counter ticks"
                } else {
                    "TSC cycles"
                },
                self.report.host.clock_text()
            ),
            &self.report.host,
        ))
    }

    fn grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("path", Left),
            ("vmm", Left),
            ("exit", Right),
            ("handling", Right),
            ("entry", Right),
            ("sum", Right),
            ("round trip", Right),
            ("gap", Right),
        ]);
        for p in self.paths() {
            if !p.has_legs() {
                // The reason spans the figures' columns (a path and its
                // VMM, then why), not the narrow last one.
                let why = p.reason.clone().unwrap_or_default();
                g.push(Row::spanned(vec![p.name.clone(), p.vmm.clone()], why));
                continue;
            }
            let check = p.sum_check();
            let row = Row {
                cells: vec![
                    Cell::text(&p.name),
                    Cell::text(&p.vmm),
                    p50(p.exit),
                    p50(p.handling),
                    p50(p.entry),
                    Cell::Num(check.map(|(c, _)| c.sum), Unit::Cycles),
                    Cell::Num(
                        check
                            .map(|(c, _)| c.round)
                            .or(p.round_trip.map(|r| r.p50 as f64)),
                        Unit::Cycles,
                    ),
                    Cell::text(
                        check.map_or(String::new(), |(c, _)| format!("{:+.1} %", c.gap_pct)),
                    ),
                ],
                span: None,
            };
            g.push(row);
        }
        g.droppable(&["sum", "gap"]);
        g
    }

    fn extra_grids(&self) -> Vec<(String, Grid)> {
        vec![
            (
                "Where trapline's extra time goes (trapline − floor, medians)".into(),
                self.delta_grid(),
            ),
            ("Spread of each leg".into(), self.spread_grid()),
        ]
    }

    fn csv_grid(&self) -> Grid {
        self.csv()
    }

    fn sections(&self) -> Vec<Section> {
        notes::sections(self)
    }

    fn kut(&self) -> Vec<KutLine> {
        let mut out = Vec::new();
        if self.paths().is_empty() {
            // kut lines say "not measured" rather than nothing.
            out.push(KutLine {
                name: "anatomy".into(),
                cycles: None,
            });
        }
        for p in self.paths() {
            for (leg, s) in [
                ("exit", p.exit),
                ("handling", p.handling),
                ("entry", p.entry),
            ] {
                out.push(KutLine {
                    name: format!("anatomy-{}-{}-{leg}", p.vmm, p.name),
                    cycles: s.map(|s| s.p50 as f64),
                });
            }
        }
        out
    }

    fn json(&self) -> String {
        let checks = self
            .paths()
            .iter()
            .filter_map(|p| {
                let (c, src) = p.sum_check()?;
                Some(CheckJson {
                    name: &p.name,
                    vmm: &p.vmm,
                    legs_sum: c.sum,
                    round_trip: c.round,
                    round_trip_from: source_name(src),
                    gap_pct: c.gap_pct,
                    within: c.within(trapline_abi::ANATOMY_SUM_TOLERANCE_PCT),
                })
            })
            .collect();
        common::json(&Json {
            view: "anatomy",
            clock: self.report.host.clock_text(),
            anatomy: self.anatomy,
            checks,
        })
    }

    fn charts(&self) -> Vec<Chart> {
        vec![bars::chart(self)]
    }
}

impl AnatomyView<'_> {
    /// trapline's legs minus the floor's, per path with both.
    fn delta_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("path", Left),
            ("exit Δ", Right),
            ("handling Δ", Right),
            ("entry Δ", Right),
            ("total Δ", Right),
        ]);
        for p in self
            .paths()
            .iter()
            .filter(|p| p.is_trapline() && p.has_legs())
        {
            let Some(f) = self.floor_of(p) else {
                continue;
            };
            let d = |a: Option<Spread>, b: Option<Spread>| Some(a?.p50 as f64 - b?.p50 as f64);
            let (e, h, n) = (
                d(p.exit, f.exit),
                d(p.handling, f.handling),
                d(p.entry, f.entry),
            );
            let total = e.zip(h).zip(n).map(|((e, h), n)| e + h + n);
            g.push_cells(vec![
                Cell::text(&p.name),
                Cell::Num(e, Unit::Cycles),
                Cell::Num(h, Unit::Cycles),
                Cell::Num(n, Unit::Cycles),
                Cell::Num(total, Unit::Cycles),
            ]);
        }
        g
    }

    /// Each leg's p50, p90, p99 and max.
    fn spread_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("path", Left),
            ("vmm", Left),
            ("leg", Left),
            ("p50", Right),
            ("p90", Right),
            ("p99", Right),
            ("max", Right),
        ]);
        for p in self.paths() {
            for (leg, s) in [
                ("exit", p.exit),
                ("handling", p.handling),
                ("entry", p.entry),
                ("round trip", p.round_trip),
            ] {
                let Some(s) = s else { continue };
                let n = |v: u64| Cell::Num(Some(v as f64), Unit::Cycles);
                g.push_cells(vec![
                    Cell::text(&p.name),
                    Cell::text(&p.vmm),
                    Cell::text(leg),
                    n(s.p50),
                    n(s.p90),
                    n(s.p99),
                    n(s.max),
                ]);
            }
        }
        g.droppable(&["max"]);
        g
    }

    /// Every number, one row per path and VMM, for machines.
    fn csv(&self) -> Grid {
        let mut cols: Vec<(String, Align)> =
            ["path", "vmm", "align", "align_error", "accesses", "split"]
                .iter()
                .map(|c| (c.to_string(), Align::Left))
                .collect();
        for leg in ["exit", "handling", "entry", "round_trip"] {
            for q in ["p50", "p90", "p99", "max"] {
                cols.push((format!("{leg}_{q}"), Align::Right));
            }
        }
        for c in [
            "per_iteration",
            "scenario_per_iteration",
            "legs_sum",
            "gap_pct",
            "reason",
        ] {
            cols.push((c.to_string(), Align::Right));
        }
        let refs: Vec<(&str, Align)> = cols.iter().map(|(c, a)| (c.as_str(), *a)).collect();
        let mut g = Grid::new(&refs);
        let num = |v: Option<f64>, u| Cell::Num(v, u);
        for p in self.paths() {
            let mut cells = vec![
                Cell::text(&p.name),
                Cell::text(&p.vmm),
                Cell::text(&p.align),
                num(p.align_error.map(|e| e as f64), Unit::Count),
                num(Some(p.accesses as f64), Unit::Count),
                num(Some(p.split as f64), Unit::Count),
            ];
            for s in [p.exit, p.handling, p.entry, p.round_trip] {
                for q in [
                    |s: Spread| s.p50,
                    |s: Spread| s.p90,
                    |s: Spread| s.p99,
                    |s: Spread| s.max,
                ] {
                    cells.push(num(s.map(|s| q(s) as f64), Unit::Cycles));
                }
            }
            let check = p.sum_check();
            cells.push(num(p.per_iteration, Unit::Cycles));
            cells.push(num(p.scenario_per_iteration, Unit::Cycles));
            cells.push(num(check.map(|(c, _)| c.sum), Unit::Cycles));
            cells.push(num(check.map(|(c, _)| c.gap_pct), Unit::Ratio));
            cells.push(Cell::text(p.reason.clone().unwrap_or_default()));
            g.push_cells(cells);
        }
        g
    }
}

/// The paper view's note on the I/O User row, where the run measured its
/// anatomy: the row's legs on trapline, tied to the paper's explanations
/// (two world switches, the VGIC state on arm64, the user-space hop).
pub fn paper_note(report: &Report) -> Option<String> {
    let a = report.anatomy.as_ref()?;
    let want = if report.host.is_arm64() {
        "mmio-user-write"
    } else {
        "pio-user-out"
    };
    let p = a
        .paths
        .iter()
        .find(|p| p.is_trapline() && p.name == want && p.has_legs())?;
    let c = |s: Option<Spread>| crate::fmt::cycles(s.map_or(0.0, |s| s.p50 as f64));
    let vgic = if report.host.is_arm64() {
        " (each holding half of the VGIC state's save and restore, which the paper finds is over half the hypercall's cost)"
    } else {
        ""
    };
    Some(format!(
        "I/O User split ({want}, --view anatomy): exit {} and entry {}, the paper's \"two world switches\"{vgic}, \
         around trapline's own handling {}: the user-space hop's part a VMM controls.",
        c(p.exit),
        c(p.entry),
        c(p.handling)
    ))
}
