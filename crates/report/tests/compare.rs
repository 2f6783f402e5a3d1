mod common;

use trapline_report::{compare, render_comparison, Format, Report, Sample};

fn scale(r: &mut Report, name: &str, factor: f64) {
    for s in r
        .scenarios
        .iter_mut()
        .filter(|s| s.vmm == "trapline" && s.name == name)
    {
        for sample in &mut s.samples {
            *sample = Sample {
                cycles: (sample.cycles as f64 * factor).round() as u64,
                ..sample.clone()
            };
        }
    }
    r.finish();
}

#[test]
fn flags_2x_not_noise() {
    let old = common::sample_report();
    let mut new = old.clone();
    scale(&mut new, "pio-user-out", 2.0);
    scale(&mut new, "hypercall", 1.005);
    new.scenarios.retain(|s| s.name != "pio-kernel-pic");
    new.push(
        trapline_report::ScenarioResult::new("ram-read", "memslot", "ram")
            .with_samples(common::samples(20.0, &[])),
    );
    new.finish();
    let c = compare(&new, &old);
    let pio = c.entry("pio-user-out").unwrap();
    assert_eq!(pio.old_median, 9000.0);
    assert_eq!(pio.new_median, 18000.0);
    assert_eq!(pio.ratio, Some(2.0));
    assert!(pio.significant);
    let hyper = c.entry("hypercall").unwrap();
    assert!(!hyper.significant, "{hyper:?}");
    assert!(!c.entry("noop").unwrap().significant);
    assert_eq!(c.only_old, vec!["pio-kernel-pic".to_string()]);
    assert_eq!(c.only_new, vec!["ram-read".to_string()]);
    assert!(c
        .unmeasured
        .iter()
        .any(|u| u.scenario == "mmio-kernel-datamatch"));
    assert!(c.entry("qemu:pio-user-out").is_some());

    let t = render_comparison(&c, Format::Table);
    let line = t.lines().find(|l| l.starts_with("pio-user-out")).unwrap();
    assert!(line.contains("2.00x") && line.ends_with("yes"), "{line}");
    assert!(t.contains("only in old") && t.contains("only in new"));
    let m = render_comparison(&c, Format::Markdown);
    assert!(m.contains("| scenario | old median | new median | new/old |"));
    let j = render_comparison(&c, Format::Json);
    let back: trapline_report::Comparison = serde_json::from_str(&j).unwrap();
    assert_eq!(back, c);
    let h = render_comparison(&c, Format::Html);
    assert!(h.starts_with("<!DOCTYPE html>") && !h.contains("http"));
    let k = render_comparison(&c, Format::Kut);
    assert!(k.contains("pio-user-out 18000\n") && k.contains("ram-read (skipped)\n"));
}

#[test]
fn overlapping_ranges_are_not_significant() {
    let old = common::sample_report();
    let mut new = old.clone();
    // 3% up: beyond 3 MADs (MAD is 1%) but the min–max ranges (±2%) overlap.
    scale(&mut new, "pio-user-out", 1.03);
    let c = compare(&new, &old);
    assert!(!c.entry("pio-user-out").unwrap().significant);
}

/// The comparison says its significance rule and ends with a verdict line.
#[test]
fn a_comparison_states_its_rule_and_ends_with_a_verdict() {
    let old = common::sample_report();
    let same = compare(&old, &old);
    assert_eq!(
        same.verdict(),
        trapline_report::CompareVerdict::NoChange {
            compared: same.entries.len()
        }
    );
    let t = render_comparison(&same, Format::Table);
    assert!(t.contains(trapline_report::SIGNIFICANCE_RULE), "{t}");
    assert!(
        t.trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("verdict: no change"),
        "{t}"
    );

    let mut slower = old.clone();
    scale(&mut slower, "pio-user-out", 2.0);
    let c = compare(&slower, &old);
    let last = render_comparison(&c, Format::Table);
    assert_eq!(
        last.trim_end().lines().last().unwrap(),
        "verdict: regressed (1 significantly slower: pio-user-out)"
    );
    let m = render_comparison(&c, Format::Markdown);
    assert!(
        m.trim_end()
            .ends_with("**verdict: regressed (1 significantly slower: pio-user-out)**"),
        "{m}"
    );

    let mut faster = old.clone();
    scale(&mut faster, "cpuid", 0.5);
    let c = compare(&faster, &old);
    assert_eq!(
        c.verdict().to_string(),
        "verdict: improved (1 significantly faster: cpuid)"
    );
    assert!(render_comparison(&c, Format::Html).contains("verdict: improved"));
}

/// Runs made differently are named before the table, scenarios only one
/// run has are one counted line unless verbose, and a narrow terminal gets
/// a table that fits.
#[test]
fn differing_runs_are_named_and_one_sided_scenarios_counted() {
    use trapline_report::{differences, render_comparison_with, CompareDetail};
    let old = common::sample_report();
    let mut new = old.clone();
    new.scenarios.retain(|s| s.name != "pio-kernel-pic");
    assert!(differences(&new, &old).is_empty());
    new.config.quick = !old.config.quick;
    new.host.kernel = "6.99-other".into();
    let d = differences(&new, &old);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d[0].starts_with("--quick: new "), "{d:?}");
    assert!(d[1].starts_with("kernel: new 6.99-other, old "), "{d:?}");
    let c = compare(&new, &old);
    assert_eq!(c.differences, d);
    let brief = CompareDetail {
        verbose: false,
        width: None,
    };
    let t = render_comparison_with(&c, Format::Table, brief);
    assert!(t.contains("warning: the two runs differ (--quick"), "{t}");
    assert!(
        t.contains("Not compared: 1 scenario only in the old run"),
        "{t}"
    );
    assert!(!t.contains("only in old\n"), "{t}");
    let all = render_comparison_with(
        &c,
        Format::Table,
        CompareDetail {
            verbose: true,
            width: None,
        },
    );
    assert!(all.contains("only in old"), "{all}");
    let narrow = render_comparison_with(
        &c,
        Format::Table,
        CompareDetail {
            verbose: false,
            width: Some(60),
        },
    );
    assert!(narrow.lines().all(|l| l.chars().count() <= 60), "{narrow}");
    let j = render_comparison(&c, Format::Json);
    assert!(j.contains("\"differences\""), "{j}");
}
