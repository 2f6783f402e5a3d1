//! The default view: every scenario, the derived values and three charts.

use std::collections::BTreeMap;

use crate::derive::ladder;
use crate::fmt::{self, cycles, derived_value, opt};
use crate::model::{Derived, Report, ScenarioResult, Status, TRAPLINE_VMM};
use crate::render::charts::{hbars, BarValue, HBars, Series, Swatch};
use crate::render::grid::{Align, Cell, Grid, Row, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::stats::Stats;
use crate::unit::Unit;

/// Every scenario of a report.
pub(crate) struct AllPage<'a> {
    report: &'a Report,
}

impl<'a> AllPage<'a> {
    /// The page for `report`.
    pub fn new(report: &'a Report) -> Self {
        Self { report }
    }

    fn measured(&self) -> impl Iterator<Item = &'a ScenarioResult> {
        self.report.scenarios.iter().filter(|s| s.is_measured())
    }
}

/// A scenario's noise flags' kinds, for a table cell: `outliers`,
/// `spread, bimodal`; empty when clean.
fn noise_kinds(s: &ScenarioResult) -> String {
    let kinds: Vec<&str> = s.noise.iter().map(|f| f.kind.as_str()).collect();
    kinds.join(", ")
}

/// Every noisy scenario with what its repeats showed and what to do.
pub(crate) fn noise_section(report: &Report) -> Section {
    let items = report
        .scenarios
        .iter()
        .flat_map(|s| {
            s.noise
                .iter()
                .map(move |f| format!("{}: {} — {}", s.key(), f.text(), f.kind.advice()))
        })
        .collect();
    Section {
        heading: "Noise".to_string(),
        items,
        fold: false,
    }
}

/// The derived values as a table: value, the range its inputs' spreads
/// allow, its goal and verdict, how it was computed and what it means.
pub(crate) fn derived_grid(derived: &[Derived]) -> Grid {
    use Align::{Left, Right};
    let mut g = Grid::new(&[
        ("value", Left),
        ("", Right),
        ("range (from the MADs)", Right),
        ("goal", Right),
        ("verdict", Left),
        ("formula", Left),
        ("meaning", Left),
    ]);
    for d in derived {
        g.push(Row::cells(vec![
            d.name.clone(),
            derived_value(d.value, &d.unit),
            d.range
                .map_or_else(String::new, |r| fmt::range(r.low, r.high, &d.unit)),
            d.goal.as_ref().map_or_else(String::new, |goal| {
                format!("≤ {}", derived_value(goal.at_most, &d.unit))
            }),
            d.goal
                .as_ref()
                .map_or_else(String::new, |goal| goal.verdict.to_string()),
            d.formula.clone(),
            d.note.clone().unwrap_or_default(),
        ]));
    }
    g
}

fn reason(s: &ScenarioResult) -> String {
    s.reason
        .clone()
        .unwrap_or_else(|| "no reason given".to_string())
}

