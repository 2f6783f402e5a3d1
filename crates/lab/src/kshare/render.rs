//! The kernel share in every format: a terminal table within 100 columns,
//! versioned JSON, CSV (one line per scenario and key) and markdown. Pure:
//! it reads a [`KshareReport`], so it is tested without KVM or tracefs.

use std::fmt::Write;

use serde_json::{json, Value};
use trapline_abi::Histogram;

use super::trace::KeyShare;
use super::{KshareReport, Measured, Outcome, ScenarioShare, SCHEMA};

/// What the columns mean, under each table.
const LEGEND: &str = "exit path: the exit reason and the first path event's port or address \
                      (OUT/IN port I/O, W/R MMIO, R? a read finished in user space, fastW fast \
                      MMIO); p50/p99/max: cycles from kvm_exit to the next kvm_entry for the \
                      key's exits (user: the exit went to user space, the VMM's time included); \
                      share: p50 over the probe's round trip (median cycles per iteration)";

fn q(h: &Histogram, at: f64) -> String {
    h.quantile(at).map_or_else(|| "-".into(), |v| v.to_string())
}

fn share(k: &KeyShare, round_trip: Option<f64>) -> Option<f64> {
    let p50 = k.cycles.quantile(0.5)? as f64;
    round_trip.filter(|r| *r > 0.0).map(|r| 100.0 * p50 / r)
}

fn round_trip_cell(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.0}"))
}

/// The key's path as one cell: the reason and the port or address.
fn path_cell(k: &KeyShare) -> String {
    if k.key.detail.is_empty() {
        k.key.reason.clone()
    } else {
        format!("{} {}", k.key.reason, k.key.detail)
    }
}

/// The key's path in the table's width: the path event's words shortened
/// (`OUT 0x5d0`, `W 0xd0000000`; the JSON, CSV and markdown keep them whole).
fn short_path_cell(k: &KeyShare) -> String {
    const SHORT: [(&str, &str); 6] = [
        ("pio_write ", "OUT "),
        ("pio_read ", "IN "),
        ("mmio write ", "W "),
        ("mmio read ", "R "),
        ("mmio unsatisfied-read ", "R? "),
        ("fast_mmio ", "fastW "),
    ];
    let detail = SHORT
        .iter()
        .find_map(|(long, short)| {
            k.key
                .detail
                .strip_prefix(long)
                .map(|rest| format!("{short}{rest}"))
        })
        .unwrap_or_else(|| k.key.detail.clone());
    let mut cell = format!("{} {detail}", k.key.reason).trim_end().to_string();
    cell.truncate(20);
    cell
}

/// Why a row has no keys (`None` when it has).
fn why_not(o: &Outcome) -> Option<String> {
    match o {
        Outcome::Measured(_) => None,
        Outcome::Unsupported(why) => Some(format!("unsupported: {why}")),
        Outcome::Failed(why) => Some(format!("failed: {why}")),
    }
}

/// The terminal table (each line within 100 columns; reasons wrap).
pub fn table(r: &KshareReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "The kernel's share (KVM trace points, clock {}, counter at {} kHz):",
        r.clock, r.tsc_khz
    );
    let _ = writeln!(
        s,
        "  {:<21} {:>10} {:<20} {:<6} {:>6} {:>7} {:>7} {:>8} {:>5}",
        "scenario", "round trip", "exit path", "side", "exits", "p50", "p99", "max", "share"
    );
    for sc in &r.scenarios {
        let rt = round_trip_cell(sc.round_trip);
        match &sc.outcome {
            Outcome::Measured(m) => table_keys(&mut s, sc, m, &rt),
            other => {
                let why = why_not(other).unwrap_or_default();
                let _ = writeln!(s, "  {:<21} {:>10} {}", sc.name, rt, wrap(&why, 65, 35));
            }
        }
    }
    let _ = writeln!(s, "  {}", wrap(LEGEND, 96, 2));
    s
}

fn table_keys(s: &mut String, sc: &ScenarioShare, m: &Measured, rt: &str) {
    for (i, k) in m.keys.iter().enumerate() {
        let (name, rt) = if i == 0 {
            (sc.name.as_str(), rt)
        } else {
            ("", "")
        };
        let path = short_path_cell(k);
        let _ = writeln!(
            s,
            "  {:<21} {:>10} {:<20} {:<6} {:>6} {:>7} {:>7} {:>8} {:>5}",
            name,
            rt,
            path,
            k.key.side.name(),
            k.cycles.count(),
            q(&k.cycles, 0.5),
            q(&k.cycles, 0.99),
            k.cycles.max().map_or_else(|| "-".into(), |v| v.to_string()),
            share(k, sc.round_trip).map_or_else(|| "-".into(), |p| format!("{p:.0}%")),
        );
    }
    if let Some(n) = &m.note {
        let _ = writeln!(s, "  {:<33}note: {}", "", wrap(n, 60, 41));
    }
}

