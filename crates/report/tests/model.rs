mod common;

use trapline_bus::ExitKind;
use trapline_report::{Report, ReportError, Status, SCHEMA};

#[test]
fn json_round_trip() {
    let r = common::sample_report();
    let text = r.to_json();
    let back = Report::from_json(&text).unwrap();
    assert_eq!(back, r);
    // And through the generic serde path.
    let back2: Report = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back2, r);
}

#[test]
fn finish_fills_summaries() {
    let r = common::sample_report();
    let pio = r.scenario("trapline", "pio-user-out").unwrap();
    let st = pio.stats.as_ref().unwrap();
    assert_eq!(st.n, 5);
    assert_eq!(st.median, 9000.0);
    assert_eq!(st.min, 8820.0);
    assert_eq!(st.max, 9180.0);
    assert_eq!(pio.net.as_ref().unwrap().median, 8900.0);
    assert_eq!(pio.ns_per_iter, Some(3000.0));
    assert_eq!(pio.exits_per_iter.get("pio-write"), Some(&1.0));
    // qemu's net uses qemu's own noop.
    let q = r.scenario("qemu", "pio-user-out").unwrap();
    assert_eq!(q.key(), "qemu:pio-user-out");
    assert_eq!(q.net.as_ref().unwrap().median, 15000.0 - 120.0);
    let un = r.scenario("trapline", "mmio-kernel-datamatch").unwrap();
    assert_eq!(un.status, Status::Unsupported);
    assert!(un.stats.is_none());
    assert_eq!(r.derived("user-exit-premium").unwrap().value, 6000.0);
    assert_eq!(r.derived("vmm-floor-premium").unwrap().value, 4000.0);
    assert_eq!(r.derived("dispatch-overhead").unwrap().value, 2000.0);
    assert_eq!(r.derived("premium-ratio-vs-vmm-floor").unwrap().value, 1.5);
}

#[test]
fn ok_without_samples_becomes_failed() {
    let mut r = common::sample_report();
    r.push(trapline_report::ScenarioResult::new(
        "ram-read", "memslot", "ram",
    ));
    r.finish();
    let s = r.scenario("trapline", "ram-read").unwrap();
    assert_eq!(s.status, Status::Failed);
    assert_eq!(s.reason.as_deref(), Some("no timed samples"));
}

#[test]
fn schema_mismatch_errors() {
    let mut v: serde_json::Value =
        serde_json::from_str(&common::sample_report().to_json()).unwrap();
    v["schema"] = "trapline-bench/2".into();
    match Report::from_json(&v.to_string()) {
        Err(ReportError::Schema {
            found: Some(f),
            expected,
        }) => {
            assert_eq!(f, "trapline-bench/2");
            assert_eq!(expected, SCHEMA);
        }
        other => panic!("expected schema error, got {other:?}"),
    }
    v.as_object_mut().unwrap().remove("schema");
    let err = Report::from_json(&v.to_string()).unwrap_err();
    assert!(matches!(err, ReportError::Schema { found: None, .. }));
    assert!(err.to_string().contains("missing"), "{err}");
}

#[test]
fn bad_json_and_shape_errors() {
    let err = Report::from_json("{ not json").unwrap_err();
    assert!(matches!(err, ReportError::Json { .. }), "{err:?}");
    let err = Report::from_json(&format!("{{\"schema\": \"{SCHEMA}\"}}")).unwrap_err();
    assert!(matches!(err, ReportError::Json { .. }), "{err:?}");
    assert!(err.to_string().contains("tool"), "{err}");
}

#[test]
fn load_from_file() {
    let dir = std::env::temp_dir().join(format!("trapline-report-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.json");
    let r = common::sample_report();
    std::fs::write(&path, r.to_json()).unwrap();
    assert_eq!(Report::load(&path).unwrap(), r);
    let missing = dir.join("missing.json");
    let err = Report::load(&missing).unwrap_err();
    assert!(matches!(err, ReportError::Io { .. }));
    assert!(err.to_string().contains("missing.json"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exit_counts_are_typed_in_memory_and_named_in_json() {
    let r = common::sample_report();
    let pio = r.scenario("trapline", "pio-user-out").unwrap();
    assert_eq!(pio.samples[0].exits.get(ExitKind::PioWrite), 1000);
    assert_eq!(pio.samples[0].exits.total_exits(), 1000);
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    let pio = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "pio-user-out" && s["vmm"] == "trapline")
        .unwrap();
    assert_eq!(
        pio["samples"][0]["exits"],
        serde_json::json!({"pio-write": 1000})
    );
    assert_eq!(pio["exits_per_iter"], serde_json::json!({"pio-write": 1.0}));
}

#[test]
fn an_unknown_exit_kind_fails_the_load_and_says_which() {
    let mut v: serde_json::Value =
        serde_json::from_str(&common::sample_report().to_json()).unwrap();
    v["scenarios"][0]["samples"][0]["exits"] = serde_json::json!({"pio-write": 3, "warp": 1});
    let err = Report::from_json(&serde_json::to_string_pretty(&v).unwrap()).unwrap_err();
    assert!(matches!(err, ReportError::Json { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("unknown exit kind \"warp\""), "{msg}");
    assert!(msg.contains("line "), "{msg}");
}
