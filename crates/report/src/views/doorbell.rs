//! The `doorbell` view (seed 002): a guest ringing a doorbell that a host
//! thread counts, through user space or an ioeventfd, as IOPS and round
//! trip per ring beside the 2009 iosignalfd numbers.

use super::common::{ratio, NOT_MEASURED};
use super::seed::{
    Bars, Callout, Field, Joined, Measure, Quantity, SeedChart, SeedRow, SeedTable, MEDIAN_NET,
};
use crate::derive::findings::{
    self,
    doorbell::{IOEVENTFD_MMIO, IOEVENTFD_PIO, SAVING, USER_MMIO},
    Finding,
};
use crate::fmt::micros;
use crate::model::Report;
use crate::render::charts::Swatch;
use crate::unit::Unit;

/// Where the published numbers come from.
pub const SOURCE: &str = "Gregory Haskins, iosignalfd patch series for KVM (2009), the \
\"doorbell\" test harness results in its cover letter";

/// What carries over from the seed and what does not.
pub const CAPTION: &str = "Seed 002 timed QEMU and iosignalfd (the ancestor of ioeventfd) on \
2009 hardware in wall-clock time, so its microseconds belong to that CPU and kernel: compare \
how much of the round trip skipping the userspace hop saves, and the PIO/MMIO gap, as ratios";

/// The seed's conclusion, verbatim.
pub const SEED_CONCLUSION: &str = "we save about 4us by skipping the userspace hop";

/// The reference row: every round trip is divided by its.
const USER: &str = "user-space MMIO";

/// `110000 iops, 9.09us rtt`, as the seed writes it.
pub fn iops_rtt(iops: f64, rtt_us: f64) -> String {
    format!("{iops:.0} iops, {}us rtt", micros(rtt_us))
}

/// A joined cell: IOPS and round trip, when both are known.
fn iops_rtt_cell(v: &[Option<f64>]) -> Option<String> {
    match v {
        [Some(iops), Some(rtt), ..] => Some(iops_rtt(*iops, *rtt)),
        _ => None,
    }
}

/// A row: the mechanism, the seed's row and its numbers (rings per
/// second, µs per ring), whether its author extrapolated them, and our
/// scenario.
const fn row(
    mechanism: &'static str,
    seed_row: &'static [(&'static str, &'static str)],
    published: &'static [Option<f64>],
    extrapolated: bool,
    scenario: &'static str,
) -> SeedRow {
    SeedRow {
        flag: extrapolated,
        texts: seed_row,
        ..SeedRow::new(mechanism, scenario, published, USER)
    }
}

