//! The anatomy view renders in every format from a saved sample, without
//! KVM; a saved run without an anatomy still loads.

mod common;

use trapline_report::{render, render_width, Anatomy, AnatomyPath, Format, Report, Spread, View};

fn spread(p50: u64) -> Option<Spread> {
    Some(Spread {
        count: 2048,
        min: p50 * 9 / 10,
        p50,
        p90: p50 * 11 / 10,
        p99: p50 * 3 / 2,
        max: p50 * 4,
    })
}

fn path(name: &str, vmm: &str, legs: Option<(u64, u64, u64)>) -> AnatomyPath {
    AnatomyPath {
        name: name.into(),
        vmm: vmm.into(),
        align: "KVM_VCPU_TSC_OFFSET".into(),
        align_error: Some(0),
        reason: legs
            .is_none()
            .then(|| "the raw floor has no anatomy program for it".into()),
        accesses: 2048,
        split: if legs.is_some() { 2048 } else { 0 },
        exit: legs.and_then(|l| spread(l.0)),
        handling: legs.and_then(|l| spread(l.1)),
        entry: legs.and_then(|l| spread(l.2)),
        round_trip: legs.and_then(|l| spread(l.0 + l.1 + l.2)),
        per_iteration: None,
        scenario_per_iteration: None,
        stamp_cost: None,
    }
}

/// The sample report with an anatomy: pio-user-out on both VMMs, an MMIO
/// path trapline split and the floor could not.
fn with_anatomy() -> Report {
    let mut r = common::sample_report();
    r.attach_anatomy(Anatomy {
        iterations: 2048,
        notes: vec![
            "trapline: KVM_VCPU_TSC_OFFSET (error 0 ticks)".into(),
            "raw-kvm floor: KVM_VCPU_TSC_OFFSET".into(),
        ],
        paths: vec![
            path("pio-user-out", "trapline", Some((9_400, 310, 8_900))),
            path(
                "mmio-no-eventfd:pci-mem",
                "trapline",
                Some((9_800, 900, 9_100)),
            ),
            path("pio-user-out", "raw-kvm", Some((8_900, 90, 8_700))),
            path("mmio-no-eventfd:pci-mem", "raw-kvm", None),
        ],
    });
    r
}

#[test]
fn every_format_shows_the_legs_from_a_saved_run() {
    let saved = with_anatomy().to_json();
    let r = Report::from_json(&saved).unwrap();
    assert_eq!(r, with_anatomy(), "the anatomy survives a save and a load");
    let v = View::Anatomy;
    let t = render_width(&r, Format::Table, v, Some(100));
    assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
    assert!(
        t.contains("pio-user-out") && t.contains("9,400") && t.contains("raw-kvm"),
        "{t}"
    );
    assert!(t.contains("Where trapline's extra time goes"), "{t}");
    assert!(t.contains("Do the legs add up?"), "{t}");
    assert!(
        t.contains("world switch") && t.contains("VGIC"),
        "the legs tie to the paper: {t}"
    );
    let j: serde_json::Value = serde_json::from_str(&render(&r, Format::Json, v)).unwrap();
    assert_eq!(j["view"], "anatomy");
    assert_eq!(j["anatomy"]["paths"][0]["exit"]["p50"], 9_400);
    assert!(j["checks"].as_array().unwrap().len() == 3, "{j}");
    let csv = render(&r, Format::Csv, v);
    let header = csv.lines().next().unwrap();
    for c in [
        "exit_p50_cycles",
        "handling_p99_cycles",
        "entry_max_cycles",
        "round_trip_p90_cycles",
        "gap_pct",
    ] {
        assert!(header.split(',').any(|h| h == c), "{c} in {header}");
    }
    assert_eq!(csv.lines().count(), 5, "{csv}");
    let md = render(&r, Format::Markdown, v);
    assert!(md.contains("| pio-user-out | trapline |"), "{md}");
    let h = render(&r, Format::Html, v);
    assert!(
        h.contains("Where a user exit") && h.contains("<rect"),
        "stacked bars"
    );
    assert!(h.contains("#f28e2b"), "the handling leg's colour");
    let kut = render(&r, Format::Kut, v);
    assert!(kut.contains("anatomy-trapline-pio-user-out-exit"), "{kut}");
}

#[test]
fn the_sum_check_and_the_delta_come_out_right() {
    let r = with_anatomy();
    let a = r.anatomy.as_ref().unwrap();
    // The sample has trapline's pio-user-out at about 9,000 cycles per
    // iteration from its batches: with no batches beside the legs, the
    // legs (18,610) are held to that, do not add up, and the view says so.
    let trap = &a.paths[0];
    let scenario = trap
        .scenario_per_iteration
        .expect("taken from the run's scenario");
    assert!((scenario - 9_000.0).abs() < 200.0, "{scenario}");
    assert!(!trap.adds_up().unwrap());
    let t = render_width(&r, Format::Table, View::Anatomy, Some(100));
    assert!(t.contains("outside 5 %") || t.contains("within 5 %"), "{t}");
    // trapline − floor: 500 + 220 + 200 = 920 on pio-user-out.
    assert!(t.contains("920"), "{t}");
    assert!(a.paths[3].reason.is_some() && !a.paths[3].has_legs());
}

#[test]
fn a_run_without_an_anatomy_says_how_to_get_one() {
    let r = common::sample_report();
    assert!(r.anatomy.is_none());
    let back = Report::from_json(&r.to_json()).unwrap();
    assert!(back.anatomy.is_none() && !r.to_json().contains("\"anatomy\""));
    let t = render(&r, Format::Table, View::Anatomy);
    assert!(t.contains("--view anatomy"), "{t}");
}

#[test]
fn the_paper_view_ties_the_user_exit_to_its_legs() {
    let t = render(&with_anatomy(), Format::Table, common::view("paper"));
    assert!(t.contains("I/O User split (pio-user-out"), "{t}");
    assert!(
        t.contains("two world switches") && t.contains("9,400"),
        "{t}"
    );
    let plain = render(
        &common::sample_report(),
        Format::Table,
        common::view("paper"),
    );
    assert!(!plain.contains("I/O User split"), "no anatomy, no note");
}
