//! `trapline kernel-share`: where tracefs is missing the rows say
//! `unsupported` with the reason and the run still measures the probe's
//! round trip and ends well; a scenario this architecture lacks is a usage
//! error. (Reading a real trace is the lab's unit tests', on fixtures.)

mod common;
use common::*;

#[test]
fn without_tracefs_every_row_is_unsupported_and_the_run_ends_well() {
    if !kvm_present("kernel-share without tracefs") {
        return;
    }
    let o = run(&[
        "kernel-share",
        "--quick",
        "--only",
        "noop",
        "--tracefs",
        "/nonexistent/tracing",
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON on stdout");
    assert_eq!(j["schema"], "trapline-kernel-share/1");
    let row = &j["scenarios"][0];
    assert_eq!(row["name"], "noop");
    assert_eq!(row["status"], "unsupported", "{j}");
    assert!(
        row["reason"]
            .as_str()
            .is_some_and(|r| r.contains("/nonexistent/tracing")),
        "{j}"
    );
    assert!(row["round_trip_cycles"].as_f64().is_some(), "{j}");
    assert!(
        !std::path::Path::new("/nonexistent/tracing").exists(),
        "nothing created"
    );
}

#[test]
fn an_unknown_scenario_is_a_usage_error() {
    let o = trapline()
        .env("TRAPLINE_KVM", "/nonexistent/kvm")
        .args(["kernel-share", "--only", "no-such-path"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("no-such-path"), "{}", stderr(&o));
}
