//! The `pci-config` view (seed 004): PCI config reads through CF8/CFC,
//! ECAM, and ECAM mapped read-only, as cycles per read and seconds per
//! 100,000 reads beside VMware's published times.

use serde::Serialize;

use super::common::{self, caption, ratio, Finding, Measured};
use crate::derive::findings::{
    self,
    pci_config::{READS as READ, SCANS as SCAN},
};
use crate::model::{Derived, Report, TRAPLINE_VMM};
use crate::render::charts::{hbars, BarValue, HBars, Series, Swatch};
use crate::render::fmt::derived_value;
use crate::render::grid::{Align, Cell, Grid, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};
use crate::unit::Unit;

/// Where the published numbers come from.
pub const SOURCE: &str = "Ajay Kaher, \"[PATCH v2] x86/PCI: Prefer MMIO over PIO on VMware \
hypervisor\", September 2022 (as quoted in Wei Liu's reply on xen-devel): 100,000 \
raw_pci_read() calls in a VMware guest";

/// What carries over from the seed and what does not.
pub const CAPTION: &str = "Seed 004 timed Linux's raw_pci_read() in a VMware guest, not KVM, \
in seconds per 100,000 reads including the kernel's own config-access code, so the seconds do \
not carry over: compare the CF8 : ECAM : read-only-ECAM ratios";

/// Reads the published times are for.
pub const READS: f64 = 100_000.0;

/// Config reads one scan makes (bus 0: 32 devices × 8 functions).
pub const READS_PER_SCAN: u32 = 256;

/// Everything seed 004 publishes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seed004 {
    /// Seconds for 100,000 reads through CF8/CFC port I/O.
    pub pio_s: f64,
    /// Seconds for 100,000 reads through ECAM MMIO (trapped).
    pub mmio_s: f64,
    /// Seconds for 100,000 reads through ECAM mapped read-only in the EPT/NPT.
    pub mmio_ro_s: f64,
    /// The whole PCI scan and initialization before the change, ms.
    pub scan_before_ms: f64,
    /// … and after it, ms.
    pub scan_after_ms: f64,
}

/// The published numbers of seed 004 (`/work/shared/seeds/004_3b34b38919d8d52b.txt`;
/// see [`SOURCE`]). The only copy of them in the code.
pub const SEED_004: Seed004 = Seed004 {
    pio_s: 12.809,
    mmio_s: 8.517,
    mmio_ro_s: 0.010,
    scan_before_ms: 55.0,
    scan_after_ms: 18.0,
};

/// The config-access mechanism of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// CF8/CFC port I/O: two exits per read.
    Cf8,
    /// ECAM MMIO, trapped: one exit per read.
    Ecam,
    /// ECAM mapped read-only: no exit.
    EcamRo,
}

impl Mechanism {
    /// The seed's name for it.
    pub fn label(self) -> &'static str {
        match self {
            Mechanism::Cf8 => "PIO (CF8/CFC)",
            Mechanism::Ecam => "MMIO (ECAM)",
            Mechanism::EcamRo => "MMIO, read-only mapped",
        }
    }

    /// Published seconds per 100,000 reads.
    pub fn published_s(self) -> f64 {
        match self {
            Mechanism::Cf8 => SEED_004.pio_s,
            Mechanism::Ecam => SEED_004.mmio_s,
            Mechanism::EcamRo => SEED_004.mmio_ro_s,
        }
    }
}

/// The rows: scenario, mechanism, config reads per iteration.
pub const ROWS: [(&str, Mechanism, u32); 6] = [
    (READ[0], Mechanism::Cf8, 1),
    (READ[1], Mechanism::Ecam, 1),
    (READ[2], Mechanism::EcamRo, 1),
    (SCAN[0], Mechanism::Cf8, READS_PER_SCAN),
    (SCAN[1], Mechanism::Ecam, READS_PER_SCAN),
    (SCAN[2], Mechanism::EcamRo, READS_PER_SCAN),
];

