//! The `--stat` report as terminal tables, laid out like `perf kvm stat
//! report`: every table has a header, counts come with Samples% and
//! handling time with Time%, times in microseconds beside the TSC cycles,
//! and a total row under each table of exits; beside each row's mean the
//! handling time's p50 and p99, and the time inside the KVM_RUN the exits
//! ended (mean, p50, p99, max) where the profile kept distributions. Pure:
//! it reads a [`StatReport`], so it is tested without KVM.

use std::collections::BTreeMap;
use std::fmt::Write;

use trapline_abi::Histogram;
use trapline_bus::ExitKind;

use super::{KeyRow, StatReport, VcpuStat, TABLE_KEYS};

/// The bus's clock as the headings name it.
const CLOCK: &str = trapline_bus::arch::COUNTER_UNITS;

/// How the tables of exits are ordered (`--stat-sort`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatSort {
    /// Most exits first (`perf kvm stat report`'s `--key sample`).
    #[default]
    Count,
    /// Most handling time first (`--key time`).
    Time,
}

impl StatSort {
    /// `count` or `time`.
    pub fn name(self) -> &'static str {
        match self {
            StatSort::Count => "count",
            StatSort::Time => "time",
        }
    }
}

impl std::str::FromStr for StatSort {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "count" => Ok(StatSort::Count),
            "time" => Ok(StatSort::Time),
            other => Err(format!("unknown sort {other:?}: expected count or time")),
        }
    }
}

/// How the terminal tables are laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// The order of the tables of exits.
    pub sort: StatSort,
    /// Also a table of keys for each vCPU (`--stat-vcpu`), not only the
    /// vCPUs' total.
    pub per_vcpu: bool,
}

/// One row of a table of exits: a reason's or a key's totals.
struct ExitRow {
    label: String,
    device: Option<String>,
    count: u64,
    cycles: u64,
    min: Option<u64>,
    max: Option<u64>,
    /// Handling cycles' distribution (`None`: not kept for every key in the row).
    handling: Option<Histogram>,
    /// Cycles inside KVM_RUN (`None` likewise).
    in_kvm: Option<Histogram>,
}

/// The distributions of `parts` merged, or `None` when any part lacks one
/// (a row's percentiles stand for all its exits or are not shown).
fn merged<'a>(parts: impl IntoIterator<Item = Option<&'a Histogram>>) -> Option<Histogram> {
    let mut all = Histogram::new();
    for p in parts {
        all.merge(p?);
    }
    Some(all)
}

/// A quantile's cell: `-` without a distribution.
fn q_cell(h: Option<&Histogram>, q: f64) -> String {
    h.and_then(|h| h.quantile(q))
        .map_or_else(|| "-".to_string(), |v| v.to_string())
}

impl ExitRow {
    fn of_key(k: &KeyRow) -> ExitRow {
        let st = &k.stats;
        ExitRow {
            label: st.key(),
            device: Some(if k.device.is_empty() {
                "-".to_string()
            } else {
                k.device.clone()
            }),
            count: st.count,
            cycles: st.total_cycles,
            min: Some(st.min_cycles),
            max: Some(st.max_cycles),
            handling: st.handling.clone(),
            in_kvm: st.in_kvm.clone(),
        }
    }
}

/// `rows` in `sort`'s order (ties by label, so the order is stable).
fn sorted(mut rows: Vec<ExitRow>, sort: StatSort) -> Vec<ExitRow> {
    rows.sort_by(|a, b| {
        let (ka, kb) = match sort {
            StatSort::Count => ((a.count, a.cycles), (b.count, b.cycles)),
            StatSort::Time => ((a.cycles, a.count), (b.cycles, b.count)),
        };
        kb.cmp(&ka).then_with(|| a.label.cmp(&b.label))
    });
    rows
}

/// `part` of `whole` as a percentage with two decimals.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "0.00%".to_string()
    } else {
        format!("{:.2}%", 100.0 * part as f64 / whole as f64)
    }
}

