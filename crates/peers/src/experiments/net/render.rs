//! `trapline net-paths`' rows in every format: a terminal table (at most
//! 100 columns), markdown, CSV and JSON, all from the same cells, and the
//! user-space hop read two ways: per doorbell (the probe's rows) and per
//! packet (exit minus ioeventfd on the same irq and back end).

use serde_json::{json, Value};

use super::{Backend, Measured, NetRow, Outcome};

/// The probe's doorbell rows beside the data path: ns per ring.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Doorbells {
    /// `doorbell-user-mmio`: the MMIO exit to trapline, whose device signals an eventfd.
    pub user_ns: f64,
    /// `doorbell-ioeventfd-mmio`: KVM signals the eventfd itself.
    pub ioeventfd_ns: f64,
}

/// A row's figures as cells: p50, p99, p99.9, max (µs), kpps, MB/s, lost,
/// reordered, bad, the data path's exits per round trip (trapline's rows).
fn cells(m: &Measured) -> [Option<f64>; 10] {
    #[allow(clippy::cast_precision_loss)]
    let q = |q: f64| m.rtt_ns.quantile(q).map(|v| v as f64 / 1e3);
    #[allow(clippy::cast_precision_loss)]
    let n = |v: u64| Some(v as f64);
    [
        q(0.5),
        q(0.99),
        q(0.999),
        q(1.0),
        Some(m.pps / 1e3),
        Some(m.bytes_per_s / 1e6),
        n(m.lost),
        n(m.reordered),
        n(m.bad),
        m.exits_per_packet.map(|e| e.card),
    ]
}

/// Decimals of [`cells`]' `i`th cell in markdown.
fn decimals(i: usize) -> usize {
    match i {
        6..=8 => 0,
        9 => 2,
        _ => 1,
    }
}

/// Column titles (people, CSV) of [`cells`].
const COLUMNS: [(&str, &str); 10] = [
    ("p50 µs", "rtt_p50_us"),
    ("p99 µs", "rtt_p99_us"),
    ("p99.9 µs", "rtt_p999_us"),
    ("max µs", "rtt_max_us"),
    ("kpps", "kpps"),
    ("MB/s", "mb_per_s"),
    ("lost", "lost"),
    ("reord", "reordered"),
    ("bad", "bad"),
    ("card exits/rt", "card_exits_per_packet"),
];

fn num(v: Option<f64>, decimals: usize) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(|| "–".into(), |v| format!("{v:.decimals$}"))
}

fn label(r: &NetRow) -> String {
    format!("{} {}", r.vmm, r.path)
}

fn why(o: &Outcome) -> Option<String> {
    match o {
        Outcome::Measured(_) => None,
        Outcome::NotAvailable(w) => Some(format!("not available: {w}")),
        Outcome::Failed(w) => Some(format!("FAILED: {}", w.lines().next().unwrap_or(""))),
    }
}

/// The heading every format shares.
pub fn heading(pairs: u64, bursts: u64, depth: u64, repeat: u32) -> String {
    format!(
        "virtio-net on each path: builtin:vnet, {pairs} UDP request/response pairs (round trip: send to the receive interrupt) and {bursts} bursts of {depth} frames in flight per run, {repeat} run(s) per row; lost, reordered and bad must be 0"
    )
}

/// The terminal table (≤ 100 columns; p99.9 is in the other formats).
pub fn table(rows: &[NetRow]) -> String {
    let mut s = format!(
        "{:<28} {:<9} {:>8} {:>8} {:>9} {:>7} {:>7} {:>4} {:>5}\n",
        "vmm path", "back end", "p50 µs", "p99 µs", "max µs", "kpps", "MB/s", "lost", "reord"
    );
    for r in rows {
        let head = format!("{:<28} {:<9}", label(r), r.backend.name());
        match &r.outcome {
            Outcome::Measured(m) => {
                let c = cells(m);
                s += &format!(
                    "{head} {:>8} {:>8} {:>9} {:>7} {:>7} {:>4} {:>5}\n",
                    num(c[0], 1),
                    num(c[1], 1),
                    num(c[3], 1),
                    num(c[4], 1),
                    num(c[5], 1),
                    num(c[6], 0),
                    num(c[7], 0)
                );
            }
            o => s += &format!("{head} {}\n", why(o).unwrap_or_default()),
        }
    }
    s += &clock_steps(rows);
    s += &per_packet(rows);
    s
}

