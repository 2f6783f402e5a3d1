//! The `vmexit-arm` view (seed 000): kvm-unit-tests' ARM `vmexit` results
//! on an Arndale board, with and without the vgic, mapped to our rows.

use super::seed::{Bars, Callout, Field, SeedChart, SeedRow, SeedTable, MEDIAN_NET};
use crate::unit::Unit;

/// Where the published numbers come from.
pub const SOURCE: &str = "kvm-unit-tests arm/vmexit on an Arndale board (Exynos 5250, \
Cortex-A15), KVM/ARM with and without vgic/vtimers: the averages of its runs";

/// What carries over from the seed and what does not.
pub const CAPTION: &str = "Seed 000 is ARM (Cortex-A15, GIC with vgic) and this is an x86 host, \
so the exit mechanism, interrupt controller and cycle counter all differ and the cycles do not \
carry over: compare each test's cost relative to a hypercall";

/// A row divided by the hypercall's (`hvc`), like every row of the seed.
const fn row(
    label: &'static str,
    scenario: &'static str,
    published: &'static [Option<f64>],
) -> SeedRow {
    SeedRow::new(label, scenario, published, "hvc")
}

/// Seed 000 and how this host maps onto it. The published averages
/// (`/work/shared/seeds/000_278d9a4b2e4aa2a9.txt`, the "average:" blocks as
/// printed — the without-vgic averages are the author's and do not all
/// match the runs listed above them; see [`SOURCE`]), with vgic and
/// without; `mmio_kernel` needed a kernel patch and was run without vgic
/// only. The only copy of these numbers in the code.
pub const TABLE: SeedTable = SeedTable {
    view: "vmexit-arm",
    title: "kvm-unit-tests ARM vmexit (seed 000) beside this host",
    source: SOURCE,
    caption: CAPTION,
    label: Field::new("test", "test", "test"),
    scenario_column: true,
    published: &[
        (
            Field::new("with_vgic", "ARM vgic", "arm_vgic_cycles"),
            Unit::Cycles,
        ),
        (
            Field::new("without_vgic", "ARM no vgic", "arm_no_vgic_cycles"),
            Unit::Cycles,
        ),
    ],
    published_ratio: Some(Field::new(
        "published_ratio",
        "ARM ÷hvc",
        "arm_vgic_ratio_to_hvc",
    )),
    measures: MEDIAN_NET,
    ratio: Some(Field::new("ratio", "÷hypercall", "ratio_to_hypercall")),
    rows: &[
        row("hvc", "hypercall", &[Some(5602.0), Some(2138.0)]),
        row("noop_guest", "noop", &[Some(8.0), Some(7.0)]),
        row(
            "mmio_read_user",
            "mmio-user-read",
            &[Some(10816.0), Some(6144.0)],
        ),
        row(
            "mmio_read_vgic",
            "pio-kernel-pic",
            &[Some(6792.0), Some(6393.0)],
        ),
        row("ipi", "ipi", &[Some(14198.0), Some(258255.0)]),
        row("eoi", "eoi", &[Some(164.0), Some(15624.0)]),
        row("mmio_kernel", "mmio-kernel-wildcard", &[None, Some(7234.0)]),
    ],
    findings_heading: "Seed conclusions",
    notes: &[
        "Mapping: hvc → hypercall (vmcall/vmmcall), noop_guest → noop, mmio_read_user → \
         mmio-user-read, mmio_read_vgic → pio-kernel-pic and mmio_kernel → mmio-kernel-wildcard: \
         x86 here has no in-kernel MMIO device to read, so in-kernel MMIO is the ioeventfd \
         path (a write) and an in-kernel device read is the PIC's ELCR port (an IN).",
        "kvm-unit-tests on ARM times each operation with a counter read on either side, so \
         its numbers are gross (noop_guest is that overhead); the ratios here divide gross \
         medians by the hypercall's. eoi is timed inside the handler, so it has no net value.",
        "Without vgic, ipi and eoi go through user space and vary several-fold between runs; only \
         the with-vgic column is charted and used for ratios.",
    ],
    chart: SeedChart {
        heading: "ARM vmexit and this host",
        title: "Cost relative to a hypercall",
        x_desc: "cycles ÷ the hypercall's (hvc on ARM)",
        published: "ARM with vgic",
        caption: "Missing bars are not measured.",
        bars: Bars::Ratios,
        callout: Callout::None,
        source_note: None,
    },
    ..SeedTable::BASE
};
