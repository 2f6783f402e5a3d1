//! The `paper` view: our results on the rows of the KVM/ARM paper's
//! micro-architectural cycle-count table, beside its published numbers.

use serde::Serialize;

use super::common::{self, caption, Measured, SELF_TIMED};
use crate::model::{Report, Status, TRAPLINE_VMM};
use crate::render::charts::{hbars, BarValue, HBars, Series, Swatch};
use crate::render::fmt::{cycles, grouped, opt};
use crate::render::grid::{Align, Grid, Row, Section};
use crate::render::kut::KutLine;
use crate::render::{Chart, Page};

/// Where the published numbers come from.
pub const SOURCE: &str =
    "Christoffer Dall and Jason Nieh, \"KVM/ARM: The Design and Implementation \
of the Linux ARM Hypervisor\", ASPLOS 2014, Table 3 (micro-architectural cycle counts)";

/// What carries over from the paper and what does not.
pub const CAPTION: &str = "Table 3 measured bare-metal KVM on an ARM Cortex-A15 and on two 2013 \
x86 machines, so only the x86 columns share this host's architecture and none its CPU, kernel or \
VMM: compare the shape across rows (I/O User against I/O Kernel, EOI against IPI), not the cycles";

/// IPI and EOI through x2APIC MSRs: not in the paper (whose x86 numbers
/// use the xAPIC's MMIO page), reported beside it when measured.
pub const X2APIC_VARIANTS: [&str; 2] = ["ipi-x2apic", "eoi-x2apic"];

/// Published columns, in table order.
pub const PUBLISHED_COLUMNS: [&str; 4] = ["ARM", "ARM no vgic/vtimers", "x86 laptop", "x86 server"];

/// One row of the published table and the scenario we measure for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublishedRow {
    /// The paper's row name.
    pub operation: &'static str,
    /// Our name for the row (kut lines, JSON).
    pub slug: &'static str,
    /// The trapline scenario measuring it.
    pub scenario: &'static str,
    /// Cycles per [`PUBLISHED_COLUMNS`]; `None` where the paper has "–".
    pub cycles: [Option<u32>; 4],
}

/// Table 3 of Dall & Nieh, "KVM/ARM: The Design and Implementation of the
/// Linux ARM Hypervisor", ASPLOS 2014 (see [`SOURCE`]). Columns: ARM,
/// ARM without vgic/vtimers, x86 laptop, x86 server. The only copy of these
/// numbers in the code.
pub const TABLE_3: [PublishedRow; 6] = [
    PublishedRow {
        operation: "Hypercall",
        slug: "hypercall",
        scenario: "hypercall",
        cycles: [Some(4_917), Some(2_112), Some(1_263), Some(1_642)],
    },
    PublishedRow {
        operation: "Trap",
        slug: "trap",
        scenario: "cpuid",
        cycles: [Some(27), Some(27), Some(632), Some(821)],
    },
    PublishedRow {
        operation: "I/O Kernel",
        slug: "io-kernel",
        scenario: "pio-kernel-pic",
        cycles: [Some(6_248), Some(2_945), Some(2_575), Some(3_049)],
    },
    PublishedRow {
        operation: "I/O User",
        slug: "io-user",
        scenario: "pio-user-in",
        cycles: [Some(6_908), Some(3_971), Some(8_226), Some(10_356)],
    },
    PublishedRow {
        operation: "IPI",
        slug: "ipi",
        scenario: "ipi",
        cycles: [Some(10_534), None, Some(13_670), Some(16_649)],
    },
    PublishedRow {
        operation: "EOI",
        slug: "eoi",
        scenario: "eoi",
        cycles: [Some(9), None, Some(1_713), Some(2_195)],
    },
];

