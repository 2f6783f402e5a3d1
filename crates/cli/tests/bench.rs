//! `trapline bench` end to end: the lab runs, every scenario it runs passes
//! its own check, and each output format is what it claims to be. Small
//! loops (the host emulates guest code): the point is behaviour, not speed.
#![cfg(target_arch = "x86_64")]

use std::process::Output;

mod common;
use common::*;

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A short lab run over a few scenarios of every kind of check (without a
/// results folder: tests leave nothing in the crate's directory).
const SMALL: &[&str] = &[
    "bench",
    "--repeat",
    "1",
    "--goal",
    "300000",
    "--min-iters",
    "8",
    "--warmup",
    "4",
    "--no-progress",
    "--no-results",
];
const ONLY: &str = "cpuid,hlt,pio-user-out,pio-kernel-wildcard,mmio-user-read,mmio-kernel-datamatch,coalesced-mmio,ro-memslot-read,vmm-floor-pio,hypercall,raw-kvm:*";

fn small(extra: &[&str]) -> Output {
    let mut a = SMALL.to_vec();
    a.extend_from_slice(&["--only", ONLY]);
    a.extend_from_slice(extra);
    run(&a)
}

#[test]
fn json_report_has_every_selected_scenario_checked_and_the_derived_values() {
    if !kvm_present("bench json") {
        return;
    }
    let html = tmp("report.html");
    let saved = tmp("saved.json");
    let o = small(&[
        "--format",
        "json",
        "--html",
        html.to_str().unwrap(),
        "--save",
        saved.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stderr: {err}\nstdout: {out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
    assert_eq!(v["schema"], "trapline-bench/1");
    let scenarios = v["scenarios"].as_array().unwrap();
    let find = |vmm: &str, name: &str| {
        scenarios
            .iter()
            .find(|s| s["vmm"] == vmm && s["name"] == name)
            .unwrap_or_else(|| panic!("{vmm}:{name} missing"))
    };
    for name in [
        "noop",
        "cpuid",
        "hlt",
        "pio-user-out",
        "pio-kernel-wildcard",
        "mmio-user-read",
        "mmio-kernel-datamatch",
        "coalesced-mmio",
        "ro-memslot-read",
        "vmm-floor-pio",
    ] {
        let s = find("trapline", name);
        assert_eq!(s["status"], "ok", "{name}: {s}");
        assert!(s["stats"]["median"].as_f64().unwrap() > 0.0, "{name}");
        assert!(
            s["check"].as_str().is_some_and(|c| !c.is_empty()),
            "{name} says what it checked"
        );
    }
    for name in ["noop", "pio-user-out", "pio-kernel-wildcard"] {
        assert_eq!(find("raw-kvm", name)["status"], "ok");
    }
    // A user exit is one exit per iteration; an ioeventfd is none.
    assert_eq!(
        find("trapline", "pio-user-out")["exits_per_iter"]["pio-write"],
        1.0
    );
    assert!(find("trapline", "pio-kernel-wildcard")["exits_per_iter"]
        .as_object()
        .unwrap()
        .is_empty());
    // trapline's own handling time per user exit, measured directly (the
    // exit profile), and the same scenario on a VM without the profile for
    // the profile's own overhead.
    let h = &find("trapline", "pio-user-out")["handling"];
    assert!(h["median"].as_f64().unwrap() > 0.0, "{h}");
    assert!(h["mad"].as_f64().is_some(), "{h}");
    assert!(find("trapline", "pio-kernel-wildcard")["handling"].is_null());
    assert_eq!(find("trapline-nostat", "pio-user-out")["status"], "ok");
    assert!(find("trapline-nostat", "pio-user-out")["handling"].is_null());
    // The hypercall either works or is reported unsupported with a reason.
    let h = find("trapline", "hypercall");
    assert!(
        h["status"] == "ok" || (h["status"] == "unsupported" && h["reason"].as_str().is_some()),
        "{h}"
    );
    let derived: Vec<&str> = v["derived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    for want in [
        "user-exit-premium",
        "dispatch-overhead",
        "raw-kvm:user-exit-premium",
        "handling-per-user-exit",
        "stat-overhead",
    ] {
        assert!(derived.contains(&want), "{want} not in {derived:?}");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<svg") && page.contains("trapline-data"),
        "HTML has charts and data"
    );
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "HTML is self-contained"
    );
    // The saved JSON loads back for --compare; comparing a run with itself
    // flags nothing as significant.
    let o = run(&["bench", "--list"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("pio-kernel-datamatch"));
    let saved_text = std::fs::read_to_string(&saved).unwrap();
    let _: serde_json::Value = serde_json::from_str(&saved_text).unwrap();
}

#[test]
fn other_formats_and_views_render() {
    if !kvm_present("bench formats") {
        return;
    }
    let mut a = SMALL.to_vec();
    a.extend_from_slice(&["--only", "cpuid,pio-user-in,raw-kvm:pio-user-out"]);
    for (fmt, probe) in [
        ("kut", "cpuid "),
        ("csv", "cpuid,"),
        ("markdown", "| cpuid"),
        ("table", "cpuid"),
        ("bmf", "\"cpuid\": {"),
        ("tap", "TAP version 13\n1..5\nok 1 - noop # "),
    ] {
        let mut b = a.clone();
        b.extend_from_slice(&["--format", fmt]);
        let o = run(&b);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{fmt}: {err}");
        assert!(out.contains(probe), "{fmt}: {out}");
    }
    let mut b = a.clone();
    b.extend_from_slice(&["--view", "paper"]);
    let (out, _) = text(&run(&b));
    assert!(
        out.contains("I/O User") && out.contains("8,226"),
        "paper view with published numbers: {out}"
    );
    // kut lines are `name cycles`.
    let mut b = a;
    b.extend_from_slice(&["--format", "kut"]);
    let (out, _) = text(&run(&b));
    for line in out.lines().filter(|l| !l.is_empty()) {
        let (name, cycles) = line.rsplit_once(' ').unwrap();
        assert!(
            !name.is_empty() && (cycles.parse::<u64>().is_ok() || cycles == "(skipped)"),
            "{line}"
        );
    }
}

#[test]
fn compare_against_a_saved_run() {
    if !kvm_present("bench compare") {
        return;
    }
    let saved = tmp("old.json");
    let mut a = SMALL.to_vec();
    // --save is the whole report whatever the view and format shown.
    a.extend_from_slice(&[
        "--only",
        "cpuid",
        "--view",
        "seeds",
        "--format",
        "csv",
        "--save",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(run(&a).status.code(), Some(0));
    let mut b = SMALL.to_vec();
    b.extend_from_slice(&["--only", "cpuid", "--compare", saved.to_str().unwrap()]);
    let o = run(&b);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("cpuid") && out.contains("old:"), "{out}");
    assert!(
        out.trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("verdict: "),
        "{out}"
    );
}

/// Every output path is checked before anything is measured: status 2 (6
/// would mean it got as far as opening KVM), nothing on stdout, no results
/// folder made, and the message names the flag.
#[test]
fn a_bad_output_path_fails_before_measuring() {
    let parent = tmp("bad-output-results");
    let _ = std::fs::remove_dir_all(&parent);
    for flag in ["--html", "--save", "--export"] {
        let bad = "/nonexistent/dir/r.out";
        let value = if flag == "--export" {
            format!("md:{bad}")
        } else {
            bad.to_string()
        };
        let o = trapline()
            .env("TRAPLINE_KVM", "/nonexistent/kvm")
            .args(["bench", "--no-progress", "--results-dir"])
            .arg(&parent)
            .args([flag, &value])
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{flag}: {err}");
        assert!(out.is_empty(), "{flag}: nothing measured: {out}");
        assert!(!parent.exists(), "{flag}: no results folder");
        assert_eq!(
            err.trim_end(),
            format!("trapline bench: error: cannot write {flag} {bad}: its folder does not exist")
        );
    }
}

#[test]
fn bad_bench_input_is_a_clear_usage_error() {
    let bad_json = tmp("bad.json");
    std::fs::write(&bad_json, "{ not json").unwrap();
    let wrong_schema = tmp("schema.json");
    std::fs::write(&wrong_schema, r#"{"schema":"something-else/9"}"#).unwrap();
    for (args, needle) in [
        (vec!["bench", "--repeat", "0"], "repeat"),
        (vec!["bench", "--format", "xml"], "xml"),
        (vec!["bench", "--view", "nope"], "nope"),
        (
            vec!["bench", "--compare", "/nonexistent/old.json"],
            "old.json",
        ),
        (
            vec!["bench", "--compare", bad_json.to_str().unwrap()],
            "bad.json",
        ),
        (
            vec!["bench", "--compare", wrong_schema.to_str().unwrap()],
            "schema",
        ),
        (vec!["bench", "--timeout", "0"], "more than 0"),
    ] {
        let o = run(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    if kvm_present("bench --only") {
        let o = run(&["bench", "--only", "no-such-scenario", "--no-results"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(text(&o).1.contains("--list"));
    }
}

/// The floor ladder: every rung runs the probe's in-kernel loops on a raw
/// VM and passes its check (eventfd counts, the value read); the derived
/// values give each piece's cost, the whole gap and trapline against the
/// raw VM configured like it, and `--view vmm` shows them as a table.
#[test]
fn the_floor_ladder_runs_every_rung_and_prices_every_piece() {
    if !kvm_present("bench floor ladder") {
        return;
    }
    let mut a = SMALL.to_vec();
    a.extend_from_slice(&[
        "--only",
        "noop,pio-kernel-wildcard,mmio-kernel-wildcard,ram-read",
        "--no-stat",
        "--format",
        "json",
        "--view",
        "vmm",
    ]);
    let o = run(&a);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stderr: {err}\nstdout: {out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
    let ladder = v["ladder"].as_array().expect("the vmm view has the ladder");
    for piece in [
        "idmap",
        "cpuid",
        "irqchip",
        "pit",
        "ioeventfds",
        "coalesced",
        "memslots",
        "irqfd",
        "split-irqchip",
        "64-ioeventfds",
    ] {
        let row = ladder
            .iter()
            .find(|r| r["name"] == format!("piece:{piece}"))
            .unwrap_or_else(|| panic!("piece:{piece} missing: {ladder:?}"));
        for (i, path) in ["pio", "mmio", "ram"].iter().enumerate() {
            assert!(
                row["values"][i]["cycles"].as_f64().is_some(),
                "piece:{piece} has no {path} cost: {row}"
            );
        }
    }
    let vs = ladder
        .iter()
        .find(|r| r["name"] == "trapline-vs-trapline-pc")
        .unwrap();
    assert!(vs["values"][0]["cycles"].as_f64().unwrap() > 0.0, "{vs}");
}

/// `SMALL` with a results folder under `parent` instead of none.
fn small_keeping_results(parent: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = SMALL
        .iter()
        .filter(|a| **a != "--no-results")
        .map(|a| a.to_string())
        .collect();
    a.extend(["--only".into(), ONLY.into()]);
    a.extend(["--results-dir".into(), parent.display().to_string()]);
    a.extend(extra.iter().map(|a| a.to_string()));
    a
}

/// The default output is a summary that fits the width (100 columns on a
/// pipe, `COLUMNS` when set), names the results folder's files, and those
/// hold the full report; `latest` points at the run. Run in a scratch
/// directory with a relative `--results-dir`, as a user would.
#[test]
fn the_default_output_is_a_summary_and_the_full_report_is_kept() {
    if !kvm_present("bench summary") {
        return;
    }
    let cwd = tmp("summary-cwd");
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(&cwd).unwrap();
    let parent = std::path::Path::new("results");
    let bench = |extra: &[&str]| {
        let mut cmd = trapline();
        cmd.current_dir(&cwd)
            .env_remove("COLUMNS")
            .args(small_keeping_results(parent, extra));
        cmd
    };
    for (columns, width) in [(None, 100), (Some("60"), 60)] {
        let mut cmd = bench(&[]);
        if let Some(c) = columns {
            cmd.env("COLUMNS", c);
        }
        let o = cmd.output().unwrap();
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "stderr: {err}\nstdout: {out}");
        for line in out.lines() {
            assert!(
                line.chars().count() <= width,
                "wider than {width}: {line:?}\n{out}"
            );
        }
        assert!(out.starts_with("trapline bench: "), "{out}");
        assert!(out.contains("checks: all "), "{out}");
        assert!(
            out.contains("pio-user-out") && !out.contains("raw-kvm+"),
            "{out}"
        );
        assert!(
            !out.contains("piece:"),
            "the ladder's pieces are left out: {out}"
        );
        let named = |suffix: &str| {
            let word = out
                .split_whitespace()
                .find(|w| w.ends_with(suffix))
                .unwrap_or_else(|| panic!("no {suffix} named: {out}"));
            cwd.join(word)
        };
        let (json, html) = (named("report.json"), named("report.html"));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["schema"], "trapline-bench/1");
        assert!(v["scenarios"].as_array().unwrap().len() > 10);
        assert!(std::fs::read_to_string(html).unwrap().contains("<svg"));
        let latest = std::fs::read_link(cwd.join(parent).join("latest")).unwrap();
        assert_eq!(cwd.join(parent).join(latest).join("report.json"), json);
    }
    // Two runs, two folders, and nothing else beside them.
    let runs = std::fs::read_dir(cwd.join(parent))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != "latest")
        .count();
    assert_eq!(runs, 2);
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 1);
    // --verbose: the summary's header, then the full table with every row
    // and every check text.
    let o = bench(&["--verbose"]).output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.starts_with("trapline bench: "), "{out}");
    assert!(
        out.contains("\nChecks:\n") && out.contains("raw-kvm:noop"),
        "{out}"
    );
    assert!(out.contains("\nFull report: "), "{out}");
    // A machine format on stdout stays clean; the files go to stderr.
    let o = bench(&["--format", "json"]).output().unwrap();
    let (out, err) = text(&o);
    let _: serde_json::Value = serde_json::from_str(&out).expect("stdout is only JSON");
    assert!(err.contains("report.json"), "{err}");
    let _ = std::fs::remove_dir_all(&cwd);
}

#[test]
fn no_results_writes_nothing() {
    if !kvm_present("bench --no-results") {
        return;
    }
    let cwd = tmp("no-results-cwd");
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(&cwd).unwrap();
    let mut a = SMALL.to_vec();
    a.extend_from_slice(&["--only", "cpuid"]);
    let o = trapline().current_dir(&cwd).args(&a).output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0, "{out}");
    assert!(
        !out.contains("report.json") && out.contains("--verbose"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&cwd);
}

/// A results folder that cannot be made fails at once, before /dev/kvm is
/// even opened (status 2 here with or without KVM), and leaves nothing.
#[test]
fn a_bad_results_dir_fails_before_measuring() {
    let file = tmp("not-a-folder");
    std::fs::write(&file, "a file").unwrap();
    let parent = file.join("results");
    let o = trapline()
        .env("TRAPLINE_KVM", "/nonexistent/kvm")
        .args(["bench", "--no-progress", "--results-dir"])
        .arg(&parent)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(out.is_empty(), "nothing measured: {out}");
    assert!(
        err.contains(&parent.display().to_string()) && err.contains("--no-results"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let o = run(&["bench", "--results-dir", "x", "--no-results"]);
    assert_eq!(o.status.code(), Some(2), "the two flags conflict");
}

#[test]
fn a_short_run_carries_tails_for_a_user_exit() {
    if !kvm_present("bench tails") {
        return;
    }
    let mut a = SMALL.to_vec();
    a.extend_from_slice(&["--only", "pio-user-out,mmio-user-read", "--format", "json"]);
    let o = run(&a);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stderr: {err}\nstdout: {out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
    for name in ["noop", "pio-user-out", "mmio-user-read"] {
        let s = v["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name && s["vmm"] == "trapline")
            .unwrap_or_else(|| panic!("{name} in {out}"));
        let t = &s["tails"];
        assert!(t.is_object(), "{name} has tails: {s}");
        assert!(t["error"].is_null(), "{name}: {t}");
        // The stated sample: min(final batch, the cap) per repeat.
        let cap = trapline_abi::TAILS_SAMPLE_CAP;
        let want: u64 = s["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["iterations"].as_u64().unwrap().min(cap))
            .sum();
        assert_eq!(t["count"].as_u64(), Some(want), "{name}: {t}");
        let q = |k: &str| t[k].as_u64().unwrap();
        assert!(
            q("min") <= q("p50") && q("p50") <= q("p99") && q("p99") <= q("max"),
            "{name}: {t}"
        );
        assert!(!t["buckets"].as_array().unwrap().is_empty());
    }
    // The tails view of the same kind of run, as a table.
    let mut b = SMALL.to_vec();
    b.extend_from_slice(&[
        "--only",
        "pio-user-out",
        "--view",
        "tails",
        "--format",
        "table",
    ]);
    let o = run(&b);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stderr: {err}");
    assert!(
        out.contains("p99.9") && out.contains("pio-user-out"),
        "{out}"
    );
}