/// A line per row whose guest saw its clock step back (its round trips
/// across a step read short), none when no clock did.
fn clock_steps(rows: &[NetRow]) -> String {
    rows.iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Measured(m) if m.clock_back > 0 => Some(format!(
                "{} {}: the guest's clock stepped back {} time(s)\n  \
                 (held at its last reading: a round trip across a step reads short)\n",
                label(r),
                r.backend.name(),
                m.clock_back
            )),
            _ => None,
        })
        .collect()
}

/// What the per-round-trip table's columns are (two lines of at most 100 columns).
const PER_PACKET_NOTE: &str = "\
card: exits to trapline at the card's data-path registers (kick, interrupt status and ack);
right of |: the whole run's exits over its round trips (console, boot and set-up included)\n";

/// trapline's rows per round trip: interrupts, doorbells, the data path's
/// exits, then the whole run's counts (both sides).
fn per_packet(rows: &[NetRow]) -> String {
    let mut s = format!(
        "\nper round trip {:<23} {:>6} {:>6} {:>6} | {:>8} {:>9} {:>9} {:>8}\n",
        "", "irqs", "rings", "card", "trapline", "KVM", "KVM MMIO", "KVM inj"
    );
    let mut any = false;
    for r in rows {
        let Outcome::Measured(m) = &r.outcome else {
            continue;
        };
        let Some(e) = m.exits_per_packet else {
            continue;
        };
        any = true;
        let w = e.whole_run;
        s += &format!(
            "{:<28} {:<9} {:>6.2} {:>6.2} {:>6.2} | {:>8.2} {:>9.2} {:>9.2} {:>8}\n",
            label(r),
            r.backend.name(),
            m.irqs_per_packet,
            m.notifies_per_packet,
            e.card,
            w.trapline,
            w.kvm,
            w.kvm_mmio,
            // arm64's KVM counts no injections (NaN): "–".
            num(Some(w.kvm_irq_injections), 2)
        );
    }
    if any {
        s + PER_PACKET_NOTE
    } else {
        String::new()
    }
}

/// The user-space hop: notify `exit` minus `ioeventfd` on the same irq and
/// back end, per packet (median round trip), beside the doorbell's.
pub fn hop(rows: &[NetRow], doorbells: Result<Doorbells, String>) -> String {
    let mut s =
        "\nthe user-space hop (notify through an exit to trapline, minus a KVM ioeventfd):\n"
            .to_string();
    // A hop below zero is a finding, not a typo: say how to read it.
    let mut negative = false;
    match doorbells {
        Ok(d) => {
            negative |= d.user_ns < d.ioeventfd_ns;
            s += &format!(
                "  a doorbell (probe, per ring): {:.2} µs - {:.2} µs = {:.2} µs\n",
                d.user_ns / 1e3,
                d.ioeventfd_ns / 1e3,
                (d.user_ns - d.ioeventfd_ns) / 1e3
            );
        }
        Err(e) => s += &format!("  a doorbell: not measured: {e}\n"),
    }
    for (irq, backend) in hop_pairs() {
        let p50 = |notify: &str| p50_us(rows, backend, &format!("{notify} + {irq}"));
        if let (Some(e), Some(k)) = (p50("exit"), p50("ioeventfd")) {
            negative |= e < k;
            s += &format!(
                "  a packet ({}, irq {irq}, median round trip): {e:.2} µs - {k:.2} µs = {:.2} µs\n",
                backend.name(),
                e - k
            );
        }
    }
    let fast = "ioeventfd + irqfd";
    if let (Some(t), Some(v)) = (
        p50_us(rows, Backend::Tap, fast),
        p50_us(rows, Backend::VhostNet, fast),
    ) {
        s += &format!(
            "  a packet, tap - vhost-net ({fast}, median): {t:.2} µs - {v:.2} µs = {:.2} µs\n",
            t - v
        );
    }
    if negative {
        s += NEGATIVE_HOP;
    }
    s
}

