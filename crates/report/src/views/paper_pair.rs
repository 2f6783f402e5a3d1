//! Table 3 as the KVM/ARM paper drew it — an ARM side and an x86 side —
//! from two saved runs of this project: one measured on x86_64, one on
//! arm64, each row's value taken exactly as `--view paper` takes it on its
//! own architecture ([`SeedView`]), beside the paper's four published
//! columns. The two runs come from different machines, clocks (TSC cycles;
//! the generic timer's ticks) and dates, so the table says which is which
//! and leads with the shape across rows, as the single-run view does.

use serde_json::{json, Value};

use super::common::host_caption;
use super::seed::{SeedId, SeedRowView, SeedTable, SeedView};
use crate::fmt::grouped;
use crate::model::Report;
use crate::render::grid::{Align, Cell, Grid};
use crate::render::{markdown, table, Format};

/// The seed view this pairs.
const PAPER: &str = "paper";

/// Why two runs cannot be put side by side, or a format the pair lacks.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PairError {
    /// Both runs were measured on the same architecture.
    #[error(
        "both runs were measured on {0}: Table 3's two sides need one x86_64 run and one \
         arm64 run (`trapline bench --save` on each host)"
    )]
    SameArch(&'static str),
    /// Only the paper's table has two sides.
    #[error("two runs side by side are shown by --view paper only (not --view {0})")]
    View(String),
    /// Formats the pair does not render.
    #[error("two runs side by side render as table, md, csv or json (not {0})")]
    Format(&'static str),
}

/// The two runs, sorted by architecture, each mapped onto Table 3.
struct Pair<'a> {
    table: &'static SeedTable,
    x86: (&'a Report, SeedView),
    arm64: (&'a Report, SeedView),
}

impl<'a> Pair<'a> {
    fn new(a: &'a Report, b: &'a Report) -> Result<Self, PairError> {
        let (x86, arm64) = match (a.host.is_arm64(), b.host.is_arm64()) {
            (false, true) => (a, b),
            (true, false) => (b, a),
            (true, true) => return Err(PairError::SameArch("arm64")),
            (false, false) => return Err(PairError::SameArch("x86_64")),
        };
        let table = SeedId::named(PAPER)
            .expect("the paper's seed table is in the list")
            .table();
        Ok(Self {
            table,
            x86: (x86, SeedView::build(x86, table)),
            arm64: (arm64, SeedView::build(arm64, table)),
        })
    }

    /// The row's value on one side: what `--view paper` shows there.
    fn value(row: &SeedRowView) -> Option<f64> {
        row.values.first().copied().flatten()
    }

    /// One side's cell: the value, else why there is none.
    fn cell(row: &SeedRowView) -> String {
        match Self::value(row) {
            Some(v) => grouped(v),
            None if row.scenario.is_none() => "no scenario".to_string(),
            None => row.this_host.status_text(),
        }
    }

    /// Who measured a side, for the notes: host, kernel, date, clock.
    fn side(report: &Report, arch: &str, clock: &str) -> String {
        let h = &report.host;
        let date = report.started_at.get(..10).unwrap_or("an unknown date");
        let cpu = if h.cpu_model.is_empty() {
            "an unnamed CPU"
        } else {
            &h.cpu_model
        };
        host_caption(
            &format!("{arch}: {cpu}, Linux {}, {date}, in {clock}", h.kernel),
            h,
        )
    }

    fn notes(&self) -> Vec<String> {
        vec![
            format!("Published: {}.", self.table.source),
            Self::side(self.x86.0, "This project's x86 column", "TSC cycles"),
            Self::side(
                self.arm64.0,
                "This project's arm64 column",
                "CNTVCT_EL0 ticks (not CPU cycles)",
            ),
            "Each side is what `--view paper` shows on its own architecture (net of noop where \
             measured, EOI timed in its handler); the two columns come from different machines \
             and clocks: compare the shape down each column (I/O User against I/O Kernel, EOI \
             against IPI), not the counts across them."
                .to_string(),
        ]
    }

    fn grid(&self) -> Grid {
        let mut columns: Vec<(&str, Align)> = vec![("Operation", Align::Left)];
        columns.extend(
            self.table
                .published
                .iter()
                .map(|(f, _)| (f.title.as_str(), Align::Right)),
        );
        columns.push(("trapline x86 (cycles)", Align::Right));
        columns.push(("trapline arm64 (ticks)", Align::Right));
        let mut g = Grid::new(&columns);
        for ((row, x), a) in self
            .table
            .rows
            .iter()
            .zip(&self.x86.1.rows)
            .zip(&self.arm64.1.rows)
        {
            let mut cells = vec![Cell::text(row.label.clone())];
            cells.extend(
                row.published
                    .iter()
                    .map(|v| Cell::text(v.map_or_else(|| "–".to_string(), grouped))),
            );
            cells.push(Cell::text(Self::cell(x)));
            cells.push(Cell::text(Self::cell(a)));
            g.push_cells(cells);
        }
        g
    }

    fn text(&self, format: Format) -> String {
        let heading =
            "KVM/ARM Table 3 as the paper drew it, with this project's x86 and arm64 runs";
        let notes = self.notes();
        match format {
            Format::Markdown => {
                let mut s = format!("## {heading}\n\n{}\n", markdown::grid(&self.grid()));
                for n in notes {
                    s.push_str(&format!("\n- {n}"));
                }
                s.push('\n');
                s
            }
            _ => {
                let mut s = format!("{heading}\n\n{}\n", table::grid(&self.grid()));
                for n in notes {
                    s.push_str(&format!("\n* {n}"));
                }
                s.push('\n');
                s
            }
        }
    }

    fn csv(&self) -> String {
        let mut head = vec!["operation".to_string()];
        head.extend(self.table.published.iter().map(|(f, _)| f.csv.clone()));
        head.extend(
            [
                "x86_scenario",
                "trapline_x86_cycles",
                "arm64_scenario",
                "trapline_arm64_ticks",
            ]
            .map(String::from),
        );
        let mut s = head.join(",") + "\n";
        for ((row, x), a) in self
            .table
            .rows
            .iter()
            .zip(&self.x86.1.rows)
            .zip(&self.arm64.1.rows)
        {
            let mut cells = vec![row.label.clone()];
            cells.extend(
                row.published
                    .iter()
                    .map(|v| v.map(|v| v.to_string()).unwrap_or_default()),
            );
            for side in [x, a] {
                cells.push(side.scenario.unwrap_or_default().to_string());
                cells.push(
                    Self::value(side)
                        .map(|v| format!("{v:.0}"))
                        .unwrap_or_default(),
                );
            }
            s.push_str(&cells.join(","));
            s.push('\n');
        }
        s
    }

    fn json(&self) -> Value {
        let side = |report: &Report, row: &SeedRowView, unit: &str| {
            json!({
                "scenario": row.scenario,
                "value": Self::value(row),
                "unit": unit,
                "status": row.this_host.status,
                "host": report.host.cpu_model,
            })
        };
        let rows: Vec<Value> = self
            .table
            .rows
            .iter()
            .zip(&self.x86.1.rows)
            .zip(&self.arm64.1.rows)
            .map(|((row, x), a)| {
                let published: serde_json::Map<String, Value> = self
                    .table
                    .published
                    .iter()
                    .zip(&row.published)
                    .map(|((f, _), v)| (f.key.clone(), json!(v)))
                    .collect();
                json!({
                    "operation": row.label,
                    "published": published,
                    "x86": side(self.x86.0, x, "cycles"),
                    "arm64": side(self.arm64.0, a, "ticks"),
                })
            })
            .collect();
        json!({
            "view": "paper",
            "source": self.table.source,
            "rows": rows,
            "notes": self.notes(),
        })
    }
}

/// Table 3 with this project's x86 run and arm64 run beside the paper's
/// four columns, in `format`. `a` and `b` are the two saved runs, in
/// either order.
pub fn render_pair(a: &Report, b: &Report, format: Format) -> Result<String, PairError> {
    let pair = Pair::new(a, b)?;
    match format {
        Format::Table | Format::Markdown => Ok(pair.text(format)),
        Format::Csv => Ok(pair.csv()),
        Format::Json => Ok(serde_json::to_string_pretty(&pair.json()).unwrap_or_default() + "\n"),
        other => Err(PairError::Format(other.name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostInfo, Sample, ScenarioResult, ToolInfo, ARCH_ARM64};

    /// A finished report on `arch` whose scenarios all took `cycles`.
    fn run(arm64: bool, scenarios: &[(&str, f64)]) -> Report {
        let host = HostInfo {
            cpu_model: if arm64 { "arm64 CPU" } else { "x86 CPU" }.into(),
            kernel: "6.1".into(),
            arch: arm64.then(|| ARCH_ARM64.to_string()),
            ..Default::default()
        };
        let mut r = Report::new(ToolInfo::new("trapline", "0"), host, Default::default());
        for (name, cycles) in scenarios {
            let samples = vec![Sample::new(1000, (*cycles * 1000.0) as u64); 3];
            r.push(ScenarioResult::new(*name, "group", "path").with_samples(samples));
        }
        r.finish();
        r
    }

    fn both() -> (Report, Report) {
        (
            run(false, &[("cpuid", 1000.0), ("pio-user-in", 9000.0)]),
            run(true, &[("sysreg-trap", 7.0), ("mmio-user-read", 600.0)]),
        )
    }

    #[test]
    fn each_side_takes_its_architectures_scenario_in_either_order() {
        let (x86, arm) = both();
        for (a, b) in [(&x86, &arm), (&arm, &x86)] {
            let csv = render_pair(a, b, Format::Csv).unwrap();
            let trap = csv.lines().find(|l| l.starts_with("Trap,")).unwrap();
            assert_eq!(trap, "Trap,27,27,632,821,cpuid,1000,sysreg-trap,7");
            let io = csv.lines().find(|l| l.starts_with("I/O User,")).unwrap();
            assert!(io.ends_with("pio-user-in,9000,mmio-user-read,600"), "{io}");
        }
    }

    #[test]
    fn the_table_names_both_sides_and_what_was_not_measured() {
        let (x86, arm) = both();
        let t = render_pair(&x86, &arm, Format::Table).unwrap();
        assert!(t.contains("trapline x86 (cycles)") && t.contains("trapline arm64 (ticks)"));
        assert!(t.contains("x86 column: x86 CPU") && t.contains("arm64 column: arm64 CPU"));
        let eoi = t.lines().find(|l| l.starts_with("EOI")).unwrap();
        assert!(
            eoi.contains("1,713") && eoi.contains("not measured"),
            "{eoi}"
        );
        let md = render_pair(&x86, &arm, Format::Markdown).unwrap();
        assert!(md.contains("| Operation |"), "{md}");
        let j: Value =
            serde_json::from_str(&render_pair(&x86, &arm, Format::Json).unwrap()).unwrap();
        assert_eq!(j["rows"][1]["arm64"]["scenario"], "sysreg-trap");
        assert_eq!(j["rows"][1]["published"]["x86_server"], 821.0);
    }

    #[test]
    fn two_runs_of_one_architecture_or_another_format_are_refused() {
        let (x86, arm) = both();
        assert_eq!(
            render_pair(&x86, &x86, Format::Table),
            Err(PairError::SameArch("x86_64"))
        );
        assert_eq!(
            render_pair(&arm, &arm, Format::Csv),
            Err(PairError::SameArch("arm64"))
        );
        assert_eq!(
            render_pair(&x86, &arm, Format::Html),
            Err(PairError::Format("html"))
        );
    }
}
