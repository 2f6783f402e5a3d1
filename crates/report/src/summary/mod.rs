//! The default terminal output of `trapline bench`: one screen, at most
//! [`MAX_WIDTH`] columns and never wider than the width it is given.
//!
//! A header (what ran, the host, the nested caveat, whether every check
//! passed, every failure in full), trapline's own scenarios grouped by
//! path (net cycles with their spread, time and exits per iteration), the
//! headline values against their goals ([`crate::derive::goals`]), what was not measured
//! and why, and where the full report is. Everything else (gross medians,
//! min/max, the floor ladder's rows and pieces, formulas, every check text)
//! is in `--verbose`, `--view vmm` and the report files. Pure: it reads the
//! report only, so it is tested without KVM.

pub(crate) mod layout;

use std::collections::BTreeMap;

use crate::derive::goals::goal_checks;
use crate::derive::{ladder, names};
use crate::fmt;
use crate::fmt::compact_cycles;
use crate::model::{cycles_to_ns, Report, ScenarioResult, Status, BASELINE_SCENARIO, TRAPLINE_VMM};
use crate::render::grid::Align;
use layout::{hard_wrap, unbreak, width_of, wrap, Column, Keep, Line, Table, NO_BREAK};
use trapline_bus::ExitKind;

/// The widest the summary gets, even on a wider terminal.
pub const MAX_WIDTH: usize = 100;

/// The narrowest width the summary lays itself out for (a narrower
/// terminal gets lines cut at its width).
const MIN_WIDTH: usize = 20;

/// The nested-virtualization caveat, short (the report's own note, in
/// full, is in `--verbose` and the files).
const NESTED_CAVEAT: &str = "nested virtualization (this host is itself a VM): every exit also \
goes through the outer hypervisor, so absolute cycles are far above bare metal; compare ratios \
within one run.";

/// The emulated-host caveat, short (an arm64 host on QEMU's `max` CPU).
const EMULATED_CAVEAT: &str = "emulated host (the CPU is QEMU's, under TCG): the times say \
nothing about hardware; only behaviour holds (checks, exits by kind, which paths stay in the \
kernel).";

/// How to lay the summary out.
#[derive(Clone, Debug)]
pub struct SummaryOptions {
    /// The terminal's width in columns (the summary uses at most
    /// [`MAX_WIDTH`] of it).
    pub width: usize,
    /// Files holding the full report, named at the end (none: the summary
    /// says how to get it).
    pub files: Vec<String>,
}

/// The summary of `report`, every line at most `options.width` columns.
pub fn summary(report: &Report, options: &SummaryOptions) -> String {
    let width = layout_width(options.width);
    let mut out = header_lines(report, width);
    out.push(String::new());
    out.extend(scenario_lines(report, width));
    let noise = noise_lines(report, width);
    if !noise.is_empty() {
        out.push(String::new());
        out.extend(noise);
    }
    let goals = goal_lines(report, width);
    if !goals.is_empty() {
        out.push(String::new());
        out.extend(goals);
    }
    let missing = not_measured_lines(report, width);
    if !missing.is_empty() {
        out.push(String::new());
        out.extend(missing);
    }
    out.push(String::new());
    out.extend(footer_lines(&options.files, width));
    finish(out, options.width)
}

/// The summary's header alone (`--verbose` prints it above the full
/// table).
pub fn summary_header(report: &Report, width: usize) -> String {
    finish(header_lines(report, layout_width(width)), width)
}

fn layout_width(width: usize) -> usize {
    width.clamp(MIN_WIDTH, MAX_WIDTH)
}

/// Lines joined, each cut at `width` as a last resort (the layout keeps
/// them within it already, down to [`MIN_WIDTH`]).
fn finish(lines: Vec<String>, width: usize) -> String {
    let mut out = String::new();
    for line in lines {
        for piece in hard_wrap(&unbreak(&line), width.max(1)) {
            out.push_str(&piece);
            out.push('\n');
        }
    }
    out
}

