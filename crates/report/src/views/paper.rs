//! The `paper` view (seed 001): our results on the rows of the KVM/ARM
//! paper's micro-architectural cycle-count table, beside its published
//! numbers; a [`SeedTable`] without ratio columns, rendered by the generic
//! seed view.

use super::common::{Measured, SELF_TIMED};
use super::seed::{Bars, Callout, Field, Measure, Quantity, SeedChart, SeedRow, SeedTable};
use crate::fmt::cycles;
use crate::model::{Report, TRAPLINE_VMM};
use crate::render::charts::Swatch;
use crate::unit::Unit;

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

/// A published column: the paper's name for it, and ours in JSON and CSV.
const fn column(title: &'static str, key: &'static str) -> (Field, Unit) {
    (Field::new(key, title, key), Unit::Count)
}

/// A row: the paper's name, ours (kut lines), the scenario measuring it
/// and its cycles per published column (`None` where the paper has "–").
const fn row(
    operation: &'static str,
    slug: &'static str,
    scenario: &'static str,
    cycles: &'static [Option<f64>],
) -> SeedRow {
    // No ratio columns: each row is its own reference.
    SeedRow {
        slug: Some(slug),
        ..SeedRow::new(operation, scenario, cycles, operation)
    }
}

/// What the status column says of a measured row: which value "this
/// host" is. Also keeps the paper's "not measured yet".
fn basis(m: &Measured) -> Option<&'static str> {
    if !m.is_measured() {
        return (m.reason.is_none()).then_some("not measured yet");
    }
    Some(if m.net.is_some() {
        "net of noop"
    } else if SELF_TIMED.contains(&m.scenario.as_str()) {
        "median (timed per EOI in the handler)"
    } else {
        "median (no noop baseline)"
    })
}

/// The [`X2APIC_VARIANTS`] measured, as a note: not in the paper.
fn x2apic_note(report: &Report) -> Vec<String> {
    let measured: Vec<String> = X2APIC_VARIANTS
        .iter()
        .map(|n| Measured::lookup(report, TRAPLINE_VMM, n))
        .filter(Measured::is_measured)
        .map(|m| {
            let basis = if m.net.is_some() { "net" } else { "median" };
            let v = Quantity::NetElseMedian.of(&m, 1).unwrap_or_default();
            format!("{} {} ({basis})", m.scenario, cycles(v))
        })
        .collect();
    if measured.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "x2APIC variants (MSR writes, no instruction decoding; not in the paper): {}.",
        measured.join(", ")
    )]
}

/// Table 3 of Dall & Nieh, "KVM/ARM: The Design and Implementation of the
/// Linux ARM Hypervisor", ASPLOS 2014 (see [`SOURCE`]), and the scenario
/// we measure for each row. Columns: ARM, ARM without vgic/vtimers, x86
/// laptop, x86 server. The only copy of these numbers in the code.
pub const TABLE: SeedTable = SeedTable {
    view: "paper",
    title: "KVM/ARM Table 3 beside this host",
    source: SOURCE,
    caption: CAPTION,
    label: Field::new("operation", "Operation", "operation"),
    scenario_column: true,
    kut: Quantity::NetElseMedian,
    published: &[
        column("ARM", "arm"),
        column("ARM no vgic/vtimers", "arm_no_vgic_vtimers"),
        column("x86 laptop", "x86_laptop"),
        column("x86 server", "x86_server"),
    ],
    // Net of noop where the baseline exists, else the median; always the
    // median for scenarios timed inside the guest's handler (EOI), which
    // have no loop to subtract.
    measures: &[Measure::new(Field::new("cycles", "this host", "this_host_cycles"), Quantity::NetElseMedian)],
    rows: &[
        row(
            "Hypercall",
            "hypercall",
            "hypercall",
            &[Some(4_917.0), Some(2_112.0), Some(1_263.0), Some(1_642.0)],
        ),
        row(
            "Trap",
            "trap",
            "cpuid",
            &[Some(27.0), Some(27.0), Some(632.0), Some(821.0)],
        ),
        row(
            "I/O Kernel",
            "io-kernel",
            "pio-kernel-pic",
            &[Some(6_248.0), Some(2_945.0), Some(2_575.0), Some(3_049.0)],
        ),
        row(
            "I/O User",
            "io-user",
            "pio-user-in",
            &[Some(6_908.0), Some(3_971.0), Some(8_226.0), Some(10_356.0)],
        ),
        row(
            "IPI",
            "ipi",
            "ipi",
            &[Some(10_534.0), None, Some(13_670.0), Some(16_649.0)],
        ),
        row(
            "EOI",
            "eoi",
            "eoi",
            &[Some(9.0), None, Some(1_713.0), Some(2_195.0)],
        ),
    ],
    notes: &[
        "Trap is measured with cpuid (an unconditional exit KVM handles in the kernel); I/O Kernel \
         with an inb from an in-kernel device (pio-kernel-pic, like the paper's x86 inl); I/O User \
         with an inb completed by trapline in user space.",
        "IPI is ipi: vCPU 0 sends a fixed-vector IPI through the xAPIC (like the paper's x86 \
         numbers) to vCPU 1, which spins with interrupts on, and waits until vCPU 1's handler \
         has counted it; EOI is eoi: the xAPIC EOI write, timed inside the handler, so it is \
         the median with nothing subtracted (x86 EOI is completion only, as in the paper).",
        "this host is net cycles over the noop loop where that baseline was measured, else the \
         gross median; published numbers come from different hardware and kernels, so compare \
         shapes, not digits.",
    ],
    report_notes: Some(x2apic_note),
    basis: Some(basis),
    chart: SeedChart {
        heading: "Published cycle counts beside this host",
        title: "KVM/ARM Table 3 and this host",
        x_desc: "cycles",
        published: "",
        caption: "Rows without a bar for this host are not measured.",
        // The two x86 columns first (our host is x86), then ARM.
        bars: Bars::Values {
            published: &[
                (2, "x86 laptop", Swatch::Blue),
                (3, "x86 server", Swatch::Orange),
                (0, "ARM", Swatch::Purple),
                (1, "ARM no vgic/vtimers", Swatch::Grey),
            ],
            measure: 0,
        },
        callout: Callout::None,
        source_note: None,
    },
    ..SeedTable::BASE
};