/// One row of the view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PaperRow {
    /// The paper's row name.
    pub operation: &'static str,
    /// Our name for the row.
    pub slug: &'static str,
    /// The scenario measuring it.
    pub scenario: &'static str,
    /// Published cycles per [`PUBLISHED_COLUMNS`].
    pub published: [Option<u32>; 4],
    /// Our cycles: net of noop where the baseline exists, else the median;
    /// always the median for scenarios timed inside the guest's handler
    /// (EOI), which have no loop to subtract.
    pub this_host: Option<f64>,
    /// `net`, `median` or `in-handler`, when `this_host` is set.
    pub basis: Option<&'static str>,
    /// `ok`, `unsupported`, `failed` or `not measured yet`.
    pub status: String,
    /// Why it is not measured.
    pub reason: Option<String>,
}

/// The whole view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PaperView {
    /// Citation for the published columns.
    pub source: &'static str,
    /// Published column names.
    pub columns: [&'static str; 4],
    /// The VMM whose scenarios fill "this host".
    pub vmm: &'static str,
    /// One per published row.
    pub rows: Vec<PaperRow>,
    /// What is comparable.
    pub caption: String,
    /// [`X2APIC_VARIANTS`] as measured (absent ones included).
    pub x2apic: Vec<Measured>,
}

impl PaperView {
    /// Maps `report`'s trapline scenarios onto [`TABLE_3`].
    pub fn build(report: &Report) -> Self {
        let rows = TABLE_3
            .iter()
            .map(|p| {
                let base = PaperRow {
                    operation: p.operation,
                    slug: p.slug,
                    scenario: p.scenario,
                    published: p.cycles,
                    this_host: None,
                    basis: None,
                    status: "not measured yet".to_string(),
                    reason: None,
                };
                match report.scenario(TRAPLINE_VMM, p.scenario) {
                    None => base,
                    Some(s) if s.is_measured() && SELF_TIMED.contains(&p.scenario) => PaperRow {
                        this_host: s.median(),
                        basis: s.median().map(|_| "in-handler"),
                        status: Status::Ok.to_string(),
                        ..base
                    },
                    Some(s) if s.is_measured() => {
                        let (value, basis) = match (&s.net, &s.stats) {
                            (Some(n), _) => (Some(n.median), "net"),
                            (None, Some(st)) => (Some(st.median), "median"),
                            (None, None) => (None, "median"),
                        };
                        PaperRow {
                            this_host: value,
                            basis: value.map(|_| basis),
                            status: Status::Ok.to_string(),
                            ..base
                        }
                    }
                    Some(s) => PaperRow {
                        status: s.status.to_string(),
                        reason: Some(
                            s.reason
                                .clone()
                                .unwrap_or_else(|| "no reason given".to_string()),
                        ),
                        ..base
                    },
                }
            })
            .collect();
        Self {
            source: SOURCE,
            columns: PUBLISHED_COLUMNS,
            vmm: TRAPLINE_VMM,
            rows,
            caption: caption(CAPTION, report.host.nested_note.is_some()),
            x2apic: X2APIC_VARIANTS
                .iter()
                .map(|n| Measured::lookup(report, TRAPLINE_VMM, n))
                .collect(),
        }
    }

    /// The row for `slug`.
    pub fn row(&self, slug: &str) -> Option<&PaperRow> {
        self.rows.iter().find(|r| r.slug == slug)
    }

    /// (measured rows, rows).
    pub fn coverage(&self) -> (usize, usize) {
        let measured = self.rows.iter().filter(|r| r.this_host.is_some());
        (measured.count(), self.rows.len())
    }
}

fn published(c: Option<u32>) -> String {
    c.map(|v| grouped(f64::from(v)))
        .unwrap_or_else(|| "–".to_string())
}

impl Page for PaperView {
    fn title(&self) -> String {
        "KVM/ARM Table 3 beside this host".to_string()
    }

    fn caption(&self) -> Option<String> {
        Some(self.caption.clone())
    }