/// Who ran how many scenarios: trapline, the floor ladder's raw VMs,
/// trapline without the profile, peers.
fn run_counts(report: &Report) -> String {
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for s in &report.scenarios {
        let kind = if s.vmm == TRAPLINE_VMM {
            "on trapline".to_string()
        } else if ladder::rung(&s.vmm).is_some() {
            "on the floor ladder".to_string()
        } else if s.vmm == names::UNPROFILED_VMM {
            "without --stat".to_string()
        } else {
            format!("on {}", s.vmm)
        };
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    let parts: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    format!(
        "trapline bench: {} scenarios ({}) in {:.0} s",
        report.scenarios.len(),
        parts.join(", "),
        report.wall_seconds
    )
}

/// The host in one short sentence.
fn host_text(report: &Report) -> String {
    let h = &report.host;
    let mut parts = vec![if h.cpu_model.is_empty() {
        "unknown CPU".to_string()
    } else {
        h.cpu_model.clone()
    }];
    if !h.kernel.is_empty() {
        parts.push(format!("Linux {}", h.kernel));
    }
    parts.push(format!("{} CPUs", h.nproc));
    if h.tsc_khz > 0 {
        parts.push(h.clock_text());
    }
    parts.push(format!("load {:.2}", h.load_avg[0]));
    // Nested or not: the caveat below says so.
    parts.join(", ")
}

fn header_lines(report: &Report, width: usize) -> Vec<String> {
    let mut out = wrap(&run_counts(report), width, "", "  ");
    out.extend(wrap(&host_text(report), width, "host: ", "      "));
    if let Some(peer) = crate::describe::peer_line(report) {
        out.extend(wrap(&peer, width, "peer: ", "      "));
    }
    if report.host.nested_note.is_some() {
        let caveat = if report.host.emulated {
            EMULATED_CAVEAT
        } else {
            NESTED_CAVEAT
        };
        out.extend(wrap(caveat, width, "caveat: ", "        "));
    }
    if let Some(p) = &report.partial {
        out.extend(wrap(&p.note(), width, "", "  "));
    }
    let checked: Vec<&ScenarioResult> = report
        .scenarios
        .iter()
        .filter(|s| s.status != Status::Unsupported)
        .collect();
    let failed: Vec<&&ScenarioResult> = checked
        .iter()
        .filter(|s| s.status == Status::Failed)
        .collect();
    let unsupported = report.scenarios.len() - checked.len();
    let unsupported_text = match unsupported {
        0 => String::new(),
        1 => "; 1 scenario unsupported on this host (listed last)".to_string(),
        n => format!("; {n} scenarios unsupported on this host (listed last)"),
    };
    if failed.is_empty() {
        out.extend(wrap(
            &format!("all {} passed{unsupported_text}", checked.len()),
            width,
            "checks: ",
            "        ",
        ));
    } else {
        out.extend(wrap(
            &format!(
                "{} of {} FAILED{unsupported_text}:",
                failed.len(),
                checked.len()
            ),
            width,
            "checks: ",
            "        ",
        ));
        for s in failed {
            let reason = s.reason.as_deref().unwrap_or("no reason given");
            out.extend(wrap(
                &format!("{}: {reason}", s.key()),
                width,
                "  FAILED ",
                "    ",
            ));
        }
    }
    out
}

/// Exits that reached trapline per iteration, by kind: `1 pio-write`,
/// `1 pio-read + 1 pio-write`, `0` for none (counts of things inside an
/// exit, such as coalesced ring entries, are not exits).
fn exits_text(s: &ScenarioResult) -> String {
    let parts: Vec<String> = s
        .exits_per_iter
        .iter()
        .filter(|(k, v)| **v != 0.0 && ExitKind::from_name(k).is_none_or(ExitKind::is_exit))
        .map(|(k, v)| {
            let count = if (v - v.round()).abs() < 0.005 {
                format!("{v:.0}")
            } else {
                fmt::significant(*v)
            };
            format!("{count}{NO_BREAK}{k}")
        })
        .collect();
    if parts.is_empty() {
        "0".to_string()
    } else {
        parts.join(" + ")
    }
}

/// A time in the unit that keeps it short: `998 ns`, `9.68 us`, `5.64 ms`
/// (ASCII, as the report writes microseconds).
fn time_text(ns: f64) -> String {
    let a = ns.abs();
    let (v, unit) = if a < 1e3 {
        (ns, "ns")
    } else if a < 1e6 {
        (ns / 1e3, "us")
    } else if a < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if unit == "ns" || v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// trapline's measured scenarios but the baseline (whose net cost is zero
/// by definition: the caption gives its cycles), by group in the order
/// groups first appear (the catalog's order).
fn grouped(report: &Report) -> Vec<(&str, Vec<&ScenarioResult>)> {
    let mut groups: Vec<(&str, Vec<&ScenarioResult>)> = Vec::new();
    for s in report
        .scenarios
        .iter()
        .filter(|s| s.vmm == TRAPLINE_VMM && s.is_measured() && s.name != BASELINE_SCENARIO)
    {
        match groups.iter_mut().find(|(g, _)| *g == s.group) {
            Some((_, v)) => v.push(s),
            None => groups.push((&s.group, vec![s])),
        }
    }
    groups
}

/// One scenario's cells: name, cycles (net, or as timed in the guest with
/// a `*`), spread, time, exits.
fn scenario_cells(report: &Report, s: &ScenarioResult) -> Vec<String> {
    let (cycles, spread, mark) = match (&s.net, &s.stats) {
        (Some(n), _) => (n.median, n.mad, ""),
        (None, Some(st)) => (st.median, st.mad, "*"),
        (None, None) => (f64::NAN, f64::NAN, ""),
    };
    vec![
        s.name.clone(),
        format!("{}{mark}", compact_cycles(cycles)),
        compact_cycles(spread),
        cycles_to_ns(cycles, report.host.tsc_khz).map_or_else(|| "-".to_string(), time_text),
        exits_text(s),
    ]
}

/// The scenario table: a group column when it fits, group headings when
/// it does not, a list when not even that fits.
fn scenario_lines(report: &Report, width: usize) -> Vec<String> {
    let groups = grouped(report);
    if groups.is_empty() {
        return wrap(
            "No scenario of trapline's was measured in this run.",
            width,
            "",
            "",
        );
    }
    let mut caption = "trapline's scenarios".to_string();
    match report.baseline_median(TRAPLINE_VMM) {
        Some(base) => {
            let time = cycles_to_ns(base, report.host.tsc_khz)
                .map_or_else(String::new, |ns| format!(", {}", time_text(ns)));
            caption.push_str(&format!(
                ", net of the empty loop ({BASELINE_SCENARIO}: {} cyc{time})",
                fmt::cycles(base)
            ));
        }
        None => caption.push_str(" (no noop baseline: gross cycles)"),
    }
    if groups.iter().flat_map(|(_, v)| v).any(|s| s.net.is_none()) {
        caption.push_str("; * timed in the guest");
    }
    caption.push(':');
    let mut out = wrap(&caption, width, "", "  ");
    let columns = |with_group: bool| {
        let mut c = Vec::new();
        if with_group {
            c.push(Column::new("group", Align::Left, Keep::Always));
        }
        c.extend([
            Column::new("scenario", Align::Left, Keep::Always),
            Column::new("net cyc", Align::Right, Keep::Always),
            Column::new("MAD", Align::Right, Keep::Drop(2)),
            Column::new("time", Align::Right, Keep::Drop(1)),
            Column::new("exits/iter", Align::Left, Keep::Always),
        ]);
        c
    };
    let mut with_group = Table {
        columns: columns(true),
        lines: Vec::new(),
    };
    let mut with_headings = Table {
        columns: columns(false),
        lines: Vec::new(),
    };
    for (group, rows) in &groups {
        with_headings.lines.push(Line::Heading(format!("{group}:")));
        for (i, s) in rows.iter().enumerate() {
            let cells = scenario_cells(report, s);
            let mut first = vec![if i == 0 {
                group.to_string()
            } else {
                String::new()
            }];
            first.extend(cells.iter().cloned());
            with_group.lines.push(Line::Cells(first));
            with_headings.lines.push(Line::Cells(cells));
        }
    }
    let table = with_group
        .render(width)
        .or_else(|| with_headings.render(width))
        .unwrap_or_else(|| with_headings.stacked(width));
    out.extend(table);
    out
}

/// At most this many noisy scenarios are named (the rest are counted).
const NOISE_SHOWN: usize = 5;

/// Scenarios whose repeats say the host was noisy, trapline's first, and
/// what to do about it (as hyperfine warns of outliers).
fn noise_lines(report: &Report, width: usize) -> Vec<String> {
    let mut noisy: Vec<&ScenarioResult> = report
        .scenarios
        .iter()
        .filter(|s| !s.noise.is_empty())
        .collect();
    if noisy.is_empty() {
        return Vec::new();
    }
    noisy.sort_by_key(|s| s.vmm != TRAPLINE_VMM);
    let n = noisy.len();
    let shape = noisy
        .iter()
        .flat_map(|s| &s.noise)
        .any(|f| f.kind.is_shape());
    let what = if shape {
        "noisy repeats or distributions (a median may be off where its repeats are; a \
         distribution's flags say how single iterations spread)"
    } else {
        "noisy repeats (the numbers above may be off)"
    };
    let mut out = wrap(
        &format!(
            "Noise: {n} scenario{} of {} had {what}:",
            if n == 1 { "" } else { "s" },
            report.scenarios.len()
        ),
        width,
        "",
        "  ",
    );
    for s in noisy.iter().take(NOISE_SHOWN) {
        let flags: Vec<String> = s.noise.iter().map(crate::noise::NoiseFlag::text).collect();
        out.extend(wrap(
            &format!("{}: {}", s.key(), flags.join("; ")),
            width,
            "  ",
            "    ",
        ));
    }
    if n > NOISE_SHOWN {
        out.extend(wrap(
            &format!(
                "… and {} more (--verbose, the noise column)",
                n - NOISE_SHOWN
            ),
            width,
            "  ",
            "    ",
        ));
    }
    let mut kinds: Vec<crate::noise::NoiseKind> = Vec::new();
    for f in noisy.iter().flat_map(|s| &s.noise) {
        // Spread and outliers share their advice.
        let key = match f.kind {
            crate::noise::NoiseKind::Spread | crate::noise::NoiseKind::Outliers => {
                crate::noise::NoiseKind::Spread
            }
            k => k,
        };
        if !kinds.contains(&key) {
            kinds.push(key);
        }
    }
    for k in kinds {
        let what = match k {
            crate::noise::NoiseKind::Spread | crate::noise::NoiseKind::Outliers => {
                "spread or outliers"
            }
            k => k.as_str(),
        };
        out.extend(wrap(
            &format!("{what}: {}.", k.advice()),
            width,
            "  what to do, ",
            "    ",
        ));
    }
    out
}

/// The headline values against their goals.
fn goal_lines(report: &Report, width: usize) -> Vec<String> {
    let checks = goal_checks(report);
    if checks.is_empty() {
        return Vec::new();
    }
    let mut out = wrap(
        "Goals (spread: from the MADs; floor gap: over trapline-pc, a raw VM configured like \
         trapline):",
        width,
        "",
        "  ",
    );
    let table = Table {
        columns: vec![
            Column::new("measure", Align::Left, Keep::Always),
            Column::new("value", Align::Right, Keep::Always),
            Column::new("spread", Align::Right, Keep::Drop(1)),
            Column::new("at most", Align::Right, Keep::Always),
            Column::new("verdict", Align::Left, Keep::Always),
        ],
        lines: checks
            .iter()
            .map(|c| {
                Line::Cells(vec![
                    c.label.clone(),
                    c.amount.show(c.value),
                    c.range.map_or_else(String::new, |r| c.amount.range(r)),
                    c.amount.bound(c.goal),
                    c.verdict.to_string(),
                ])
            })
            .collect(),
    };
    out.extend(table.render(width).unwrap_or_else(|| table.stacked(width)));
    out
}

/// trapline's scenarios not measured, each with its reason; other VMMs'
/// unsupported rows counted (their failures are in the header).
fn not_measured_lines(report: &Report, width: usize) -> Vec<String> {
    let mut items = Vec::new();
    for s in report
        .scenarios
        .iter()
        .filter(|s| s.vmm == TRAPLINE_VMM && !s.is_measured())
    {
        let why = match s.status {
            Status::Failed => "failed its check (above)".to_string(),
            status => format!(
                "{status}: {}",
                s.reason.as_deref().unwrap_or("no reason given")
            ),
        };
        items.push(format!("{}: {why}", s.name));
    }
    let mut elsewhere: BTreeMap<&str, usize> = BTreeMap::new();
    for s in report
        .scenarios
        .iter()
        .filter(|s| s.vmm != TRAPLINE_VMM && s.status == Status::Unsupported)
    {
        *elsewhere.entry(&s.vmm).or_default() += 1;
    }
    for (vmm, n) in elsewhere {
        items.push(format!(
            "{vmm}: {n} scenario{} unsupported (reasons: --verbose)",
            if n == 1 { "" } else { "s" }
        ));
    }
    match items.as_slice() {
        [] => Vec::new(),
        [one] => wrap(one, width, "Not measured: ", "  "),
        many => {
            let mut out = vec!["Not measured:".to_string()];
            for item in many {
                out.extend(wrap(item, width, "  ", "    "));
            }
            out
        }
    }
}

fn footer_lines(files: &[String], width: usize) -> Vec<String> {
    let Some((first, others)) = files.split_first() else {
        return wrap(
            "Left out here (min/max, the floor ladder, formulas, check texts): --verbose, \
             --view vmm, --save FILE, --html FILE.",
            width,
            "",
            "  ",
        );
    };
    let lead = "Full report (and --verbose): ";
    let longest = files.iter().map(|f| width_of(f)).max().unwrap_or(0);
    if width_of(lead) + longest > width {
        // Paths are not words: each gets a line of its own.
        let mut out = vec![lead.trim_end().to_string()];
        for f in files {
            out.extend(wrap(f, width, "  ", "  "));
        }
        return out;
    }
    let indent = " ".repeat(lead.len());
    let mut out = wrap(first, width, lead, &indent);
    for f in others {
        out.extend(wrap(f, width, &indent, &indent));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sample;

    #[test]
    fn cycles_stay_within_seven_columns() {
        assert_eq!(compact_cycles(64_756.4), "64,756");
        assert_eq!(compact_cycles(42.25), "42.2");
        assert_eq!(compact_cycles(763_147.0), "763k");
        assert_eq!(compact_cycles(18_379_461.0), "18.4M");
        assert_eq!(compact_cycles(2_688_484.0), "2.69M");
        assert_eq!(compact_cycles(-460.0), "-460");
        assert_eq!(compact_cycles(f64::NAN), "-");
    }

    #[test]
    fn times_take_the_unit_that_keeps_them_short() {
        assert_eq!(time_text(667.2), "667 ns");
        assert_eq!(time_text(3_730.0), "3.73 us");
        assert_eq!(time_text(13_600.0), "13.6 us");
        assert_eq!(time_text(363_000.0), "363 us");
        assert_eq!(time_text(8_750_000.0), "8.75 ms");
        assert_eq!(time_text(-219.0), "-219 ns");
    }

    #[test]
    fn exits_count_only_exits_and_stay_whole() {
        let mut s = ScenarioResult::new("coalesced-mmio", "coalesced", "ring").with_samples(vec![
            Sample::new(100, 1000)
                .with_exits(ExitKind::CoalescedEntries, 99)
                .with_exits(ExitKind::MmioWrite, 1),
        ]);
        s.compute(0);
        assert_eq!(unbreak(&exits_text(&s)), "0.01 mmio-write");
        let mut cf8 =
            ScenarioResult::new("pci-config-read-cf8", "pci-config", "cf8").with_samples(vec![
                Sample::new(10, 1000)
                    .with_exits(ExitKind::PioWrite, 10)
                    .with_exits(ExitKind::PioRead, 10),
            ]);
        cf8.compute(0);
        assert_eq!(
            exits_text(&cf8),
            format!("1{NO_BREAK}pio-read + 1{NO_BREAK}pio-write")
        );
        let mut none = ScenarioResult::new("ram-read", "memslot", "ram")
            .with_samples(vec![Sample::new(10, 1000)]);
        none.compute(0);
        assert_eq!(exits_text(&none), "0");
    }
}
