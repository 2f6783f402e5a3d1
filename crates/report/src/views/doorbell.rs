//! The `doorbell` view (seed 002): a guest ringing a doorbell that a host
//! thread counts, through user space or an ioeventfd, as IOPS and round
//! trip per ring beside the 2009 iosignalfd numbers.

use serde::Serialize;

use super::common::{self, caption, ratio, Finding, Measured, NOT_MEASURED};
use crate::derive::findings::{
    self,
    doorbell::{self, IOEVENTFD_MMIO, IOEVENTFD_PIO, USER_MMIO},
};
use crate::model::{Report, TRAPLINE_VMM};
use crate::render::charts::{hbars, BarValue, HBars, Series, Swatch};
use crate::render::fmt::micros;
use crate::render::grid::{Align, Cell, Grid, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::unit::Unit;

/// Where the published numbers come from.
pub const SOURCE: &str = "Gregory Haskins, iosignalfd patch series for KVM (2009), the \
\"doorbell\" test harness results in its cover letter";

/// What carries over from the seed and what does not.
pub const CAPTION: &str = "Seed 002 timed QEMU and iosignalfd (the ancestor of ioeventfd) on \
2009 hardware in wall-clock time, so its microseconds belong to that CPU and kernel: compare \
how much of the round trip skipping the userspace hop saves, and the PIO/MMIO gap, as ratios";

/// One published result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublishedRow {
    /// The seed's name for it.
    pub name: &'static str,
    /// Rings per second.
    pub iops: u32,
    /// Mean round trip per ring, µs.
    pub rtt_us: f64,
    /// Extrapolated by the author, not measured.
    pub extrapolated: bool,
}

/// Everything seed 002 publishes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seed002 {
    /// Measured, then extrapolated rows, in the seed's order.
    pub rows: [PublishedRow; 5],
    /// The seed's conclusion, verbatim.
    pub conclusion: &'static str,
}

/// The published numbers of seed 002 (`/work/shared/seeds/002_526003ae32826010.txt`,
/// "The measured results are as follows" and the extrapolation after it;
/// see [`SOURCE`]). The only copy of them in the code.
pub const SEED_002: Seed002 = Seed002 {
    rows: [
        PublishedRow {
            name: "qemu-mmio",
            iops: 110_000,
            rtt_us: 9.09,
            extrapolated: false,
        },
        PublishedRow {
            name: "iosignalfd-mmio",
            iops: 200_100,
            rtt_us: 5.00,
            extrapolated: false,
        },
        PublishedRow {
            name: "iosignalfd-pio",
            iops: 367_300,
            rtt_us: 2.72,
            extrapolated: false,
        },
        PublishedRow {
            name: "qemu-pio",
            iops: 153_139,
            rtt_us: 6.53,
            extrapolated: true,
        },
        PublishedRow {
            name: "iosignalfd-hc",
            iops: 412_585,
            rtt_us: 2.37,
            extrapolated: true,
        },
    ],
    conclusion: "we save about 4us by skipping the userspace hop",
};

impl Seed002 {
    /// The published row `name`.
    pub fn row(&self, name: &str) -> Option<&PublishedRow> {
        self.rows.iter().find(|r| r.name == name)
    }
}

/// Mechanism, the seed's row, our scenario (`None`: the lab has none).
pub const PAIRS: [(&str, &str, Option<&str>); 5] = [
    ("user-space MMIO", "qemu-mmio", Some(USER_MMIO)),
    ("ioeventfd MMIO", "iosignalfd-mmio", Some(IOEVENTFD_MMIO)),
    ("ioeventfd PIO", "iosignalfd-pio", Some(IOEVENTFD_PIO)),
    ("user-space PIO", "qemu-pio", None),
    ("paravirtual", "iosignalfd-hc", Some("doorbell-pv")),
];

/// `110000 iops, 9.09us rtt`, as the seed writes it.
pub fn iops_rtt(iops: f64, rtt_us: f64) -> String {
    format!("{iops:.0} iops, {}us rtt", micros(rtt_us))
}

/// One row of the view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DoorbellRow {
    /// How the doorbell reaches the host thread.
    pub mechanism: &'static str,
    /// The seed's row.
    pub seed_row: &'static str,
    /// Published rings per second.
    pub published_iops: u32,
    /// Published round trip, µs.
    pub published_rtt_us: f64,
    /// The seed extrapolated it.
    pub extrapolated: bool,
    /// Published rtt ÷ published user-space MMIO rtt.
    pub published_ratio: Option<f64>,
    /// Our scenario, if the lab has one.
    pub scenario: Option<&'static str>,
    /// It on this host.
    pub this_host: Measured,
    /// 1e9 ÷ ns per ring.
    pub iops: Option<f64>,
    /// ns per ring ÷ 1000.
    pub rtt_us: Option<f64>,
    /// rtt ÷ this host's user-space MMIO rtt.
    pub ratio: Option<f64>,
}