impl StatReport {
    /// Microseconds for `cycles` at the TSC frequency, two decimals; `-`
    /// when the frequency is unknown.
    fn micros(&self, cycles: f64) -> String {
        match self.tsc_khz.filter(|k| *k > 0) {
            Some(k) => format!("{:.2}", cycles * 1000.0 / f64::from(k)),
            None => "-".to_string(),
        }
    }

    /// A table of exits with a header and a total row; at most
    /// [`TABLE_KEYS`] rows, the rest summed in one line.
    fn exit_table(&self, s: &mut String, rows: Vec<ExitRow>, sort: StatSort, first: &str) {
        let with_device = rows.iter().any(|r| r.device.is_some());
        let count: u64 = rows.iter().map(|r| r.count).sum();
        let cycles: u64 = rows.iter().map(|r| r.cycles).sum();
        let head = |s: &mut String, cells: [&str; 17]| {
            let mut line = format!("  {:<22}", cells[0]);
            if with_device {
                let _ = write!(line, " {:<18}", cells[1]);
            }
            let widths = [10, 9, 8, 14, 11, 9, 9, 9, 9, 9, 11, 9, 9, 9, 11];
            for (cell, w) in cells[2..].iter().zip(widths) {
                let _ = write!(line, " {cell:>w$}");
            }
            let _ = writeln!(s, "{}", line.trim_end());
        };
        head(
            s,
            [
                first,
                "device",
                "samples",
                "samples%",
                "time%",
                "total cyc",
                "total us",
                "mean cyc",
                "mean us",
                "p50 cyc",
                "p99 cyc",
                "min cyc",
                "max cyc",
                "kvm mean",
                "kvm p50",
                "kvm p99",
                "kvm max",
            ],
        );
        let rows = sorted(rows, sort);
        let cell = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        let line = |s: &mut String, r: &ExitRow| {
            let mean = r.cycles as f64 / r.count.max(1) as f64;
            let kvm = r.in_kvm.as_ref();
            head(
                s,
                [
                    &r.label,
                    r.device.as_deref().unwrap_or(""),
                    &r.count.to_string(),
                    &percent(r.count, count),
                    &percent(r.cycles, cycles),
                    &r.cycles.to_string(),
                    &self.micros(r.cycles as f64),
                    &format!("{mean:.0}"),
                    &self.micros(mean),
                    &q_cell(r.handling.as_ref(), 0.5),
                    &q_cell(r.handling.as_ref(), 0.99),
                    &cell(r.min),
                    &cell(r.max),
                    &kvm.and_then(Histogram::mean)
                        .map_or_else(|| "-".to_string(), |m| format!("{m:.0}")),
                    &q_cell(kvm, 0.5),
                    &q_cell(kvm, 0.99),
                    &cell(kvm.and_then(Histogram::max)),
                ],
            );
        };
        for r in rows.iter().take(TABLE_KEYS) {
            line(s, r);
        }
        if rows.len() > TABLE_KEYS {
            let rest = &rows[TABLE_KEYS..];
            let _ = writeln!(
                s,
                "  … {} more keys, {} exits (the JSON has every key)",
                rest.len(),
                rest.iter().map(|r| r.count).sum::<u64>()
            );
        }
        line(
            s,
            &ExitRow {
                label: "total".to_string(),
                device: with_device.then(String::new),
                count,
                cycles,
                min: rows.iter().filter_map(|r| r.min).min(),
                max: rows.iter().filter_map(|r| r.max).max(),
                handling: merged(rows.iter().map(|r| r.handling.as_ref())),
                in_kvm: merged(rows.iter().map(|r| r.in_kvm.as_ref())),
            },
        );
    }

