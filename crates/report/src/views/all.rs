//! The default view: every scenario, the derived values and three charts.

use std::collections::BTreeMap;

use crate::fmt::{self, cycles, derived_value, opt};
use crate::model::{Report, ScenarioResult, Status};
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
                ])),
                _ => g.push(Row::spanned(vec![s.key(), s.status.to_string()], reason(s))),
            }
        }
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
            ]);
        }
        g
    }

    /// With a peer VMM in the run: its rows beside trapline's.
    fn extra_grids(&self) -> Vec<(String, Grid)> {
        self.report
            .config
            .peer
            .as_deref()
            // `qemu (QEMU emulator version …)`: the VMM is the first word.
            .and_then(|peer| peer.split_whitespace().next())
            .and_then(|peer| super::peer::grid(self.report, peer))
            .into_iter()
            .collect()
    }

    fn sections(&self) -> Vec<Section> {
        let derived = self
            .report
            .derived
            .iter()
            .map(|d| {
                let mut line = format!(
                    "{} = {}  [{}]",
                    d.name,
                    derived_value(d.value, &d.unit),
                    d.formula
                );
                if let Some(note) = &d.note {
                    line.push_str(" — ");
                    line.push_str(note);
                }
                line
            })
            .collect();
        let checks = self
            .report
            .scenarios
            .iter()
            .filter_map(|s| s.check.as_ref().map(|c| format!("{}: {c}", s.key())))
            .collect();
        vec![
            Section {
                heading: "Derived".to_string(),
                items: derived,
            },
            Section {
                heading: "Checks".to_string(),
                items: checks,
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
        let measured: Vec<&ScenarioResult> = self.measured().collect();
        let medians = HBars {
            title: "Median cycles per iteration".to_string(),
            x_desc: "cycles per iteration (whiskers: min–max over repeats)".to_string(),
            categories: measured.iter().map(|s| s.key()).collect(),
            series: vec![Series {
                name: "median".to_string(),
                color: Swatch::Blue,
                values: measured
                    .iter()
                    .map(|s| {
                        s.stats.as_ref().map(|st| BarValue {
                            value: st.median,
                            whisker: Some((st.min, st.max)),
                        })
                    })
                    .collect(),
            }],
        };
        let with_net: Vec<&ScenarioResult> = measured
            .iter()
            .copied()
            .filter(|s| s.net.is_some())
            .collect();
        let net = HBars {
            title: "Net cost over the noop baseline".to_string(),
            x_desc: "cycles per iteration minus the same VMM's noop median".to_string(),
            categories: with_net.iter().map(|s| s.key()).collect(),
            series: vec![Series {
                name: "net".to_string(),
                color: Swatch::Orange,
                values: with_net
                    .iter()
                    .map(|s| {
                        s.net.as_ref().map(|n| BarValue {
                            value: n.median,
                            whisker: Some((n.min, n.max)),
                        })
                    })
                    .collect(),
            }],
        };
        let premiums: Vec<_> = self
            .report
            .derived
            .iter()
            .filter(|d| d.unit == Unit::Cycles)
            .collect();
        let premium_chart = HBars {
            title: "User-exit premium, raw-KVM floor and dispatch overhead".to_string(),
            x_desc: "cycles".to_string(),
            categories: premiums.iter().map(|d| d.name.clone()).collect(),
            series: vec![Series::plain(
                "cycles",
                Swatch::Green,
                premiums.iter().map(|d| Some(d.value)),
            )],
        };
        let callout: Vec<String> = self
            .report
            .derived
            .iter()
            .map(|d| {
                format!(
                    "{}: {} ({})",
                    d.name,
                    derived_value(d.value, &d.unit),
                    d.formula
                )
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
        vec![
            Chart {
                title: "Cost per operation".to_string(),
                caption: "Median cycles per loop iteration for every measured scenario; whiskers span the \
                          fastest and slowest repeat."
                    .to_string(),
                svg: hbars(&medians),
                callout: Vec::new(),
            },
            Chart {
                title: "Net cost".to_string(),
                caption: "What each operation costs beyond the empty loop (noop) of the same VMM.".to_string(),
                svg: if with_net.is_empty() {
                    Err("no noop baseline was measured".to_string())
                } else {
                    hbars(&net)
                },
                callout: Vec::new(),
            },
            Chart {
                title: "The user-exit premium".to_string(),
                caption: "How much more a PIO write costs when completed in user space than by an in-kernel \
                          ioeventfd, the part of that premium raw KVM imposes (answered in the run loop before \
                          dispatch), and what trapline's dispatch adds."
                    .to_string(),
                svg: premium_svg,
                callout,
            },
        ]
    }
}