/// One row of the view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfigRow {
    /// Scenario name.
    pub scenario: &'static str,
    /// How it reads config space.
    pub mechanism: Mechanism,
    /// Config reads per iteration (1, or 256 for a scan).
    pub reads_per_iter: u32,
    /// The scenario on this host.
    pub this_host: Measured,
    /// Median cycles per config read.
    pub cycles_per_read: Option<f64>,
    /// Nanoseconds per config read.
    pub ns_per_read: Option<f64>,
    /// Seconds for 100,000 reads (ns per read × 1e5 / 1e9).
    pub seconds_per_100k: Option<f64>,
    /// Per-read cost ÷ the read-only ECAM row of the same kind (read or scan).
    pub ratio_to_ro: Option<f64>,
    /// The seed's seconds per 100,000 reads for this mechanism.
    pub published_seconds_per_100k: f64,
    /// The seed's ratio to its read-only time.
    pub published_ratio_to_ro: Option<f64>,
}

/// The whole view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PciConfigView {
    /// `pci-config`.
    pub view: &'static str,
    /// Citation.
    pub source: &'static str,
    /// What is comparable.
    pub caption: String,
    /// Reads, then scans.
    pub rows: Vec<ConfigRow>,
    /// PIO/MMIO, MMIO/RO, PIO/RO for the seed, this host's reads and scans.
    pub findings: Vec<Finding>,
    /// `pci-config-read-ecam-ro ÷ ram-read`, when both were measured.
    pub ecam_ro_vs_ram: Option<Derived>,
}

impl PciConfigView {
    /// Maps `report` onto [`ROWS`] and [`SEED_004`].
    pub fn build(report: &Report) -> Self {
        let mut rows: Vec<ConfigRow> = ROWS
            .iter()
            .map(|&(scenario, mechanism, reads)| {
                let m = Measured::lookup(report, TRAPLINE_VMM, scenario);
                let per = f64::from(reads);
                let ns_per_read = m.ns_per_iter.map(|ns| ns / per);
                ConfigRow {
                    scenario,
                    mechanism,
                    reads_per_iter: reads,
                    cycles_per_read: m.median.map(|c| c / per),
                    ns_per_read,
                    seconds_per_100k: ns_per_read.and_then(|ns| common::finite(ns * READS / 1e9)),
                    ratio_to_ro: None,
                    published_seconds_per_100k: mechanism.published_s(),
                    published_ratio_to_ro: ratio(
                        Some(mechanism.published_s()),
                        Some(SEED_004.mmio_ro_s),
                    ),
                    this_host: m,
                }
            })
            .collect();
        let ro: Vec<Option<f64>> = rows
            .iter()
            .map(|r| {
                rows.iter()
                    .find(|o| {
                        o.reads_per_iter == r.reads_per_iter && o.mechanism == Mechanism::EcamRo
                    })
                    .and_then(|o| o.cycles_per_read)
            })
            .collect();
        for (r, den) in rows.iter_mut().zip(ro) {
            r.ratio_to_ro = ratio(r.cycles_per_read, den);
        }
        let findings = findings(&rows);
        Self {
            view: "pci-config",
            source: SOURCE,
            caption: caption(CAPTION, report.host.nested_note.is_some()),
            ecam_ro_vs_ram: crate::derive::ecam_ro_vs_ram(report),
            rows,
            findings,
        }
    }

    /// The row for `scenario`.
    pub fn row(&self, scenario: &str) -> Option<&ConfigRow> {
        self.rows.iter().find(|r| r.scenario == scenario)
    }

    /// (measured rows, rows).
    pub fn coverage(&self) -> (usize, usize) {
        let measured = self.rows.iter().filter(|r| r.this_host.is_measured());
        (measured.count(), self.rows.len())
    }

    fn table(&self) -> Grid {
        use Align::{Left, Right};
        let mut t = Grid::titled(&[
            ("scenario", "scenario", Left),
            ("mechanism", "mechanism", Left),
            ("reads/iter", "reads_per_iter", Right),
            ("cyc/read", "cycles_per_read", Right),
            ("ns/read", "ns_per_read", Right),
            ("s/100k reads", "seconds_per_100k_reads", Right),
            ("÷ECAM-RO", "ratio_to_ecam_ro", Right),
            ("seed s/100k (VMware)", "seed_seconds_per_100k_reads", Right),
            ("seed ÷RO", "seed_ratio_to_ro", Right),
            ("status", "status", Left),
        ]);
        for r in &self.rows {
            t.push_cells(vec![
                Cell::text(r.scenario),
                Cell::text(r.mechanism.label()),
                Cell::text(r.reads_per_iter.to_string()),
                Cell::Num(r.cycles_per_read, Unit::Cycles),
                Cell::Num(r.ns_per_read, Unit::Nanos),
                Cell::Num(r.seconds_per_100k, Unit::Seconds),
                Cell::Num(r.ratio_to_ro, Unit::Ratio),
                Cell::Num(Some(r.published_seconds_per_100k), Unit::Seconds),
                Cell::Num(r.published_ratio_to_ro, Unit::Ratio),
                Cell::Text(r.this_host.status_text()),
            ]);
        }
        t
    }
}