/// Seed 002 and how this host maps onto it: the published numbers
/// (`/work/shared/seeds/002_526003ae32826010.txt`, "The measured results are
/// as follows" and the extrapolation after it; see [`SOURCE`]), measured,
/// then extrapolated rows, in the seed's order. The only copy of them in
/// the code.
pub const TABLE: SeedTable = SeedTable {
    view: "doorbell",
    title: "Doorbells (seed 002) beside this host",
    source: SOURCE,
    caption: CAPTION,
    label: Field::new("mechanism", "mechanism", "mechanism"),
    scenario_column: true,
    kut_scenario: true,
    texts: &[Field::new("seed_row", "seed row", "seed_row")],
    published: &[
        (
            Field::new("published_iops", "seed iops", "seed_iops"),
            Unit::PerSecond,
        ),
        (
            Field::new("published_rtt_us", "seed rtt", "seed_rtt_us"),
            Unit::Micros,
        ),
    ],
    flag: Some(Field::new(
        "extrapolated",
        "(extrapolated)",
        "seed_extrapolated",
    )),
    published_ratio: Some(Field::new(
        "published_ratio",
        "seed ÷user-MMIO",
        "seed_rtt_ratio_to_user_mmio",
    )),
    measures: &[
        Measure::new(Field::new("iops", "iops", "iops"), Quantity::PerSecond),
        Measure::new(Field::new("rtt_us", "rtt", "rtt_us"), Quantity::Micros),
        Measure {
            table: false,
            ..MEDIAN_NET[0]
        },
    ],
    compare: 1,
    ratio: Some(Field::new("ratio", "÷user-MMIO", "rtt_ratio_to_user_mmio")),
    joined: Some(Joined {
        published: "seed (2009)",
        this_host: "this host",
        format: iops_rtt_cell,
    }),
    rows: &[
        row(
            USER,
            &[("qemu-mmio", "qemu-mmio")],
            &[Some(110_000.0), Some(9.09)],
            false,
            USER_MMIO,
        ),
        row(
            "ioeventfd MMIO",
            &[("iosignalfd-mmio", "iosignalfd-mmio")],
            &[Some(200_100.0), Some(5.00)],
            false,
            IOEVENTFD_MMIO,
        ),
        row(
            "ioeventfd PIO",
            &[("iosignalfd-pio", "iosignalfd-pio")],
            &[Some(367_300.0), Some(2.72)],
            false,
            IOEVENTFD_PIO,
        ),
        SeedRow {
            missing: Some("the lab has no user-space PIO doorbell scenario"),
            ..row(
                "user-space PIO",
                &[("qemu-pio", "qemu-pio")],
                &[Some(153_139.0), Some(6.53)],
                true,
                "",
            )
        },
        row(
            "paravirtual",
            &[("iosignalfd-hc", "iosignalfd-hc")],
            &[Some(412_585.0), Some(2.37)],
            true,
            "doorbell-pv",
        ),
    ],
    findings: Some(findings),
    conclusion: Some(conclusion),
    findings_heading: "Ratios",
    notes: &[
        "IOPS = 1e9 ÷ median ns per ring and rtt = ns per ring ÷ 1000, so both need the TSC \
         frequency; one ring is one guest write that a host thread receives and counts.",
        "The seed's qemu-pio and iosignalfd-hc rows are its author's extrapolations. doorbell-pv \
         writes the doorbell's identity to trapline's PV port (a PIO datamatch ioeventfd), not a \
         hypercall, and the lab has no user-space PIO doorbell.",
    ],
    chart: SeedChart {
        heading: "Doorbell round trips",
        title: "Round trip per ring",
        x_desc: "microseconds per ring",
        published: "seed 002 (2009)",
        caption: "Missing bars are not measured.",
        bars: Bars::Values {
            published: &[(1, "seed 002 (2009)", Swatch::Blue)],
            measure: 1,
        },
        callout: Callout::Conclusion,
        source_note: Some("qemu-pio and iosignalfd-hc extrapolated"),
    },
    ..SeedTable::BASE
};

/// The published round trip of the row our `scenario` measures.
fn published_rtt(scenario: &str) -> Option<f64> {
    TABLE.published(TABLE.row_for(scenario)?.label)
}

fn findings(report: &Report) -> Vec<Finding> {
    findings::doorbell(&published_rtt, &|n| findings::rtt_us(report, n))
}

/// The seed's conclusion and this host's version of it, from the
/// round-trip saving.
fn conclusion(report: &Report, found: &[Finding]) -> Vec<String> {
    let saving = found.iter().find(|f| f.name == SAVING);
    let (saving_pub, saving) = (
        saving.and_then(|f| f.published),
        saving.and_then(|f| f.this_host),
    );
    let seed = format!(
        "seed 002: \"{SEED_CONCLUSION}\" (qemu-mmio {}us − iosignalfd-mmio {}us = {}us)",
        micros(published_rtt(USER_MMIO).unwrap_or(f64::NAN)),
        micros(published_rtt(IOEVENTFD_MMIO).unwrap_or(f64::NAN)),
        micros(saving_pub.unwrap_or(f64::NAN)),
    );
    let user = findings::rtt_us(report, USER_MMIO);
    let here = match (saving, user, findings::rtt_us(report, IOEVENTFD_MMIO)) {
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
    };
    vec![seed, here]
}
