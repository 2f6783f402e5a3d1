//! `--view tails`: every scenario's recorded distribution beside its
//! median: p50, p90, p99, p99.9 and max (raw per-iteration cycles, the
//! stamp pair included), the same net of the stamp pair, the sample and
//! what recording cost; one log-scale histogram per scenario in HTML.

use serde::Serialize;

use crate::fmt::{compact_cycles, grouped};
use crate::model::{Report, ScenarioResult, Status, Tails, OVERHEAD_GOAL_PCT, PERCENTILES};
use crate::noise::NoiseKind;
use crate::render::grid::{Align, Cell, Grid, Row, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::unit::Unit;
use crate::views::common;

/// How the values were taken, for every format (the method's notes).
pub const METHOD: [&str; 4] = [
    "Each repeat's probe VM runs, after a scenario's timed batches (left as they are), a recorded \
     pass of min(final batch's iterations, 4,096) iterations, each one alone through the \
     scenario's own loop, stamped around its one operation with the probe's clock (x86: \
     lfence; rdtsc; arm64: isb; cntvct), and counts it in a log-linear histogram in guest memory; \
     the lab reads it back and merges the repeats.",
    "Percentiles are raw per-iteration cycles: each value includes the stamp pair around it; the \
     net table subtracts the stamp pair's own cost (the median empty stamped iteration, measured \
     once per VM). irqfd's values are its injections' own latencies from the stamps its batch \
     already takes; eoi's are the handler's timed EOI writes (no stamp pair to subtract).",
    "A percentile is its bucket's midpoint, within 0.78 % of the value it stands for (64 buckets \
     per power of two); min and max are exact.",
    "rec +% is the recorded pass's mean over the timed median, per iteration: what stamping each \
     iteration adds. Goal: at most 2 %; a scenario above it recorded a stamp-dominated sample \
     (its shape, not its level, is what to read), and says so. On a nested host every stamp and \
     every iteration also includes the outer hypervisor.",
];

/// One scenario's row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TailsRow {
    /// Report key (`name`, `vmm:name`).
    pub scenario: String,
    /// `ok`, `unsupported`, `failed`.
    pub status: String,
    /// The timed batches' median cycles per iteration (today's number).
    pub median: Option<f64>,
    /// The recorded distribution; `None`: not recorded.
    pub tails: Option<Tails>,
    /// p50 … max less the stamp pair (`None`: self-stamped or not recorded).
    pub net: Option<[i64; 5]>,
    /// What the sample is, or why there is none.
    pub note: String,
}

impl TailsRow {
    fn of(s: &ScenarioResult) -> Self {
        let tails = s.tails.clone();
        let note = match (&tails, s.status) {
            (_, st) if st != Status::Ok => format!(
                "{st}{}",
                s.reason
                    .as_deref()
                    .map_or_else(String::new, |r| format!(": {r}"))
            ),
            (Some(t), _) => t.label(),
            (None, _) if s.vmm.starts_with(crate::model::TRAPLINE_VMM) => {
                "not recorded (a report from before tails)".into()
            }
            (None, _) if s.vmm.starts_with("raw-kvm") => {
                "not recorded: the raw-KVM floor times a loop total only".into()
            }
            (None, _) => format!("not recorded: {} gives a serial line only", s.vmm),
        };
        Self {
            scenario: s.key(),
            status: s.status.to_string(),
            median: s.median(),
            // A self-timed scenario's values carry no stamp pair to subtract.
            net: tails
                .as_ref()
                .filter(|t| t.recorded() && !s.is_self_timed())
                .and_then(Tails::net_row),
            tails,
            note,
        }
    }

    fn recorded(&self) -> Option<&Tails> {
        self.tails.as_ref().filter(|t| t.recorded())
    }
}

/// The tails view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TailsView {
    /// One line on what is comparable.
    pub caption: String,
    /// How the values were taken.
    pub method: Vec<String>,
    /// Every scenario, in report order.
    pub rows: Vec<TailsRow>,
}

impl TailsView {
    /// The view of `report`.
    pub fn build(report: &Report) -> Self {
        Self {
            caption: common::host_caption(
                "Each scenario's recorded distribution beside its timed median, in cycles per \
                 iteration; peers (QEMU, kvmtool) and the raw-KVM floor record none",
                &report.host,
            ),
            method: METHOD.iter().map(|s| (*s).to_string()).collect(),
            rows: report.scenarios.iter().map(TailsRow::of).collect(),
        }
    }
}

/// `+3 %`, `+250 %`, `–`.
fn pct(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(|| "–".into(), |p| format!("{p:+.0} %"))
}

fn compact(v: u64) -> String {
    compact_cycles(v as f64)
}

