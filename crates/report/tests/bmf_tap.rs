//! `--format bmf` (Bencher Metric Format) and `--format tap` (TAP 13) on
//! the shared sample reports.

mod common;

use serde_json::Value;
use trapline_report::{
    compare, render, render_comparison, Format, Report, Sample, ScenarioResult, View,
};

fn bmf(r: &Report) -> serde_json::Map<String, Value> {
    let text = render(r, Format::Bmf, View::All);
    match serde_json::from_str(&text).expect("BMF is valid JSON") {
        Value::Object(m) => m,
        other => panic!("BMF is an object, not {other}"),
    }
}

#[test]
fn bmf_keys_measured_scenarios_by_report_key() {
    let r = common::sample_report();
    let m = bmf(&r);
    let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want: Vec<String> = r
        .scenarios
        .iter()
        .filter(|s| s.is_measured())
        .map(|s| s.key())
        .collect();
    want.sort_unstable();
    assert_eq!(keys, want);
    // Trapline's rows by plain name, the peer's as vmm:name; no rows for
    // the unsupported and failed scenarios.
    assert!(m.contains_key("pio-user-out") && m.contains_key("qemu:pio-user-out"));
    assert!(!m.contains_key("mmio-kernel-datamatch") && !m.contains_key("coalesced-mmio"));

    // Cycles under the custom `cycles` measure; `latency` is Bencher's
    // nanoseconds (the sample host's TSC runs at 3 GHz: 3 cycles a ns).
    let pio = &m["pio-user-out"]["cycles"];
    let stats = r
        .scenario("trapline", "pio-user-out")
        .unwrap()
        .stats
        .as_ref()
        .unwrap();
    assert_eq!(pio["value"].as_f64(), Some(9000.0));
    assert_eq!(pio["value"].as_f64(), Some(stats.median));
    assert_eq!(pio["lower_value"].as_f64(), Some(stats.min));
    assert_eq!(pio["upper_value"].as_f64(), Some(stats.max));
    let ns = &m["pio-user-out"]["latency"];
    assert_eq!(ns["value"].as_f64(), Some(3000.0));
    assert!((ns["lower_value"].as_f64().unwrap() - stats.min / 3.0).abs() < 1e-6);
    assert_eq!(m["qemu:noop"]["cycles"]["value"].as_f64(), Some(120.0));
    assert_eq!(m["qemu:noop"]["latency"]["value"].as_f64(), Some(40.0));
    for (k, v) in &m {
        let obj = v.as_object().unwrap();
        assert_eq!(obj.keys().collect::<Vec<_>>(), ["cycles", "latency"], "{k}");
        for measure in ["cycles", "latency"] {
            let l = &v[measure];
            let (lo, mid, hi) = (
                l["lower_value"].as_f64().unwrap(),
                l["value"].as_f64().unwrap(),
                l["upper_value"].as_f64().unwrap(),
            );
            assert!(lo <= mid && mid <= hi, "{k}: {l}");
        }
    }
}

/// Without the TSC frequency there are no nanoseconds: only `cycles`.
#[test]
fn bmf_without_a_tsc_frequency_reports_cycles_only() {
    let mut r = common::sample_report();
    r.host.tsc_khz = 0;
    let m = bmf(&r);
    let obj = m["pio-user-out"].as_object().unwrap();
    assert_eq!(obj.keys().collect::<Vec<_>>(), ["cycles"]);
}

#[test]
fn bmf_is_the_whole_run_in_every_view_and_empty_when_nothing_ran() {
    let r = common::full_report();
    let all = render(&r, Format::Bmf, View::All);
    for v in View::all() {
        assert_eq!(render(&r, Format::Bmf, v), all, "{v}");
    }
    assert!(bmf(&r).contains_key("raw-kvm:pio-user-out"));
    let empty = Report::new(Default::default(), Default::default(), Default::default());
    assert_eq!(render(&empty, Format::Bmf, View::All), "{}\n");
}

/// A parsed TAP stream: the plan and each point's line with its YAML.
struct Tap {
    plan: String,
    points: Vec<(bool, usize, String, Vec<String>)>,
}

fn parse_tap(text: &str) -> Tap {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("TAP version 13"));
    let plan = lines.next().expect("a plan line").to_string();
    let mut points: Vec<(bool, usize, String, Vec<String>)> = Vec::new();
    let mut yaml: Option<Vec<String>> = None;
    for l in lines {
        if let Some(block) = yaml.as_mut() {
            if l == "  ..." {
                points.last_mut().unwrap().3 = yaml.take().unwrap();
            } else {
                block.push(l.to_string());
            }
            continue;
        }
        if l == "  ---" {
            assert!(!points.last().unwrap().0, "YAML only after not ok: {text}");
            yaml = Some(Vec::new());
            continue;
        }
        let (ok, rest) = match l.strip_prefix("not ok ") {
            Some(rest) => (false, rest),
            None => (true, l.strip_prefix("ok ").unwrap_or_else(|| panic!("{l}"))),
        };
        let (n, rest) = rest.split_once(" - ").unwrap();
        points.push((ok, n.parse().unwrap(), rest.to_string(), Vec::new()));
    }
    assert!(yaml.is_none(), "unterminated YAML block");
    Tap { plan, points }
}

