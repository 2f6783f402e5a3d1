//! The tails view from a saved sample, without KVM: every format renders,
//! the terminal table fits 100 columns, and the table, CSV and markdown
//! match their golden files (`TRAPLINE_BLESS=1 cargo test -p
//! trapline-report --test tails` rewrites them after a deliberate change).

mod common;

use trapline_report::{render, render_width, Format, Report, Tails, View};

/// A distribution: `values` as (value, count), one bucket each.
fn tails(values: &[(u64, u64)], stamp: u64) -> Tails {
    let count: u64 = values.iter().map(|v| v.1).sum();
    let mut sorted: Vec<u64> = values
        .iter()
        .flat_map(|&(v, n)| std::iter::repeat_n(v, n as usize))
        .collect();
    sorted.sort_unstable();
    let q = |q: f64| sorted[((q * count as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
    Tails {
        count,
        repeats: 5,
        cap: 4096,
        self_stamped: false,
        min: sorted[0],
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        p999: q(0.999),
        max: *sorted.last().unwrap(),
        mean: sorted.iter().sum::<u64>() as f64 / count as f64,
        stamp,
        overhead_pct: None,
        error: None,
        buckets: values.iter().map(|&(v, n)| [v, v, n]).collect(),
    }
}

/// The shared sample with tails on trapline's noop and pio-user-out (the
/// peer's rows have none), saved and loaded back as `trapline report` would.
fn sample() -> Report {
    let mut r = common::sample_report();
    for s in &mut r.scenarios {
        if s.vmm != "trapline" {
            continue;
        }
        s.tails = match s.name.as_str() {
            "noop" => Some(tails(&[(160, 4000), (170, 900), (400, 100)], 160)),
            "pio-user-out" => Some(tails(
                &[(9100, 3000), (9300, 1500), (25_000, 480), (250_000, 20)],
                160,
            )),
            _ => None,
        };
    }
    r.finish();
    Report::from_json(&r.to_json()).expect("the saved sample loads back")
}

fn golden(name: &str, got: &str) {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("TRAPLINE_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(got, want, "{name} differs from its golden file");
}

#[test]
fn a_saved_run_keeps_its_tails() {
    let r = sample();
    let t = r
        .scenario("trapline", "pio-user-out")
        .unwrap()
        .tails
        .as_ref()
        .unwrap();
    assert_eq!((t.count, t.p50, t.max), (5000, 9100, 250_000));
    assert!(t.p50 <= t.p99 && t.p99 <= t.max);
    // The recording overhead against the timed median (9,000).
    assert!(t.overhead_pct.unwrap() > 2.0, "{t:?}");
    // The noise verdict from the distribution: a heavy tail on pio-user-out.
    let s = r.scenario("trapline", "pio-user-out").unwrap();
    assert!(
        s.noise.iter().any(|f| f.kind.as_str() == "heavy-tail"),
        "{:?}",
        s.noise
    );
    // A report from before tails loads, with none.
    let old = common::sample_report().to_json();
    assert!(!old.contains("\"tails\""));
    let old = Report::from_json(&old).unwrap();
    assert!(old.scenarios.iter().all(|s| s.tails.is_none()));
}

#[test]
fn the_tails_view_renders_in_every_format() {
    let r = sample();
    let view: View = "tails".parse().unwrap();
    for f in Format::ALL {
        assert!(!render(&r, f, view).is_empty(), "{f}");
    }
    let table = render_width(&r, Format::Table, view, Some(100));
    for line in table.lines() {
        assert!(line.chars().count() <= 100, "{line:?}");
    }
    golden("tails.txt", &table);
    golden("tails.csv", &render(&r, Format::Csv, view));
    golden("tails.md", &render(&r, Format::Markdown, view));
    let json = render(&r, Format::Json, view);
    assert!(json.contains("\"p999\": 250000"), "{json}");
    let html = render(&r, Format::Html, view);
    assert!(html.contains("pio-user-out: distribution") && html.contains("<svg"));
    assert!(html.contains("log scale"));
    // The peer's rows say why they have none.
    assert!(table.contains("not recorded: qemu"), "{table}");
}

#[test]
fn the_all_view_shows_percentiles_and_histograms_only_with_tails() {
    let r = sample();
    let html = render(&r, Format::Html, View::All);
    assert!(html.contains("p99.9") && html.contains("pio-user-out: distribution"));
    let old = common::sample_report();
    let html = render(&old, Format::Html, View::All);
    assert!(!html.contains("p99.9"));
}
