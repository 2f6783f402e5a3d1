//! Every scenario name the report reads (its seed tables' rows and
//! findings, the derived values' inputs, the vmm view's rows, the floor
//! ladder's paths: `trapline_report::uses`) is a scenario of the ABI's
//! table and a row the lab produces: trapline's probe scenarios, the floor
//! ladder's rungs (`crates/floor/src/arch/x86_64/ladder.rs`), the unprofiled rows
//! and the QEMU peer's. So renaming a scenario on either side fails here
//! instead of rendering as "not measured". The report cannot depend on the
//! lab, so this test lives where both are visible. No KVM needed.
#![cfg(target_arch = "x86_64")]

use std::collections::BTreeSet;

use serde_json::Value;
use trapline_lab::{catalog, floor, listing, peer};
use trapline_report::derive::{names, FOOTPRINT};
use trapline_report::ladder::{ARM64, RUNGS};
use trapline_report::uses::{scenario_uses, ScenarioUse};
use trapline_report::views::vmm::EXIT_DERIVED;
use trapline_report::{
    render, Derived, Format, Handling, HostInfo, Report, RunConfig, Sample, ScenarioResult,
    ToolInfo, View,
};

/// The VMM name the lab gives the QEMU peer's rows (`runner/schedule.rs`).
const QEMU_VMM: &str = "qemu";

/// Every (vmm, scenario) row the lab can put in a report: `--list`'s
/// (trapline's probe scenarios and the floor ladder's rungs), the
/// unprofiled run of the profile's overhead scenario with its baseline,
/// and the QEMU peer's, one per probe scenario (unsupported, with the
/// catalog's reason, where QEMU cannot run it).
fn produced() -> BTreeSet<(String, String)> {
    let mut rows: BTreeSet<(String, String)> = listing()
        .into_iter()
        .map(|(vmm, name, _, _)| (vmm.to_string(), name.to_string()))
        .collect();
    for s in [names::PIO_USER_OUT, "noop"] {
        rows.insert((names::UNPROFILED_VMM.to_string(), s.to_string()));
    }
    for s in catalog::SCENARIOS {
        rows.insert((QEMU_VMM.to_string(), s.name().to_string()));
    }
    // The arm64 lab's rows: its probe scenarios, its unprofiled pair and
    // its floor ladder (the report reads both architectures' ladders).
    for s in catalog::ARM64_SCENARIOS {
        rows.insert(("trapline".to_string(), s.name().to_string()));
    }
    rows.insert((
        names::UNPROFILED_VMM.to_string(),
        names::MMIO_USER_WRITE.to_string(),
    ));
    for r in ARM64.rungs {
        for k in floor::arch::aarch64::ladder::kinds(r) {
            rows.insert((r.vmm.to_string(), k.name().to_string()));
        }
    }
    rows
}

/// `uses` that fail `ok`, one line each, for the assertion's message.
fn failing(ok: impl Fn(&ScenarioUse) -> bool) -> Vec<String> {
    scenario_uses()
        .into_iter()
        .filter(|u| !ok(u))
        .map(|u| format!("{}: {}:{}", u.by, u.vmm, u.scenario))
        .collect()
}

