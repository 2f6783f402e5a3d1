//! The schedule on arm64's catalog: the paper's arm64 rows.

use crate::runner::{dry_run, LabOptions};

#[test]
fn on_arm64_the_paper_view_runs_its_arm64_scenarios_only() {
    let view: trapline_report::View = "paper".parse().unwrap();
    let only = view.needs(true).unwrap().join(",");
    let paper = dry_run(&LabOptions::for_tests(Some(&only))).unwrap();
    let all = dry_run(&LabOptions::for_tests(None)).unwrap();
    assert_eq!(paper.floor_rows, 0, "{:?}", paper.rows);
    for s in ["noop", "sysreg-trap", "mmio-vgic-read", "mmio-user-read"] {
        assert!(paper.rows.iter().any(|r| r.1 == s), "{s}: {:?}", paper.rows);
    }
    assert!(paper.rows.len() < all.rows.len(), "{:?}", paper.rows);
    let one = dry_run(&LabOptions::for_tests(Some("sysreg-trap"))).unwrap();
    assert_eq!(one.rows.len(), 2, "{:?}", one.rows);
    assert_eq!(one.units_per_repeat, 1);
}