    fn grid(&self) -> Grid {
        use Align::{Left, Right};
        let mut g = Grid::new(&[
            ("Operation", Left),
            (PUBLISHED_COLUMNS[0], Right),
            (PUBLISHED_COLUMNS[1], Right),
            (PUBLISHED_COLUMNS[2], Right),
            (PUBLISHED_COLUMNS[3], Right),
            ("this host", Right),
            ("scenario", Left),
            ("basis / status", Left),
        ]);
        for r in &self.rows {
            let mut cells = vec![r.operation.to_string()];
            cells.extend(r.published.iter().map(|c| published(*c)));
            cells.push(opt(r.this_host, cycles));
            cells.push(r.scenario.to_string());
            cells.push(match (&r.basis, &r.reason) {
                (Some("net"), _) => "net of noop".to_string(),
                (Some("in-handler"), _) => "median (timed per EOI in the handler)".to_string(),
                (Some(b), _) => format!("{b} (no noop baseline)"),
                (None, Some(reason)) => format!("{}: {reason}", r.status),
                (None, None) => r.status.clone(),
            });
            g.push(Row::cells(cells));
        }
        g
    }

    fn sections(&self) -> Vec<Section> {
        let mut items = vec![
            format!("Published columns: {SOURCE}."),
            "Trap is measured with cpuid (an unconditional exit KVM handles in the kernel); I/O Kernel \
             with an inb from an in-kernel device (pio-kernel-pic, like the paper's x86 inl); I/O User \
             with an inb completed by trapline in user space."
                .to_string(),
            "IPI is ipi: vCPU 0 sends a fixed-vector IPI through the xAPIC (like the paper's x86 \
             numbers) to vCPU 1, which spins with interrupts on, and waits until vCPU 1's handler \
             has counted it; EOI is eoi: the xAPIC EOI write, timed inside the handler, so it is \
             the median with nothing subtracted (x86 EOI is completion only, as in the paper)."
                .to_string(),
            "this host is net cycles over the noop loop where that baseline was measured, else the \
             gross median; published numbers come from different hardware and kernels, so compare \
             shapes, not digits."
                .to_string(),
        ];
        let x2apic: Vec<String> = self
            .x2apic
            .iter()
            .filter(|m| m.is_measured())
            .map(|m| {
                let (v, basis) = match m.net {
                    Some(n) => (n, "net"),
                    None => (m.median.unwrap_or_default(), "median"),
                };
                format!("{} {} ({basis})", m.scenario, cycles(v))
            })
            .collect();
        if !x2apic.is_empty() {
            items.push(format!(
                "x2APIC variants (MSR writes, no instruction decoding; not in the paper): {}.",
                x2apic.join(", ")
            ));
        }
        vec![Section {
            heading: "Notes".to_string(),
            items,
        }]
    }

    fn kut(&self) -> Vec<KutLine> {
        self.rows
            .iter()
            .map(|r| KutLine {
                name: r.slug.to_string(),
                cycles: r.this_host,
            })
            .collect()
    }

    fn json(&self) -> String {
        common::json(self)
    }

    fn charts(&self) -> Vec<Chart> {
        // Draw order: the two x86 columns first (our host is x86), then ARM.
        let published_series = [
            (2usize, Swatch::Blue),
            (3, Swatch::Orange),
            (0, Swatch::Purple),
            (1, Swatch::Grey),
        ];
        let mut series: Vec<Series> = published_series
            .iter()
            .map(|&(col, color)| Series {
                name: PUBLISHED_COLUMNS[col].to_string(),
                color,
                values: self
                    .rows
                    .iter()
                    .map(|r| r.published[col].map(|v| BarValue::plain(f64::from(v))))
                    .collect(),
            })
            .collect();
        series.push(Series {
            name: "this host".to_string(),
            color: Swatch::Red,
            values: self
                .rows
                .iter()
                .map(|r| r.this_host.map(BarValue::plain))
                .collect(),
        });
        let spec = HBars {
            title: "KVM/ARM Table 3 and this host".to_string(),
            x_desc: "cycles".to_string(),
            categories: self.rows.iter().map(|r| r.operation.to_string()).collect(),
            series,
        };
        vec![Chart {
            title: "Published cycle counts beside this host".to_string(),
            caption: format!(
                "Published: {SOURCE}. Rows without a bar for this host are not measured."
            ),
            svg: hbars(&spec),
            callout: Vec::new(),
        }]
    }
}