impl Page for AllPage<'_> {
    fn title(&self) -> String {
        "trapline notification-path costs".to_string()
    }

    fn grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("scenario", Left),
            ("status", Left),
            ("median cyc", Right),
            ("net cyc", Right),
            ("±MAD", Right),
            ("min", Right),
            ("max", Right),
            ("ns", Right),
            ("own cyc/exit", Right),
            ("KVM exits/iter", Right),
            ("exits/iter", Left),
            ("noise", Left),
        ]);
        for s in &self.report.scenarios {
            match (&s.stats, s.status) {
                (Some(st), Status::Ok) => g.push(Row::cells(vec![
                    s.key(),
                    s.status.to_string(),
                    cycles(st.median),
                    opt(s.net.as_ref().map(|n| n.median), cycles),
                    cycles(st.mad),
                    cycles(st.min),
                    cycles(st.max),
                    opt(s.ns_per_iter, fmt::ns),
                    opt(s.handling.as_ref().map(|h| h.median), cycles),
                    opt(s.kvm_exits_per_iter.get("exits").copied(), |v| {
                        format!("{v:.2}")
                    }),
                    fmt::exits(&s.exits_per_iter),
                    noise_kinds(s),
                ])),
                _ => g.push(Row::spanned(vec![s.key(), s.status.to_string()], reason(s))),
            }
        }
        // On a narrow terminal: the spread's details first, the exits and
        // noise last (the scenario, status, median and net cycles stay);
        // noise goes last of all, the summary sends readers to it.
        g.droppable(&[
            "min",
            "max",
            "ns",
            "KVM exits/iter",
            "own cyc/exit",
            "±MAD",
            "exits/iter",
            "noise",
        ]);
        g
    }

    fn csv_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("scenario", Left),
            ("name", Left),
            ("vmm", Left),
            ("group", Left),
            ("status", Left),
            ("n", Right),
            ("median", Right),
            ("net_median", Right),
            ("mad", Right),
            ("min", Right),
            ("max", Right),
            ("mean", Right),
            ("stddev", Right),
            ("ns_per_iter", Right),
            ("handling_median", Right),
            ("handling_mad", Right),
            ("exits_per_iter", Left),
            ("kvm_exits_per_iter", Left),
            ("check", Left),
            ("reason", Left),
            ("path", Left),
            ("noise", Left),
        ]);
        // Raw numbers, empty when absent (a `Cell::Num` in CSV).
        let num = |v: Option<f64>| Cell::Num(v, Unit::Cycles);
        let pairs = |m: &BTreeMap<String, f64>| {
            let pairs: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Cell::Text(pairs.join(";"))
        };
        for s in &self.report.scenarios {
            let st = s.stats.as_ref();
            let stat = |f: fn(&Stats) -> f64| num(st.map(f));
            g.push_cells(vec![
                Cell::Text(s.key()),
                Cell::text(&s.name),
                Cell::text(&s.vmm),
                Cell::text(&s.group),
                Cell::Text(s.status.to_string()),
                Cell::Text(st.map(|x| x.n.to_string()).unwrap_or_default()),
                stat(|x| x.median),
                num(s.net.as_ref().map(|n| n.median)),
                stat(|x| x.mad),
                stat(|x| x.min),
                stat(|x| x.max),
                stat(|x| x.mean),
                stat(|x| x.stddev),
                Cell::Num(s.ns_per_iter, Unit::Nanos),
                num(s.handling.as_ref().map(|h| h.median)),
                num(s.handling.as_ref().map(|h| h.mad)),
                pairs(&s.exits_per_iter),
                pairs(&s.kvm_exits_per_iter),
                Cell::text(s.check.as_deref().unwrap_or_default()),
                Cell::text(s.reason.as_deref().unwrap_or_default()),
                Cell::text(&s.path),
                // `spread;outliers`: one field, CSV's own separator avoided.
                Cell::Text(
                    s.noise
                        .iter()
                        .map(|f| f.kind.as_str())
                        .collect::<Vec<_>>()
                        .join(";"),
                ),
            ]);
        }
        g
    }

    /// The derived values as a table, and with a peer VMM in the run its
    /// rows beside trapline's.
    fn extra_grids(&self) -> Vec<(String, Grid)> {
        let mut grids = Vec::new();
        if !self.report.derived.is_empty() {
            grids.push((
                "Derived values".to_string(),
                derived_grid(&self.report.derived),
            ));
        }
        grids.extend(
            self.report
                .config
                .peer
                .as_deref()
                // `qemu (QEMU emulator version …)`: the VMM is the first word.
                .and_then(|peer| peer.split_whitespace().next())
                .and_then(|peer| super::peer::grid(self.report, peer)),
        );
        // Only a run that recorded tails shows them (older saved runs look as they did).
        if self.report.scenarios.iter().any(|s| s.tails.is_some()) {
            grids.push((
                "Tails: each scenario's recorded distribution, cycles per iteration, stamp pair \
                 included (--view tails: the method, the net table, CSV)"
                    .to_string(),
                super::tails::TailsView::build(self.report).grid(),
            ));
        }
        grids
    }

    fn sections(&self) -> Vec<Section> {
        let checks = self
            .report
            .scenarios
            .iter()
            .filter_map(|s| s.check.as_ref().map(|c| format!("{}: {c}", s.key())))
            .collect();
        vec![
            noise_section(self.report),
            Section {
                heading: "Checks".to_string(),
                items: checks,
                fold: true,
            },
        ]
    }

    fn kut(&self) -> Vec<KutLine> {
        self.report
            .scenarios
            .iter()
            .map(|s| KutLine {
                name: s.key(),
                cycles: s.median(),
            })
            .collect()
    }

    fn json(&self) -> String {
        self.report.to_json()
    }

    fn charts(&self) -> Vec<Chart> {
        let ours: Vec<&ScenarioResult> =
            by_group(self.measured().filter(|s| s.vmm == TRAPLINE_VMM).collect());
        let mut charts = vec![
            self.premium_chart(),
            self.cost_chart(&ours),
            self.net_chart(&ours),
        ];
        charts.extend(self.ladder_chart());
        let mut tails = super::tails::TailsView::build(self.report);
        // trapline's own rows (a peer's or the unprofiled VM's key has `vmm:`).
        tails.rows.retain(|r| !r.scenario.contains(':'));
        charts.extend(tails.charts());
        charts
    }
}

/// `what`, and the unit a chart's axis is in.
fn time_desc(tsc: u64, what: &str) -> String {
    if tsc > 0 {
        format!("{what} at the TSC frequency")
    } else {
        format!("{what} in cycles")
    }
}