/// The whole view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DoorbellView {
    /// `doorbell`.
    pub view: &'static str,
    /// Citation.
    pub source: &'static str,
    /// What is comparable.
    pub caption: String,
    /// One per mechanism.
    pub rows: Vec<DoorbellRow>,
    /// The seed's conclusion and this host's version of it.
    pub conclusion: Vec<String>,
    /// Ratios the seed's numbers imply, for the seed and this host.
    pub findings: Vec<Finding>,
}

impl DoorbellView {
    /// Maps `report` onto [`SEED_002`].
    pub fn build(report: &Report) -> Self {
        let mut rows: Vec<DoorbellRow> = PAIRS
            .iter()
            .filter_map(|&(mechanism, seed_row, scenario)| {
                let p = SEED_002.row(seed_row)?;
                let this_host = match scenario {
                    Some(s) => Measured::lookup(report, TRAPLINE_VMM, s),
                    None => Measured {
                        reason: Some("the lab has no user-space PIO doorbell scenario".to_string()),
                        ..Measured::absent(String::new())
                    },
                };
                let ns = this_host.ns_per_iter;
                Some(DoorbellRow {
                    mechanism,
                    seed_row,
                    published_iops: p.iops,
                    published_rtt_us: p.rtt_us,
                    extrapolated: p.extrapolated,
                    published_ratio: ratio(
                        Some(p.rtt_us),
                        SEED_002.row("qemu-mmio").map(|q| q.rtt_us),
                    ),
                    scenario,
                    iops: ratio(Some(1e9), ns),
                    rtt_us: scenario.and_then(|s| findings::rtt_us(report, s)),
                    ratio: None,
                    this_host,
                })
            })
            .collect();
        let user = rtt(&rows, USER_MMIO);
        for r in &mut rows {
            r.ratio = ratio(r.rtt_us, user);
        }
        let published = |scenario: &str| {
            let (_, seed_row, _) = PAIRS.iter().find(|p| p.2 == Some(scenario))?;
            SEED_002.row(seed_row).map(|r| r.rtt_us)
        };
        let findings = findings::doorbell(&published, &|n| rtt(&rows, n));
        let saving = findings.iter().find(|f| f.name == doorbell::SAVING);
        let (saving_pub, saving) = (
            saving.and_then(|f| f.published),
            saving.and_then(|f| f.this_host),
        );
        let mut conclusion = vec![format!(
            "seed 002: \"{}\" (qemu-mmio {}us − iosignalfd-mmio {}us = {}us)",
            SEED_002.conclusion,
            micros(published(USER_MMIO).unwrap_or(f64::NAN)),
            micros(published(IOEVENTFD_MMIO).unwrap_or(f64::NAN)),
            micros(saving_pub.unwrap_or(f64::NAN)),
        )];
        conclusion.push(match (saving, user, rtt(&rows, IOEVENTFD_MMIO)) {
            (Some(s), Some(u), Some(k)) => {
                let share = ratio(Some(s), Some(u))
                    .map(|f| format!(", {:.0}% of the round trip", f * 100.0))
                    .unwrap_or_default();
                let verdict = if s > 0.0 {
                    format!(
                        "we save about {}us by skipping the userspace hop",
                        micros(s)
                    )
                } else {
                    format!(
                        "skipping the userspace hop saves nothing here ({}us)",
                        micros(s)
                    )
                };
                format!(
                    "this host: {verdict} ({USER_MMIO} {}us − {IOEVENTFD_MMIO} {}us{share})",
                    micros(u),
                    micros(k)
                )
            }
            _ => format!(
                "this host: {NOT_MEASURED} (needs {USER_MMIO} and {IOEVENTFD_MMIO} measured with a \
                 known TSC frequency)"
            ),
        });
        Self {
            view: "doorbell",
            source: SOURCE,
            caption: caption(CAPTION, report.host.nested_note.is_some()),
            rows,
            conclusion,
            findings,
        }
    }

    /// The row for seed row `seed_row`.
    pub fn row(&self, seed_row: &str) -> Option<&DoorbellRow> {
        self.rows.iter().find(|r| r.seed_row == seed_row)
    }

    /// (measured rows, rows).
    pub fn coverage(&self) -> (usize, usize) {
        let measured = self.rows.iter().filter(|r| r.this_host.is_measured());
        (measured.count(), self.rows.len())
    }

    fn status(r: &DoorbellRow) -> String {
        r.this_host.status_text()
    }
}

fn rtt(rows: &[DoorbellRow], scenario: &str) -> Option<f64> {
    rows.iter()
        .find(|r| r.scenario == Some(scenario))
        .and_then(|r| r.rtt_us)
}