#[test]
fn every_scenario_the_report_reads_is_in_the_abi_s_table() {
    let bad = failing(|u| trapline_abi::scenario_by_name(&u.scenario).is_some());
    assert!(
        bad.is_empty(),
        "scenarios not in trapline_abi::SCENARIOS (renamed on one side?):\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_row_the_report_reads_is_one_the_lab_produces() {
    let rows = produced();
    let bad = failing(|u| rows.contains(&(u.vmm.clone(), u.scenario.clone())));
    assert!(
        bad.is_empty(),
        "rows the lab never produces (a floor rung's are floor::ladder::kinds, a peer's its \
         catalog rule):\n{}",
        bad.join("\n")
    );
}

/// On arm64 the seed views read their rows' arm64 scenarios: each is in
/// the ABI's table and in the arm64 catalog (the rows the arm64 lab makes).
#[test]
fn every_row_the_arm64_seed_views_read_is_one_the_arm64_lab_produces() {
    let uses = trapline_report::uses::arm64_scenario_uses();
    assert!(!uses.is_empty());
    let bad: Vec<String> = uses
        .iter()
        .filter(|u| {
            trapline_abi::scenario_by_name(&u.scenario).is_none()
                || !catalog::ARM64_SCENARIOS
                    .iter()
                    .any(|s| s.name() == u.scenario)
        })
        .map(|u| format!("{}: {}", u.by, u.scenario))
        .collect();
    assert!(
        bad.is_empty(),
        "arm64 rows the arm64 lab never produces:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_floor_ladder_s_rungs_and_loops_are_the_lab_s() {
    for r in &RUNGS {
        assert!(
            floor::ladder::pieces(r.vmm).is_some(),
            "the report's rung {} has no pieces in the lab's floor ladder",
            r.vmm
        );
    }
    for k in floor::FloorKind::ALL {
        assert!(
            trapline_abi::scenario_by_name(k.name()).is_some(),
            "the floor's {k:?} loop reports as {}, which is not a probe scenario",
            k.name()
        );
    }
    for r in ARM64.rungs {
        assert!(
            floor::arch::aarch64::ladder::pieces(r.vmm).is_some(),
            "the report's arm64 rung {} has no pieces in the lab's arm64 floor ladder",
            r.vmm
        );
    }
    for k in floor::arch::aarch64::code::FloorKind::ALL {
        assert!(
            catalog::ARM64_SCENARIOS
                .iter()
                .any(|s| s.name() == k.name()),
            "the arm64 floor's {k:?} loop reports as {}, which is not an arm64 probe scenario",
            k.name()
        );
    }
}

/// Cycles per iteration for a synthetic row: distinct, with user exits
/// dearer than the in-kernel paths they are compared with (so every
/// premium and ratio the views show has a positive denominator).
fn cycles(vmm: &str, name: &str, i: usize) -> f64 {
    match (vmm, name) {
        (_, "noop") => 100.0,
        ("trapline-nostat", "pio-user-out") => 8_800.0,
        (_, "pio-user-out") => 9_000.0,
        (_, "vmm-floor-pio") => 7_000.0,
        (_, "pio-kernel-wildcard") => 3_000.0,
        (_, "mmio-wildcard-eventfd:pci-mem") => 3_500.0,
        (_, "portio-wildcard-eventfd:pci-io") => 1_800.0,
        _ => 2_000.0 + 10.0 * i as f64,
    }
}

/// A report in which every row the lab can produce was measured (but the
/// peer's that QEMU cannot run), with the exit profile's handling times
/// and the footprint values.
fn everything_measured() -> Report {
    let host = HostInfo {
        tsc_khz: 3_000_000,
        ..HostInfo::default()
    };
    let mut r = Report::new(ToolInfo::default(), host, RunConfig::default());
    for (i, (vmm, name)) in produced().into_iter().enumerate() {
        let iters = 1000u64;
        let samples = [1.00, 1.01, 0.99]
            .iter()
            .map(|f| {
                let c = cycles(&vmm, &name, i) * f * iters as f64;
                let mut s = Sample::new(iters, c.round() as u64);
                if vmm == "trapline" && name == names::PIO_USER_OUT {
                    s.handling = Some(Handling {
                        exits: iters,
                        cycles: 400 * iters,
                    });
                }
                s
            })
            .collect();
        let row = ScenarioResult::new(&name, "g", "p").with_vmm(&vmm);
        let not_on_peer = catalog::find(&name).and_then(peer::not_applicable);
        r.push(match not_on_peer {
            Some(why) if vmm == QEMU_VMM => row.unsupported(format!("n/a on QEMU: {why}")),
            _ => row.with_samples(samples),
        });
    }
    r.finish();
    for (name, unit) in FOOTPRINT.iter().zip(["ms", "MiB"]) {
        r.derived.push(Derived {
            name: name.to_string(),
            value: 1.0,
            unit: unit.into(),
            formula: "measured".into(),
            note: None,
            range: None,
            goal: None,
        });
    }
    r
}

/// Where `v` (at `path`) shows something as not measured: a status saying
/// so without a reason (a seed row the lab has no scenario for gives one),
/// a finding, footprint or derived value without this host's value or the
/// seed's, a ladder cell without a value.
fn unmeasured(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            let status = m.get("status").and_then(Value::as_str).unwrap_or("ok");
            let reason = m.get("reason").is_some_and(|r| !r.is_null());
            if status.starts_with("not measured") && !reason {
                out.push(format!("{path}: {status}"));
            }
            if m.contains_key("formula") {
                for key in ["this_host", "published"] {
                    if m.get(key).is_some_and(Value::is_null) {
                        out.push(format!("{path}.{key}: null"));
                    }
                }
            }
            for (k, v) in m {
                unmeasured(v, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                unmeasured(v, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn a_report_of_every_row_the_lab_produces_leaves_nothing_unmeasured() {
    let r = everything_measured();
    for view in View::all() {
        let json: Value = serde_json::from_str(&render(&r, Format::Json, view)).unwrap();
        let mut out = Vec::new();
        unmeasured(&json, view.name(), &mut out);
        assert!(out.is_empty(), "--view {view}:\n{}", out.join("\n"));
        if view == View::Vmm {
            let ladder = json["ladder"].as_array().expect("a ladder table");
            assert!(!ladder.is_empty(), "every rung was measured");
            for row in ladder {
                let values = row["values"].as_array().unwrap();
                assert!(values.iter().all(|v| !v.is_null()), "{row}");
            }
        }
    }
    let pci_config: Value =
        serde_json::from_str(&render(&r, Format::Json, "pci-config".parse().unwrap())).unwrap();
    assert!(!pci_config["ecam_ro_vs_ram"].is_null());
    // The vmm view's formulas for values it cannot compute are the ones the
    // derivation writes when it can.
    for (name, fallback) in EXIT_DERIVED {
        let d = r
            .derived(name)
            .unwrap_or_else(|| panic!("{name} not derived"));
        assert!(
            fallback.starts_with(&d.formula),
            "{name}: the vmm view says {fallback:?}, the derivation {:?}",
            d.formula
        );
    }
}