/// The seed's conclusions: published seconds and this host's cycles per
/// read, each looked up by scenario.
fn findings(rows: &[ConfigRow]) -> Vec<Finding> {
    let row = |n: &str| rows.iter().find(|r| r.scenario == n);
    findings::pci_config(&|n| row(n).map(|r| r.published_seconds_per_100k), &|n| {
        row(n).and_then(|r| r.cycles_per_read)
    })
}

impl Page for PciConfigView {
    fn title(&self) -> String {
        "PCI config reads (seed 004) beside this host".to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    fn grid(&self) -> Grid {
        self.table()
    }

    fn sections(&self) -> Vec<Section> {
        let derived = self
            .ecam_ro_vs_ram
            .iter()
            .map(|d| {
                format!(
                    "ECAM-RO read vs RAM read: {} = {}  [{}] — {}",
                    d.name,
                    derived_value(d.value, &d.unit),
                    d.formula,
                    d.note.as_deref().unwrap_or_default()
                )
            })
            .collect();
        vec![
            Section {
                heading: "Ratios".to_string(),
                items: self.findings.iter().map(Finding::line).collect(),
            },
            Section {
                heading: "Derived".to_string(),
                items: derived,
            },
            Section {
                heading: "Notes".to_string(),
                items: vec![
                    format!("Published: {SOURCE}."),
                    format!(
                        "Seconds per 100,000 reads = ns per read × 1e5 / 1e9, from the median ns per \
                         iteration; a scan reads {READS_PER_SCAN} config dwords (bus 0, every devfn), so \
                         its per-read cost is the scan's ÷ {READS_PER_SCAN}. Ratios are per read, \
                         reads against reads and scans against scans."
                    ),
                    format!(
                        "The seed also reports the guest's whole PCI scan and initialization dropping \
                         from ~{:.0} ms to ~{:.0} ms with the read-only mapping (not a per-read figure).",
                        SEED_004.scan_before_ms, SEED_004.scan_after_ms
                    ),
                ],
            },
        ]
    }

    fn kut(&self) -> Vec<KutLine> {
        self.rows
            .iter()
            .map(|r| KutLine {
                name: r.scenario.to_string(),
                cycles: r.this_host.median,
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        let reads: Vec<&ConfigRow> = self.rows.iter().filter(|r| r.reads_per_iter == 1).collect();
        let scans: Vec<&ConfigRow> = self.rows.iter().filter(|r| r.reads_per_iter != 1).collect();
        let by_mech = |rows: &[&ConfigRow], m: Mechanism| {
            rows.iter()
                .find(|r| r.mechanism == m)
                .and_then(|r| r.seconds_per_100k)
                .map(BarValue::plain)
        };
        let mechs = [Mechanism::Cf8, Mechanism::Ecam, Mechanism::EcamRo];
        let spec = HBars {
            title: "Seconds per 100,000 config reads".to_string(),
            x_desc: "seconds per 100,000 reads".to_string(),
            categories: mechs.iter().map(|m| m.label().to_string()).collect(),
            series: vec![
                Series {
                    name: "seed 004 (VMware)".to_string(),
                    color: Swatch::Blue,
                    values: mechs
                        .iter()
                        .map(|m| Some(BarValue::plain(m.published_s())))
                        .collect(),
                },
                Series {
                    name: "this host, reads".to_string(),
                    color: Swatch::Red,
                    values: mechs.iter().map(|m| by_mech(&reads, *m)).collect(),
                },
                Series {
                    name: "this host, scans".to_string(),
                    color: Swatch::Green,
                    values: mechs.iter().map(|m| by_mech(&scans, *m)).collect(),
                },
            ],
        };
        vec![Chart {
            title: "Config read cost".to_string(),
            caption: format!(
                "Published: {SOURCE}. Scans are per read (÷ {READS_PER_SCAN}); missing bars are not measured."
            ),
            svg: hbars(&spec),
            callout: self
                .findings
                .iter()
                .filter(|f| f.name.ends_with("-reads"))
                .map(Finding::line)
                .collect(),
        }]
    }
}