impl Page for DoorbellView {
    fn title(&self) -> String {
        "Doorbells (seed 002) beside this host".to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    fn grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut t = Grid::titled(&[
            ("mechanism", "", Left),
            ("seed row", "", Left),
            ("seed (2009)", "", Right),
            ("seed ÷user-MMIO", "", Right),
            ("scenario", "", Left),
            ("this host", "", Right),
            ("÷user-MMIO", "", Right),
            ("status", "", Left),
        ]);
        for r in &self.rows {
            let mut published = iops_rtt(f64::from(r.published_iops), r.published_rtt_us);
            if r.extrapolated {
                published.push_str(" (extrapolated)");
            }
            t.push_cells(vec![
                Cell::text(r.mechanism),
                Cell::text(r.seed_row),
                Cell::Text(published),
                Cell::Num(r.published_ratio, Unit::Ratio),
                Cell::text(r.scenario.unwrap_or("–")),
                Cell::Text(match (r.iops, r.rtt_us) {
                    (Some(i), Some(u)) => iops_rtt(i, u),
                    _ => "–".to_string(),
                }),
                Cell::Num(r.ratio, Unit::Ratio),
                Cell::Text(Self::status(r)),
            ]);
        }
        t
    }

    fn csv_grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut t = Grid::titled(&[
            ("", "mechanism", Left),
            ("", "seed_row", Left),
            ("", "seed_iops", Right),
            ("", "seed_rtt_us", Right),
            ("", "seed_extrapolated", Left),
            ("", "seed_rtt_ratio_to_user_mmio", Right),
            ("", "scenario", Left),
            ("", "iops", Right),
            ("", "rtt_us", Right),
            ("", "rtt_ratio_to_user_mmio", Right),
            ("", "median_cycles", Right),
            ("", "status", Left),
        ]);
        for r in &self.rows {
            t.push_cells(vec![
                Cell::text(r.mechanism),
                Cell::text(r.seed_row),
                Cell::Num(Some(f64::from(r.published_iops)), Unit::PerSecond),
                Cell::Num(Some(r.published_rtt_us), Unit::Micros),
                Cell::text(r.extrapolated.to_string()),
                Cell::Num(r.published_ratio, Unit::Ratio),
                Cell::text(r.scenario.unwrap_or_default()),
                Cell::Num(r.iops, Unit::PerSecond),
                Cell::Num(r.rtt_us, Unit::Micros),
                Cell::Num(r.ratio, Unit::Ratio),
                Cell::Num(r.this_host.median, Unit::Cycles),
                Cell::Text(Self::status(r)),
            ]);
        }
        t
    }

    fn sections(&self) -> Vec<Section> {
        vec![
            Section {
                heading: "Conclusion".to_string(),
                items: self.conclusion.clone(),
            },
            Section {
                heading: "Ratios".to_string(),
                items: self.findings.iter().map(Finding::line).collect(),
            },
            Section {
                heading: "Notes".to_string(),
                items: vec![
                    format!("Published: {SOURCE}."),
                    "IOPS = 1e9 ÷ median ns per ring and rtt = ns per ring ÷ 1000, so both need the \
                     TSC frequency; one ring is one guest write that a host thread receives and counts."
                        .to_string(),
                    "The seed's qemu-pio and iosignalfd-hc rows are its author's extrapolations. \
                     doorbell-pv writes the doorbell's identity to trapline's PV port (a PIO datamatch \
                     ioeventfd), not a hypercall, and the lab has no user-space PIO doorbell."
                        .to_string(),
                ],
            },
        ]
    }

    fn kut(&self) -> Vec<KutLine> {
        self.rows
            .iter()
            .filter_map(|r| {
                Some(KutLine {
                    name: r.scenario?.to_string(),
                    cycles: r.this_host.median,
                })
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        let spec = HBars {
            title: "Round trip per ring".to_string(),
            x_desc: "microseconds per ring".to_string(),
            categories: self.rows.iter().map(|r| r.mechanism.to_string()).collect(),
            series: vec![
                Series {
                    name: "seed 002 (2009)".to_string(),
                    color: Swatch::Blue,
                    values: self
                        .rows
                        .iter()
                        .map(|r| Some(BarValue::plain(r.published_rtt_us)))
                        .collect(),
                },
                Series {
                    name: "this host".to_string(),
                    color: Swatch::Red,
                    values: self
                        .rows
                        .iter()
                        .map(|r| r.rtt_us.map(BarValue::plain))
                        .collect(),
                },
            ],
        };
        vec![Chart {
            title: "Doorbell round trips".to_string(),
            caption: format!(
                "Published: {SOURCE} (qemu-pio and iosignalfd-hc extrapolated). Missing bars are not measured."
            ),
            svg: hbars(&spec),
            callout: self.conclusion.clone(),
        }]
    }
}