/// `text` cut into lines of `width`, continuation lines indented by `indent`.
fn wrap(text: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            let _ = write!(out, "{line}\n{:indent$}", "");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out
}

fn key_json(k: &KeyShare, round_trip: Option<f64>) -> Value {
    let h = &k.cycles;
    json!({
        "reason": k.key.reason,
        "detail": k.key.detail,
        "side": k.key.side.name(),
        "count": h.count(),
        "mean": h.mean(),
        "min": h.min(),
        "p50": h.quantile(0.5),
        "p99": h.quantile(0.99),
        "max": h.max(),
        "share_of_round_trip": share(k, round_trip).map(|p| p / 100.0),
    })
}

/// The versioned JSON document.
pub fn json(r: &KshareReport) -> Value {
    let rows: Vec<Value> = r
        .scenarios
        .iter()
        .map(|sc| {
            let mut v = json!({
                "name": sc.name,
                "round_trip_cycles": sc.round_trip,
            });
            match &sc.outcome {
                Outcome::Measured(m) => {
                    v["status"] = json!("ok");
                    v["exits"] = json!(m.exits);
                    v["unpaired"] = json!(m.unpaired);
                    v["note"] = json!(m.note);
                    v["keys"] = m.keys.iter().map(|k| key_json(k, sc.round_trip)).collect();
                }
                Outcome::Unsupported(why) => {
                    v["status"] = json!("unsupported");
                    v["reason"] = json!(why);
                }
                Outcome::Failed(why) => {
                    v["status"] = json!("failed");
                    v["reason"] = json!(why);
                }
            }
            v
        })
        .collect();
    json!({
        "schema": SCHEMA,
        "clock": r.clock,
        "tsc_khz": r.tsc_khz,
        "units": "cycles from kvm_exit to the next kvm_entry",
        "scenarios": rows,
    })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// CSV: one line per scenario and key (one per scenario without keys,
/// its status and reason filled in).
pub fn csv(r: &KshareReport) -> String {
    let mut s = String::from(
        "scenario,round_trip_cycles,status,reason,exit_reason,detail,side,count,p50,p99,max\n",
    );
    for sc in &r.scenarios {
        let rt = sc.round_trip.map_or(String::new(), |v| format!("{v:.1}"));
        match &sc.outcome {
            Outcome::Measured(m) => {
                for k in &m.keys {
                    let h = &k.cycles;
                    let cell = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
                    let _ = writeln!(
                        s,
                        "{},{rt},ok,,{},{},{},{},{},{},{}",
                        csv_field(&sc.name),
                        csv_field(&k.key.reason),
                        csv_field(&k.key.detail),
                        k.key.side.name(),
                        h.count(),
                        cell(h.quantile(0.5)),
                        cell(h.quantile(0.99)),
                        cell(h.max()),
                    );
                }
            }
            Outcome::Unsupported(why) | Outcome::Failed(why) => {
                let status = if matches!(sc.outcome, Outcome::Failed(_)) {
                    "failed"
                } else {
                    "unsupported"
                };
                let _ = writeln!(
                    s,
                    "{},{rt},{status},{},,,,,,,",
                    csv_field(&sc.name),
                    csv_field(why)
                );
            }
        }
    }
    s
}

/// Markdown: one table, a row per scenario and key.
pub fn markdown(r: &KshareReport) -> String {
    let mut s = format!(
        "### The kernel's share (clock {}, {} kHz)\n\n\
         | scenario | round trip | exit path | side | exits | p50 | p99 | max | share |\n\
         |---|---:|---|---|---:|---:|---:|---:|---:|\n",
        r.clock, r.tsc_khz
    );
    for sc in &r.scenarios {
        let rt = round_trip_cell(sc.round_trip);
        match &sc.outcome {
            Outcome::Measured(m) => {
                for k in &m.keys {
                    let _ = writeln!(
                        s,
                        "| {} | {rt} | `{}` | {} | {} | {} | {} | {} | {} |",
                        sc.name,
                        path_cell(k),
                        k.key.side.name(),
                        k.cycles.count(),
                        q(&k.cycles, 0.5),
                        q(&k.cycles, 0.99),
                        k.cycles.max().map_or_else(|| "-".into(), |v| v.to_string()),
                        share(k, sc.round_trip).map_or_else(|| "-".into(), |p| format!("{p:.0}%")),
                    );
                }
            }
            other => {
                let why = why_not(other).unwrap_or_default().replace('|', "\\|");
                let _ = writeln!(s, "| {} | {rt} | {why} | | | | | | |", sc.name);
            }
        }
    }
    let _ = writeln!(s, "\n{LEGEND}.");
    s
}

#[cfg(test)]
mod tests {
    use super::super::trace::{read, Clock};
    use super::*;

    fn sample() -> KshareReport {
        let trace = read(
            include_str!("../../tests/fixtures/kvm-trace-x86.txt"),
            Clock::Cycles,
        );
        KshareReport {
            clock: "x86-tsc".into(),
            tsc_khz: 2_000_000,
            scenarios: vec![
                ScenarioShare {
                    name: "pio-kernel-wildcard".into(),
                    round_trip: Some(4000.0),
                    outcome: Outcome::Measured(Measured {
                        keys: trace.keys,
                        exits: trace.exits,
                        unpaired: trace.unpaired,
                        note: Some("3 events lost to a full trace buffer".into()),
                    }),
                },
                ScenarioShare {
                    name: "cpuid".into(),
                    round_trip: Some(1500.0),
                    outcome: Outcome::Unsupported(
                        "kvm_exit never fired for this run's vCPU threads (enabled: kvm_exit, \
                         kvm_entry, kvm_pio); this host's KVM does not emit it on its exit path"
                            .into(),
                    ),
                },
                ScenarioShare {
                    name: "pio-user-out".into(),
                    round_trip: None,
                    outcome: Outcome::Failed("the VM, a \"quote\" | pipe".into()),
                },
            ],
        }
    }

    #[test]
    fn the_table_fits_100_columns_and_gives_the_share() {
        let t = table(&sample());
        for l in t.lines() {
            assert!(l.chars().count() <= 100, "{} columns: {l}", l.len());
        }
        let first = t
            .lines()
            .find(|l| l.contains("pio-kernel-wildcard"))
            .unwrap();
        let cells: Vec<&str> = first.split_whitespace().collect();
        // scenario, round trip, reason, detail (two words), side, exits, p50, p99, max, share
        assert_eq!(
            cells[..6],
            [
                "pio-kernel-wildcard",
                "4000",
                "io",
                "OUT",
                "0x5d0",
                "kernel"
            ]
        );
        assert_eq!(cells[6], "4");
        // p50: 2200's bucket midpoint, 2191; over a 4000-cycle round trip.
        assert_eq!(cells.last(), Some(&"55%"), "{first}");
        assert!(t.contains("unsupported: kvm_exit never fired"));
        assert!(t.contains(" npf fastW 0xd0001000 "), "{t}");
        assert!(t.contains("note: 3 events lost"));
    }

    #[test]
    fn json_csv_and_markdown_carry_the_same_rows() {
        let r = sample();
        let j = json(&r);
        assert_eq!(j["schema"], SCHEMA);
        let s0 = &j["scenarios"][0];
        assert_eq!(
            (s0["status"].as_str(), s0["exits"].as_u64()),
            (Some("ok"), Some(8))
        );
        assert_eq!(s0["keys"][0]["detail"], "pio_write 0x5d0");
        assert_eq!(s0["keys"][0]["max"], 2600);
        assert_eq!(j["scenarios"][1]["status"], "unsupported");
        assert_eq!(j["scenarios"][2]["status"], "failed");
        let c = csv(&r);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 1 + 4 + 1 + 1, "{c}");
        assert!(lines[1].starts_with("pio-kernel-wildcard,4000.0,ok,,io,pio_write 0x5d0,kernel,4,"));
        assert!(c.contains("cpuid,1500.0,unsupported,"));
        assert!(c.contains("\"the VM, a \"\"quote\"\" | pipe\""), "{c}");
        let m = markdown(&r);
        assert!(m.contains("| pio-kernel-wildcard | 4000 | `io pio_write 0x5d0` | kernel | 4 |"));
        assert!(m.contains("\\| pipe"), "{m}");
    }
}