impl Page for TailsView {
    fn title(&self) -> String {
        "Tails: every scenario's distribution".into()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    fn grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("scenario", Left),
            ("median", Right),
            ("n", Right),
            ("p50", Right),
            ("p90", Right),
            ("p99", Right),
            ("p99.9", Right),
            ("max", Right),
            ("rec +%", Right),
        ]);
        for r in &self.rows {
            let Some(t) = r.recorded() else {
                g.push(Row::spanned(vec![r.scenario.clone()], r.note.clone()));
                continue;
            };
            let mut cells = vec![
                r.scenario.clone(),
                r.median.map_or_else(|| "–".into(), compact_cycles),
                grouped(t.count as f64),
            ];
            cells.extend(t.row().map(compact));
            cells.push(pct(t.overhead_pct));
            g.push(Row::cells(cells));
        }
        g.droppable(&["p90", "n", "rec +%"]);
        g
    }

    fn extra_grids(&self) -> Vec<(String, Grid)> {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("scenario", Left),
            ("stamp", Right),
            ("p50", Right),
            ("p90", Right),
            ("p99", Right),
            ("p99.9", Right),
            ("max", Right),
        ]);
        for r in &self.rows {
            let (Some(t), Some(net)) = (r.recorded(), r.net) else {
                continue;
            };
            let mut cells = vec![r.scenario.clone(), compact(t.stamp)];
            cells.extend(net.map(|v| compact_cycles(v as f64)));
            g.push(Row::cells(cells));
        }
        if g.rows.is_empty() {
            return Vec::new();
        }
        vec![(
            "Net of the stamp pair (each value less the median empty stamped iteration)".into(),
            g,
        )]
    }

    fn csv_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut cols: Vec<(String, Align)> = [
            "scenario",
            "status",
            "median_cycles",
            "count",
            "repeats",
            "stamp_cycles",
            "min_cycles",
        ]
        .iter()
        .map(|c| ((*c).to_string(), Right))
        .collect();
        cols[0].1 = Left;
        cols[1].1 = Left;
        let names = PERCENTILES.map(|(n, _)| n.replace('.', "")).to_vec();
        let names: Vec<String> = names.into_iter().chain(["max".to_string()]).collect();
        cols.extend(names.iter().map(|n| (format!("{n}_cycles"), Right)));
        cols.extend(names.iter().map(|n| (format!("net_{n}_cycles"), Right)));
        cols.push(("recording_overhead_pct".into(), Right));
        cols.push(("note".into(), Left));
        let titled: Vec<(&str, &str, Align)> = cols
            .iter()
            .map(|(t, a)| (t.as_str(), t.as_str(), *a))
            .collect();
        let mut g = Grid::titled(&titled);
        let num = |v: Option<f64>, unit| Cell::Num(v, unit);
        for r in &self.rows {
            let t = r.recorded();
            let u = |f: fn(&Tails) -> u64| num(t.map(|t| f(t) as f64), Unit::Cycles);
            let mut cells = vec![
                Cell::text(&r.scenario),
                Cell::text(&r.status),
                num(r.median, Unit::Cycles),
                num(t.map(|t| t.count as f64), Unit::Count),
                num(t.map(|t| f64::from(t.repeats)), Unit::Count),
                u(|t| t.stamp),
                u(|t| t.min),
            ];
            for i in 0..5 {
                cells.push(num(t.map(|t| t.row()[i] as f64), Unit::Cycles));
            }
            for i in 0..5 {
                cells.push(num(r.net.map(|n| n[i] as f64), Unit::Cycles));
            }
            cells.push(num(t.and_then(|t| t.overhead_pct), Unit::Count));
            cells.push(Cell::text(&r.note));
            g.push_cells(cells);
        }
        g
    }

    fn sections(&self) -> Vec<Section> {
        let mut shape = Vec::new();
        let mut over = Vec::new();
        for r in &self.rows {
            let Some(t) = r.recorded() else { continue };
            for f in crate::noise::assess_tails(t) {
                shape.push(format!("{}: {}", r.scenario, f.text()));
            }
            if t.within_goal() == Some(false) {
                over.push(format!("{}: {}", r.scenario, t.label()));
            }
        }
        let mut out = vec![Section {
            heading: "How these were measured".into(),
            items: self.method.clone(),
            fold: false,
        }];
        if !shape.is_empty() {
            shape.push(format!(
                "Definitions: two modes: a second peak holding at least {:.0} % of the values, at \
                 least {:.0} % away from the main one, with a valley under half the smaller peak \
                 between; heavy tail: p99 at least {:.0}x the p50 (either needs {} values or more).",
                crate::noise::MODE_SHARE * 100.0,
                (crate::noise::MODE_GAP - 1.0) * 100.0,
                crate::noise::HEAVY_TAIL_RATIO,
                crate::noise::MIN_TAIL_VALUES,
            ));
            shape.push(format!("Two modes: {}.", NoiseKind::TwoModes.advice()));
            shape.push(format!("Heavy tail: {}.", NoiseKind::HeavyTail.advice()));
            out.push(Section {
                heading: "Shape (the noise verdict from the distributions)".into(),
                items: shape,
                fold: false,
            });
        }
        if !over.is_empty() {
            out.push(Section {
                heading: format!(
                    "Recording above its goal ({OVERHEAD_GOAL_PCT:.0} % of the op): stamp-dominated samples"
                ),
                items: over,
                fold: true,
            });
        }
        out
    }

    fn kut(&self) -> Vec<KutLine> {
        // Every scenario's p50, p99 and max; no value where not recorded.
        self.rows
            .iter()
            .flat_map(|r| {
                let t = r.recorded();
                [
                    ("p50", t.map(|t| t.p50)),
                    ("p99", t.map(|t| t.p99)),
                    ("max", t.map(|t| t.max)),
                ]
                .map(|(q, v)| KutLine {
                    name: format!("{}_{q}", r.scenario),
                    cycles: v.map(|v| v as f64),
                })
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        self.rows
            .iter()
            .filter_map(|r| Some((r, r.recorded()?)))
            .map(|(r, t)| Chart {
                title: format!("{}: distribution", r.scenario),
                caption: format!(
                    "{}. Log-scale value axis (cycles per iteration) and log-scale counts, so the \
                     tail's single iterations show; the lines mark p50, p99 and p99.9.",
                    t.label()
                ),
                svg: crate::render::tails_chart::histogram(t),
                callout: vec![
                    format!("p50 {} cycles", grouped(t.p50 as f64)),
                    format!("p99 {} cycles", grouped(t.p99 as f64)),
                    format!("max {} cycles", grouped(t.max as f64)),
                    format!("rec +% {}", pct(t.overhead_pct)),
                ],
            })
            .collect()
    }
}