    /// Rows by reason (always complete: the profile counts by reason
    /// exactly, even past its key table).
    fn reason_rows(keys: &[KeyRow]) -> Vec<ExitRow> {
        let mut by_reason: BTreeMap<ExitKind, ExitRow> = BTreeMap::new();
        for k in keys {
            let st = &k.stats;
            let r = by_reason.entry(st.kind).or_insert_with(|| ExitRow {
                label: st.kind.perf_name().to_string(),
                device: None,
                count: 0,
                cycles: 0,
                min: None,
                max: None,
                handling: Some(Histogram::new()),
                in_kvm: Some(Histogram::new()),
            });
            r.count += st.count;
            r.cycles += st.total_cycles;
            r.min = Some(r.min.map_or(st.min_cycles, |m| m.min(st.min_cycles)));
            r.max = Some(r.max.map_or(st.max_cycles, |m| m.max(st.max_cycles)));
            r.handling = merged([r.handling.as_ref(), st.handling.as_ref()]);
            r.in_kvm = merged([r.in_kvm.as_ref(), st.in_kvm.as_ref()]);
        }
        by_reason.into_values().collect()
    }

    /// The terminal table, sorted by count, vCPUs' keys merged.
    pub fn table(&self) -> String {
        self.table_with(TableOptions::default())
    }

    /// The terminal tables laid out as `options` say.
    pub fn table_with(&self, options: TableOptions) -> String {
        let mut s = String::new();
        let total: u64 = self.vcpus.iter().map(VcpuStat::exits).sum();
        let _ = writeln!(
            s,
            "trapline --stat: {} vCPU(s), {:.3} s wall, {} exits reached trapline",
            self.vcpus.len(),
            self.wall.as_secs_f64(),
            total
        );
        self.kvm_tables(&mut s, total);
        let keys = self.total_keys();
        let sort = options.sort;
        let _ = writeln!(
            s,
            "\nExits that reached trapline, by reason (sorted by {}; time = {CLOCK} from \
             KVM_RUN's return to the next KVM_RUN):",
            sort.name()
        );
        self.exit_table(&mut s, Self::reason_rows(&keys), sort, "reason");
        let _ = writeln!(s, "\nExits that reached trapline, by key, all vCPUs:");
        self.exit_table(
            &mut s,
            keys.iter().map(ExitRow::of_key).collect(),
            sort,
            "key",
        );
        if options.per_vcpu {
            for (i, v) in self.vcpus.iter().enumerate() {
                let _ = writeln!(s, "\nExits that reached trapline, by key, vcpu{i}:");
                self.exit_table(
                    &mut s,
                    v.keys.iter().map(ExitRow::of_key).collect(),
                    sort,
                    "key",
                );
            }
        }
        self.time_table(&mut s);
        s
    }

    /// KVM's counters (per vCPU and total), both sides' exit counts, and
    /// the per-VM counters.
    fn kvm_tables(&self, s: &mut String, total: u64) {
        let _ = writeln!(
            s,
            "\nKVM's own counters (deltas over the run, in-kernel exits included):"
        );
        let total_kvm = self.total_kvm();
        match &total_kvm {
            None => {
                let why = self
                    .vcpus
                    .iter()
                    .find_map(|v| v.kvm.as_ref().err())
                    .cloned()
                    .unwrap_or_default();
                let _ = writeln!(s, "  unavailable: {why}");
            }
            Some(total_kvm) => {
                let mut head = format!("  {:<28}", "counter");
                if self.vcpus.len() > 1 {
                    for i in 0..self.vcpus.len() {
                        let _ = write!(head, " {:>12}", format!("vcpu{i}"));
                    }
                }
                let _ = writeln!(s, "{head} {:>12}", "total");
                for (name, t) in total_kvm {
                    let mut line = format!("  {name:<28}");
                    if self.vcpus.len() > 1 {
                        for v in &self.vcpus {
                            let d = v
                                .kvm
                                .as_ref()
                                .ok()
                                .and_then(|l| l.iter().find(|(n, _)| n == name))
                                .map_or(0, |(_, d)| *d);
                            let _ = write!(line, " {d:>12}");
                        }
                    }
                    let _ = writeln!(s, "{line} {t:>12}");
                }
            }
        }
        if let Some(kvm_exits) = total_kvm
            .as_ref()
            .and_then(|t| t.iter().find(|(n, _)| n == "exits").map(|(_, d)| *d))
        {
            let _ = writeln!(
                s,
                "\nBoth sides: KVM counted {kvm_exits} exits; {total} reached trapline ({:.1}%), \
                 {} were served inside the kernel",
                100.0 * total as f64 / kvm_exits.max(1) as f64,
                kvm_exits.saturating_sub(total)
            );
        }
        if let Ok(vm) = &self.kvm_vm {
            if !vm.is_empty() {
                let _ = writeln!(s, "\nKVM's per-VM counters (deltas):");
                let _ = writeln!(s, "  {:<28} {:>12}", "counter", "total");
                for (n, d) in vm {
                    let _ = writeln!(s, "  {n:<28} {d:>12}");
                }
            }
        }
    }