#[test]
fn tap_has_a_plan_and_a_point_per_scenario() {
    let r = common::sample_report();
    let text = render(&r, Format::Tap, View::All);
    let tap = parse_tap(&text);
    assert_eq!(tap.plan, format!("1..{}", r.scenarios.len()));
    assert_eq!(tap.points.len(), r.scenarios.len());
    for (i, p) in tap.points.iter().enumerate() {
        assert_eq!(p.1, i + 1, "points are numbered in order");
    }
    let point = |name: &str| {
        tap.points
            .iter()
            .find(|p| p.2 == name || p.2.starts_with(&format!("{name} #")))
            .unwrap_or_else(|| panic!("{name} in\n{text}"))
    };
    assert_eq!(point("pio-user-out").2, "pio-user-out # 9000 cycles");
    assert_eq!(point("qemu:noop").2, "qemu:noop # 120 cycles");
    let skip = point("mmio-kernel-datamatch");
    assert!(skip.0);
    assert_eq!(
        skip.2,
        "mmio-kernel-datamatch # SKIP KVM_CAP_IOEVENTFD missing, \"datamatch\" <needs> it</script>"
    );
    let failed = point("coalesced-mmio");
    assert!(!failed.0);
    assert_eq!(failed.2, "coalesced-mmio");
    assert_eq!(
        failed.3,
        ["  message: \"guest reported 3 != 4\"", "  severity: fail"]
    );
    assert!(text.contains("not ok 10 - coalesced-mmio\n  ---\n  message: "));
    // Every view gives the same stream: it lists the run, not the page.
    for v in View::all() {
        assert_eq!(render(&r, Format::Tap, v), text, "{v}");
    }
}

#[test]
fn tap_keeps_each_point_on_its_line() {
    let mut r = Report::new(Default::default(), Default::default(), Default::default());
    assert_eq!(
        render(&r, Format::Tap, View::All),
        "TAP version 13\n1..0 # SKIP no scenarios in this report\n"
    );
    r.push(ScenarioResult::new("a#b", "x", "p").with_samples(common::samples(10.0, &[])));
    r.push(ScenarioResult::new("gone", "x", "p").unsupported("line one\nline # two"));
    r.push(ScenarioResult::new("bad", "x", "p").failed("said: \"no\"\nthen: stopped"));
    r.finish();
    let text = render(&r, Format::Tap, View::All);
    let tap = parse_tap(&text);
    assert_eq!(tap.plan, "1..3");
    assert_eq!(tap.points[0].2, "a\\#b # 10 cycles");
    assert_eq!(tap.points[1].2, "gone # SKIP line one line # two");
    assert_eq!(
        tap.points[2].3,
        [
            r#"  message: "said: \"no\"\nthen: stopped""#,
            "  severity: fail"
        ]
    );
}

#[test]
fn comparisons_render_as_bmf_ratios_and_a_tap_regression_gate() {
    let old = common::sample_report();
    let mut new = old.clone();
    for s in new
        .scenarios
        .iter_mut()
        .filter(|s| s.key() == "pio-user-out")
    {
        for sample in &mut s.samples {
            *sample = Sample {
                cycles: sample.cycles * 2,
                ..sample.clone()
            };
        }
    }
    new.finish();
    let c = compare(&new, &old);

    let b: serde_json::Map<String, Value> =
        serde_json::from_str(&render_comparison(&c, Format::Bmf)).expect("valid JSON");
    assert_eq!(b["pio-user-out"]["ratio"]["value"].as_f64(), Some(2.0));
    assert_eq!(b["noop"]["ratio"]["value"].as_f64(), Some(1.0));
    assert_eq!(b.len(), c.entries.len());

    let text = render_comparison(&c, Format::Tap);
    let tap = parse_tap(&text);
    let n = c.entries.len() + c.unmeasured.len() + c.only_new.len() + c.only_old.len();
    assert_eq!(tap.plan, format!("1..{n}"));
    assert_eq!(tap.points.len(), n);
    let failed: Vec<&str> = tap
        .points
        .iter()
        .filter(|p| !p.0)
        .map(|p| p.2.as_str())
        .collect();
    assert_eq!(failed, ["pio-user-out"], "{text}");
    assert!(
        text.contains("  message: \"slower: 18000 cycles, was 9000 (2.00x), beyond the spread\"")
    );
    assert!(text.contains("ok 1 - noop # new/old 1.00x"));
    assert!(text.contains("coalesced-mmio # SKIP not comparable: old failed, new failed"));

    let same = render_comparison(&compare(&old, &old), Format::Tap);
    assert!(!same.contains("not ok"), "{same}");
}

#[test]
fn the_new_formats_parse_and_name_themselves() {
    for (s, f) in [("bmf", Format::Bmf), ("TAP", Format::Tap)] {
        assert_eq!(s.parse::<Format>().unwrap(), f);
        assert_eq!(f.to_string(), s.to_ascii_lowercase());
    }
    assert_eq!(Format::Bmf.extension(), "json");
    assert!("xml".parse::<Format>().unwrap_err().contains("bmf, tap"));
}