/// What a hop below zero means (printed under the hops when one is).
const NEGATIVE_HOP: &str = "  below zero: the ioeventfd path was the slower one in this run. It \
trades the exit for a\n  wake-up of trapline's back-end thread; where the host is busy or has few \
CPUs the wake-up\n  can cost more than the exit it saves (re-run on a quiet host before reading a \
hop)\n";

/// trapline's median round trip (µs) on `backend` and `path`, where measured.
fn p50_us(rows: &[NetRow], backend: Backend, path: &str) -> Option<f64> {
    rows.iter().find_map(|r| match &r.outcome {
        Outcome::Measured(m) if r.vmm == "trapline" && r.backend == backend && r.path == path =>
        {
            #[allow(clippy::cast_precision_loss)]
            m.rtt_ns.quantile(0.5).map(|v| v as f64 / 1e3)
        }
        _ => None,
    })
}

fn hop_pairs() -> [(&'static str, Backend); 4] {
    [
        ("line", Backend::Echo),
        ("irqfd", Backend::Echo),
        ("line", Backend::Tap),
        ("irqfd", Backend::Tap),
    ]
}

/// Markdown: every column, a note for rows without figures.
pub fn markdown(heading: &str, rows: &[NetRow]) -> String {
    let mut s = format!("{heading}\n\n| vmm | path | back end |");
    for (t, _) in COLUMNS {
        s += &format!(" {t} |");
    }
    s += "\n|---|---|---|";
    s += &"---:|".repeat(COLUMNS.len());
    s += "\n";
    for r in rows {
        s += &format!("| {} | {} | {} |", r.vmm, r.path, r.backend.name());
        match &r.outcome {
            Outcome::Measured(m) => {
                for (i, c) in cells(m).iter().enumerate() {
                    s += &format!(" {} |", num(*c, decimals(i)));
                }
            }
            o => {
                s += &format!(" {} |", why(o).unwrap_or_default().replace('|', "/"));
                s += &" |".repeat(COLUMNS.len() - 1);
            }
        }
        s += "\n";
    }
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// CSV: raw numbers, empty where there are none, the reason in `note`.
pub fn csv(rows: &[NetRow]) -> String {
    let mut s = "vmm,path,backend".to_string();
    for (_, c) in COLUMNS {
        s += &format!(",{c}");
    }
    s += ",note\n";
    for r in rows {
        s += &format!("{},{},{}", r.vmm, csv_field(&r.path), r.backend.name());
        let (values, note) = match &r.outcome {
            Outcome::Measured(m) => (cells(m).to_vec(), String::new()),
            o => (vec![None; COLUMNS.len()], why(o).unwrap_or_default()),
        };
        for v in values {
            s += &format!(
                ",{}",
                v.filter(|v| v.is_finite())
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            );
        }
        s += &format!(",{}\n", csv_field(&note));
    }
    s
}

/// JSON: every row with its figures (the histogram's non-empty buckets in ns) or its reason.
pub fn json(heading: &str, rows: &[NetRow], doorbells: Option<Doorbells>) -> Value {
    let rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut v = json!({ "vmm": r.vmm, "path": r.path, "backend": r.backend.name() });
            match &r.outcome {
                Outcome::Measured(m) => {
                    let c = cells(m);
                    for (i, (_, key)) in COLUMNS.iter().enumerate() {
                        v[*key] = json!(c[i]);
                    }
                    v["runs"] = json!(m.runs);
                    v["pairs_timed"] = json!(m.rtt_ns.count());
                    v["irqs_per_packet"] = json!(m.irqs_per_packet);
                    v["doorbells_per_packet"] = json!(m.notifies_per_packet);
                    v["clock_back"] = json!(m.clock_back);
                    if let Some(e) = m.exits_per_packet {
                        // `card`: the data path's, by key; the others: the
                        // whole run over its round trips (console included).
                        let w = e.whole_run;
                        v["exits_per_packet"] = json!({
                            "card": e.card,
                            "trapline": w.trapline, "kvm": w.kvm,
                            "kvm_mmio": w.kvm_mmio, "kvm_irq_injections": w.kvm_irq_injections,
                        });
                    }
                    v["rtt_ns_buckets"] = m
                        .rtt_ns
                        .buckets()
                        .map(|(lo, hi, n)| json!([lo, hi, n]))
                        .collect();
                }
                Outcome::NotAvailable(w) => v["not_available"] = json!(w),
                Outcome::Failed(w) => v["failed"] = json!(w),
            }
            v
        })
        .collect();
    json!({
        "experiment": "net-paths",
        "heading": heading,
        "doorbell_ns": doorbells.map(|d| json!({ "user_mmio": d.user_ns, "ioeventfd_mmio": d.ioeventfd_ns })),
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use trapline_abi::Histogram;

    use super::super::{ExitCounts, PacketExits};
    use super::*;

    fn rows() -> Vec<NetRow> {
        let mut h = Histogram::new();
        for v in [10_000, 12_000, 30_000] {
            h.record(v);
        }
        let m = Measured {
            rtt_ns: h,
            pps: 50_000.0,
            bytes_per_s: 50_000.0 * 1514.0,
            lost: 0,
            reordered: 0,
            bad: 0,
            clock_back: 0,
            irqs_per_packet: 1.0,
            notifies_per_packet: 1.0,
            exits_per_packet: Some(PacketExits {
                card: 1.92,
                whole_run: ExitCounts {
                    trapline: 33.9,
                    kvm: 122.7,
                    kvm_mmio: 3.3,
                    kvm_irq_injections: f64::NAN,
                },
            }),
            runs: 1,
        };
        let mut fast = m.clone();
        fast.exits_per_packet = None;
        fast.rtt_ns = Histogram::new();
        fast.rtt_ns.record(4_000);
        vec![
            NetRow {
                vmm: "trapline",
                path: "exit + line".into(),
                backend: Backend::Echo,
                outcome: Outcome::Measured(Box::new(m)),
            },
            NetRow {
                vmm: "trapline",
                path: "ioeventfd + line".into(),
                backend: Backend::Echo,
                outcome: Outcome::Measured(Box::new(fast)),
            },
            NetRow {
                vmm: "trapline",
                path: "exit + line".into(),
                backend: Backend::Tap,
                outcome: Outcome::NotAvailable("no CAP_NET_ADMIN, a, b".into()),
            },
        ]
    }

    #[test]
    fn table_fits_100_columns_and_says_why() {
        let t = table(&rows());
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
        assert!(t.contains("not available: no CAP_NET_ADMIN"));
        assert!(t.contains("12.0"), "{t}");
        let row = t
            .lines()
            .find(|l| l.starts_with("trapline exit + line         echo") && l.contains(" | "))
            .expect("a per-round-trip row");
        let figures: Vec<&str> = row[38..].split_whitespace().collect();
        assert_eq!(
            figures,
            ["1.00", "1.00", "1.92", "|", "33.90", "122.70", "3.30", "–"],
            "{t}"
        );
        assert!(t.contains("right of |: the whole run's exits"), "{t}");
    }

    #[test]
    fn a_clock_that_stepped_back_is_named_under_the_table() {
        let mut r = rows();
        assert!(!table(&r).contains("clock stepped back"));
        if let Outcome::Measured(m) = &mut r[0].outcome {
            m.clock_back = 1;
        }
        let t = table(&r);
        assert!(
            t.contains("exit + line echo: the guest's clock stepped back 1 time(s)\n"),
            "{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
        assert_eq!(json("h", &r, None)["rows"][0]["clock_back"], 1);
    }

    #[test]
    fn hop_is_exit_minus_ioeventfd_per_packet_and_per_ring() {
        let d = Doorbells {
            user_ns: 9000.0,
            ioeventfd_ns: 2000.0,
        };
        let h = hop(&rows(), Ok(d));
        assert!(h.contains("9.00 µs - 2.00 µs = 7.00 µs"), "{h}");
        assert!(
            h.contains("a packet (echo, irq line, median round trip)"),
            "{h}"
        );
        assert!(!h.contains("irq irqfd"));
        assert!(!h.contains("vhost-net"), "{h}");
        assert!(!h.contains("below zero"), "{h}");
        let slow = Doorbells {
            user_ns: 2000.0,
            ioeventfd_ns: 9000.0,
        };
        let h = hop(&rows(), Ok(slow));
        assert!(
            h.contains("= -7.00 µs\n") && h.ends_with("before reading a hop)\n"),
            "{h}"
        );
        assert!(h.lines().all(|l| l.chars().count() <= 100), "{h}");
    }

    #[test]
    fn hop_reads_vhost_net_beside_the_tap_on_the_fast_path() {
        let mut r = rows();
        let Outcome::Measured(m) = r[1].outcome.clone() else {
            unreachable!()
        };
        let mut tap = m.clone();
        tap.rtt_ns = Histogram::new();
        tap.rtt_ns.record(50_000);
        for (backend, m) in [(Backend::Tap, tap), (Backend::VhostNet, m)] {
            r.push(NetRow {
                vmm: "trapline",
                path: "ioeventfd + irqfd".into(),
                backend,
                outcome: Outcome::Measured(m),
            });
        }
        let h = hop(&r, Err("not run".into()));
        assert!(
            h.contains("a packet, tap - vhost-net (ioeventfd + irqfd, median): 50.0"),
            "{h}"
        );
        assert!(h.contains("= 46."), "{h}");
    }

    #[test]
    fn csv_markdown_and_json_carry_every_row() {
        let r = rows();
        let c = csv(&r);
        assert_eq!(c.lines().count(), 4);
        assert!(c
            .lines()
            .nth(3)
            .unwrap()
            .ends_with(",\"not available: no CAP_NET_ADMIN, a, b\""));
        assert!(c
            .lines()
            .next()
            .unwrap()
            .ends_with(",card_exits_per_packet,note"));
        assert!(c.lines().nth(1).unwrap().ends_with(",0,0,0,1.92,"), "{c}");
        let m = markdown("h", &r);
        assert_eq!(m.lines().filter(|l| l.starts_with("| trapline")).count(), 3);
        assert!(m.contains("| card exits/rt |"), "{m}");
        assert!(m.contains("| 0 | 0 | 0 | 1.92 |"), "{m}");
        assert!(m.contains("| 0 | 0 | 0 | – |"), "no count: a dash\n{m}");
        let j = json("h", &r, None);
        assert_eq!(j["rows"].as_array().unwrap().len(), 3);
        assert_eq!(j["rows"][0]["lost"], json!(0.0));
        let e = &j["rows"][0]["exits_per_packet"];
        assert_eq!((&e["card"], &e["trapline"]), (&json!(1.92), &json!(33.9)));
        assert!(e["kvm_irq_injections"].is_null(), "NaN is null: {e}");
        assert!(j["rows"][1]["card_exits_per_packet"].is_null());
        assert!(j["rows"][2]["not_available"].is_string());
    }
}