    /// Each vCPU's time in KVM_RUN and in trapline, and the total.
    fn time_table(&self, s: &mut String) {
        let _ = writeln!(s, "\nTime per vCPU ({CLOCK}; s at its frequency):");
        let secs = |c: u64| {
            self.cycles_to_secs(c)
                .map_or_else(|| "-".to_string(), |t| format!("{t:.3}"))
        };
        let line = |s: &mut String, cells: [&str; 7]| {
            let _ = writeln!(
                s,
                "  {:<6} {:>16} {:>9} {:>7} {:>16} {:>9} {:>7}",
                cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]
            );
        };
        line(
            s,
            [
                "vcpu",
                "in KVM_RUN cyc",
                "s",
                "%",
                "in trapline cyc",
                "s",
                "%",
            ],
        );
        let row = |s: &mut String, name: &str, kvm: u64, vmm: u64| {
            let all = kvm.saturating_add(vmm);
            let share = |c: u64| percent(c, all).trim_end_matches('%').to_string();
            line(
                s,
                [
                    name,
                    &kvm.to_string(),
                    &secs(kvm),
                    &share(kvm),
                    &vmm.to_string(),
                    &secs(vmm),
                    &share(vmm),
                ],
            );
        };
        for (i, v) in self.vcpus.iter().enumerate() {
            row(s, &format!("vcpu{i}"), v.in_kvm_cycles, v.in_vmm_cycles);
        }
        if self.vcpus.len() > 1 {
            let kvm = self.vcpus.iter().map(|v| v.in_kvm_cycles).sum();
            let vmm = self.vcpus.iter().map(|v| v.in_vmm_cycles).sum();
            row(s, "total", kvm, vmm);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stat::tests::report;

    /// The lines of the table under the heading that starts with `heading`,
    /// up to the next blank line.
    fn section<'a>(t: &'a str, heading: &str) -> Vec<&'a str> {
        let from = t
            .find(heading)
            .unwrap_or_else(|| panic!("{heading:?} missing:\n{t}"));
        t[from..]
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect()
    }

    fn first_cells(lines: &[&str]) -> Vec<String> {
        lines
            .iter()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn every_table_has_a_header_samples_and_time_shares_and_a_total() {
        let t = report().table();
        let reasons = section(&t, "Exits that reached trapline, by reason");
        let head: Vec<&str> = reasons[0].split_whitespace().collect();
        assert_eq!(
            head,
            [
                "reason", "samples", "samples%", "time%", "total", "cyc", "total", "us", "mean",
                "cyc", "mean", "us", "p50", "cyc", "p99", "cyc", "min", "cyc", "max", "cyc", "kvm",
                "mean", "kvm", "p50", "kvm", "p99", "kvm", "max"
            ],
            "{t}"
        );
        // Two vCPUs, each 3 OUTs of 2000 cycles, one IN of 500, one
        // write of 700; a 1 GHz TSC, so 1000 cycles are 1 us.
        let pout: Vec<&str> = reasons[1].split_whitespace().collect();
        assert_eq!(
            pout,
            [
                "POUT", "6", "60.00%", "83.33%", "12000", "12.00", "2000", "2.00", "2000", "2000",
                "2000", "2000", "3000", "3000", "3000", "3000"
            ],
            "{t}"
        );
        let total: Vec<&str> = reasons.last().unwrap().split_whitespace().collect();
        assert_eq!(
            total,
            [
                "total", "10", "100.00%", "100.00%", "14400", "14.40", "1440", "1.44", "2000",
                "2000", "500", "2000", "-", "-", "-", "-"
            ],
            "{t}"
        );
        let keys = section(&t, "Exits that reached trapline, by key, all vCPUs");
        assert!(
            keys[0].contains("device") && keys[0].contains("time%"),
            "{t}"
        );
        assert!(keys[1].contains("0xf4:POUT") && keys[1].contains("isa-debug-exit"));
        assert!(
            keys.last().unwrap().trim_start().starts_with("total"),
            "{t}"
        );
        // KVM's per-vCPU counters and the time table have headers and totals too.
        let kvm = section(&t, "KVM's own counters");
        assert_eq!(
            kvm[0].split_whitespace().collect::<Vec<_>>(),
            ["counter", "vcpu0", "vcpu1", "total"]
        );
        let time = section(&t, "Time per vCPU");
        assert!(time[0].contains("in KVM_RUN cyc") && time[0].contains("in trapline cyc"));
        assert_eq!(
            time[1].split_whitespace().collect::<Vec<_>>(),
            ["vcpu0", "9000", "0.000", "55.56", "7200", "0.000", "44.44"]
        );
        assert_eq!(
            time[3].split_whitespace().take(2).collect::<Vec<_>>(),
            ["total", "18000"]
        );
    }

    #[test]
    fn sorted_by_count_or_by_time() {
        let r = report();
        let by = |sort| {
            let t = r.table_with(TableOptions {
                sort,
                per_vcpu: false,
            });
            first_cells(&section(&t, "Exits that reached trapline, by reason"))
        };
        // W and PIN both have 2 exits; W took longer.
        assert_eq!(by(StatSort::Count), ["POUT", "W", "PIN", "total"]);
        let r2 = {
            let mut r = report();
            // One very slow IN makes PIN the most time with the fewest exits.
            for v in &mut r.vcpus {
                let pin = v.keys.iter_mut().find(|k| k.stats.key() == "0x3f8:PIN");
                pin.unwrap().stats.total_cycles = 1_000_000;
            }
            r
        };
        let t = r2.table_with(TableOptions {
            sort: StatSort::Time,
            per_vcpu: false,
        });
        assert_eq!(
            first_cells(&section(&t, "by reason")),
            ["PIN", "POUT", "W", "total"],
            "{t}"
        );
        assert!(t.contains("sorted by time"));
        assert_eq!("time".parse::<StatSort>(), Ok(StatSort::Time));
        assert!("bogus".parse::<StatSort>().is_err());
    }

    #[test]
    fn the_per_vcpu_split_on_request() {
        let r = report();
        assert!(!r.table().contains("by key, vcpu0"));
        let t = r.table_with(TableOptions {
            sort: StatSort::Count,
            per_vcpu: true,
        });
        for i in 0..2 {
            let keys = section(&t, &format!("by key, vcpu{i}:"));
            assert!(keys[0].contains("samples%"), "{t}");
            assert_eq!(
                first_cells(&keys),
                ["0xf4:POUT", "0xfe000000:W", "0x3f8:PIN", "total"]
            );
        }
    }

    #[test]
    fn without_a_tsc_frequency_times_are_dashes() {
        let mut r = report();
        r.tsc_khz = None;
        let t = r.table();
        let reasons = section(&t, "by reason");
        let pout: Vec<&str> = reasons[1].split_whitespace().collect();
        assert_eq!(pout[5], "-", "{t}");
        assert_eq!(pout[7], "-", "{t}");
    }
}