/// A chart's category per scenario: `group · name`.
fn categories(names: &[&ScenarioResult]) -> Vec<String> {
    names
        .iter()
        .map(|s| format!("{} · {}", s.group, s.name))
        .collect()
}

impl<'a> AllPage<'a> {
    /// Other VMMs beside trapline's rows (a peer, trapline without the
    /// profile), in run order; the floor ladder has its own chart.
    fn others(&self) -> Vec<&'a str> {
        let mut others: Vec<&str> = Vec::new();
        for s in self.measured() {
            if s.vmm != TRAPLINE_VMM
                && ladder::rung(&s.vmm).is_none()
                && !others.contains(&s.vmm.as_str())
            {
                others.push(&s.vmm);
            }
        }
        others
    }

    /// `vmm`'s bars for the scenarios `names` (gross, or `net` of its
    /// baseline), whiskers from the fastest to the slowest repeat, and the
    /// repeats.
    fn series_of(&self, vmm: &str, colour: Swatch, net: bool, names: &[&ScenarioResult]) -> Series {
        let r = self.report;
        let rows: Vec<Option<&ScenarioResult>> = names
            .iter()
            .map(|s| r.scenario(vmm, &s.name).filter(|x| x.is_measured()))
            .collect();
        let base = r.baseline_median(vmm).filter(|_| net);
        Series {
            name: vmm.to_string(),
            color: colour,
            values: rows
                .iter()
                .map(|x| {
                    let x = (*x)?;
                    let st = if net {
                        x.net.as_ref()?
                    } else {
                        x.stats.as_ref()?
                    };
                    Some(BarValue {
                        value: st.median,
                        whisker: Some((st.min, st.max)),
                    })
                })
                .collect(),
            samples: rows
                .iter()
                .map(|x| match x {
                    Some(x) if !net || x.net.is_some() => x
                        .per_iter_cycles()
                        .into_iter()
                        .map(|v| v - base.unwrap_or(0.0))
                        .collect(),
                    _ => Vec::new(),
                })
                .collect(),
        }
    }

    /// trapline's series, then each other VMM's that measured any of
    /// `names`.
    fn grouped(&self, net: bool, names: &[&ScenarioResult]) -> Vec<Series> {
        let colours = [Swatch::Orange, Swatch::Green, Swatch::Purple, Swatch::Grey];
        let mut series = vec![self.series_of(TRAPLINE_VMM, Swatch::Blue, net, names)];
        for (vmm, colour) in self.others().iter().zip(colours.iter().cycle()) {
            let s = self.series_of(vmm, *colour, net, names);
            if s.values.iter().any(Option::is_some) {
                series.push(s);
            }
        }
        series
    }

    /// The derived cycle values (the premium, its floor, trapline's own
    /// cost), with every value that has a goal called out beside them.
    fn premium_chart(&self) -> Chart {
        let r = self.report;
        let premiums: Vec<_> = r
            .derived
            .iter()
            .filter(|d| d.unit == Unit::Cycles && !d.name.contains(':'))
            .collect();
        let premium_chart = HBars {
            title: "User-exit premium, its floor and trapline's own cost".to_string(),
            x_desc: time_desc(r.host.tsc_khz, "derived value"),
            categories: premiums.iter().map(|d| d.name.clone()).collect(),
            series: vec![Series {
                name: "value".to_string(),
                color: Swatch::Green,
                values: premiums
                    .iter()
                    .map(|d| {
                        Some(BarValue {
                            value: d.value,
                            whisker: d.range.map(|x| x.bounds()),
                        })
                    })
                    .collect(),
                samples: Vec::new(),
            }],
            tsc_khz: r.host.tsc_khz,
            // The headline: every bar is read, none is cut.
            cut_outliers: false,
        };
        let callout: Vec<String> = r
            .derived
            .iter()
            .filter(|d| d.goal.is_some())
            .map(|d| {
                let goal = d.goal.as_ref().map_or_else(String::new, |g| {
                    format!(
                        "; goal ≤ {}: {}",
                        derived_value(g.at_most, &d.unit),
                        g.verdict
                    )
                });
                format!("{}: {}{goal}", d.name, derived_value(d.value, &d.unit))
            })
            .collect();
        let premium_svg = if premiums.is_empty() {
            Err(
                "needs pio-user-out, pio-kernel-wildcard and vmm-floor-pio measured on one VMM"
                    .to_string(),
            )
        } else {
            hbars(&premium_chart)
        };
        Chart {
            title: "The user-exit premium".to_string(),
                caption: "How much more a PIO write costs when completed in user space than by an in-kernel \
                          ioeventfd, the part of that premium trapline's in-loop floor already pays, and what \
                          trapline's dispatch and handling add; whiskers span the range the inputs' MADs \
                          allow."
                    .to_string(),
                svg: premium_svg,
            callout,
        }
    }

    /// Each of trapline's scenarios, other VMMs beside them.
    fn cost_chart(&self, ours: &[&ScenarioResult]) -> Chart {
        let tsc = self.report.host.tsc_khz;
        let medians = HBars {
            title: "trapline's scenarios: cost per iteration".to_string(),
            x_desc: time_desc(tsc, "median per iteration"),
            categories: categories(ours),
            series: self.grouped(false, ours),
            tsc_khz: tsc,
            cut_outliers: true,
        };
        Chart {
            title: "Cost per operation".to_string(),
                caption: "Median per loop iteration of each of trapline's scenarios, grouped by path (other \
                          VMMs beside them); whiskers span the fastest and slowest repeat and each dot is \
                          one repeat, so two clusters show. A whisker or repeat far past the rest is clipped \
                          at the axis's end and marked ▸ with its value."
                    .to_string(),
                svg: hbars(&medians),
            callout: Vec::new(),
        }
    }

    /// What each operation costs beyond the same VMM's noop.
    fn net_chart(&self, ours: &[&ScenarioResult]) -> Chart {
        let tsc = self.report.host.tsc_khz;
        let with_net: Vec<&ScenarioResult> =
            ours.iter().copied().filter(|s| s.net.is_some()).collect();
        let net = HBars {
            title: "Net cost over the noop baseline".to_string(),
            x_desc: time_desc(tsc, "median minus the same VMM's noop median"),
            categories: categories(&with_net),
            series: self.grouped(true, &with_net),
            tsc_khz: tsc,
            cut_outliers: true,
        };
        Chart {
            title: "Net cost".to_string(),
            caption: "What each operation costs beyond the empty loop (noop) of the same VMM."
                .to_string(),
            svg: if with_net.is_empty() {
                Err("no noop baseline was measured".to_string())
            } else {
                hbars(&net)
            },
            callout: Vec::new(),
        }
    }
}

