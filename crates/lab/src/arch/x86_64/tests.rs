//! The schedule on x86's catalog: port I/O rows, the paper's x86 rows,
//! and what a run of them costs.

use trapline_report::ladder;

use crate::runner::{dry_run, LabOptions};

#[test]
fn a_bare_glob_selects_no_floor_loops_a_rung_or_a_written_name_does() {
    let pio = dry_run(&LabOptions::for_tests(Some("pio-*"))).unwrap();
    assert_eq!(pio.floor_rows, 0, "{:?}", pio.rows);
    // trapline's rows, and pio-user-out with its noop baseline again
    // without the profile.
    let nostat = trapline_report::derive::names::UNPROFILED_VMM;
    assert!(pio
        .rows
        .iter()
        .all(|r| r.0 == "trapline" || (r.0 == nostat && ["noop", "pio-user-out"].contains(&r.1))));
    assert!(pio.rows.iter().any(|r| r.1 == "pio-user-out"));
    assert_eq!(pio.unprofiled_rows, 2, "{:?}", pio.rows);
    let named = dry_run(&LabOptions::for_tests(Some("pio-kernel-wildcard"))).unwrap();
    // On every rung, each with its noop baseline.
    assert_eq!(named.floor_rows, 2 * ladder::RUNGS.len());
    let raw = dry_run(&LabOptions::for_tests(Some("raw-kvm:*"))).unwrap();
    assert!(raw.floor_rows > 0 && raw.rows.iter().all(|r| r.0 == "raw-kvm"));
}

#[test]
fn the_dry_run_counts_vm_runs_and_estimates_the_time() {
    let all = dry_run(&LabOptions::for_tests(None)).unwrap();
    let one = dry_run(&LabOptions::for_tests(Some("cpuid"))).unwrap();
    // noop and cpuid on the main VM: one VM run per repeat.
    assert_eq!(one.rows.len(), 2);
    assert_eq!(one.units_per_repeat, 1);
    let text = one.summary(&LabOptions::for_tests(Some("cpuid")), Some("--only cpuid"));
    assert!(
        text.contains("3 VM runs: 1 per repeat × 3 repeats"),
        "{text}"
    );
    assert!(text.contains("estimated time: about"), "{text}");
    assert!(
        text.starts_with(
            "2 rows selected (2 of trapline's scenarios, 0 floor ladder loops) by --only cpuid\n"
        ),
        "{text}"
    );
    assert!(all.units_per_repeat > one.units_per_repeat);
    assert!(
        all.estimate(&LabOptions::for_tests(None))
            > one.estimate(&LabOptions::for_tests(Some("cpuid")))
    );
}

#[test]
fn the_paper_view_runs_only_its_scenarios() {
    let view: trapline_report::View = "paper".parse().unwrap();
    let only = view.needs(false).unwrap().join(",");
    let paper = dry_run(&LabOptions::for_tests(Some(&only))).unwrap();
    let all = dry_run(&LabOptions::for_tests(None)).unwrap();
    assert_eq!(paper.floor_rows, 0);
    assert!(paper.rows.len() < 15, "{:?}", paper.rows);
    assert!(paper.rows.len() < all.rows.len() / 4);
    assert!(paper.rows.iter().any(|r| r.1 == "pio-kernel-pic"));
}