impl AllPage<'_> {
    /// The floor ladder's rungs, each with its in-kernel loops as grouped
    /// bars; `None` when no rung was measured.
    fn ladder_chart(&self) -> Option<Chart> {
        let r = self.report;
        let this = ladder::for_report(r);
        let rungs: Vec<&str> = this
            .rungs
            .iter()
            .map(|g| g.vmm)
            .filter(|v| r.scenarios.iter().any(|s| s.vmm == *v && s.is_measured()))
            .collect();
        if rungs.is_empty() {
            return None;
        }
        let paths: Vec<&str> = std::iter::once(crate::model::BASELINE_SCENARIO)
            .chain(this.kernel_paths.iter().copied())
            .collect();
        let colours = [Swatch::Grey, Swatch::Blue, Swatch::Orange, Swatch::Green];
        let series = paths
            .iter()
            .zip(colours)
            .map(|(path, colour)| {
                let rows: Vec<Option<&ScenarioResult>> = rungs
                    .iter()
                    .map(|v| r.scenario(v, path).filter(|s| s.is_measured()))
                    .collect();
                Series {
                    name: (*path).to_string(),
                    color: colour,
                    values: rows
                        .iter()
                        .map(|s| {
                            let st = (*s)?.stats.as_ref()?;
                            Some(BarValue {
                                value: st.median,
                                whisker: Some((st.min, st.max)),
                            })
                        })
                        .collect(),
                    samples: rows
                        .iter()
                        .map(|s| s.map(|s| s.per_iter_cycles()).unwrap_or_default())
                        .collect(),
                }
            })
            .collect();
        let tsc = r.host.tsc_khz;
        let spec = HBars {
            title: "The floor ladder: raw VMs, one piece of trapline's configuration at a time"
                .to_string(),
            x_desc: if tsc > 0 {
                "median per iteration, as time at the TSC frequency".to_string()
            } else {
                "median per iteration in cycles".to_string()
            },
            categories: rungs.iter().map(|v| (*v).to_string()).collect(),
            series,
            tsc_khz: tsc,
            cut_outliers: true,
        };
        Some(Chart {
            title: "The floor ladder".to_string(),
            caption: "Each rung is a raw /dev/kvm VM running the probe's own in-kernel loops; the \
                      difference between two rungs is what that piece of configuration costs. Whiskers: \
                      min–max; dots: each repeat."
                .to_string(),
            svg: hbars(&spec),
            callout: Vec::new(),
        })
    }
}

/// Scenarios ordered by group, groups in the order they first appear.
fn by_group(scenarios: Vec<&ScenarioResult>) -> Vec<&ScenarioResult> {
    let mut groups: Vec<&str> = Vec::new();
    for s in &scenarios {
        if !groups.contains(&s.group.as_str()) {
            groups.push(&s.group);
        }
    }
    let mut out = scenarios;
    out.sort_by_key(|s| groups.iter().position(|g| *g == s.group));
    out
}
