//! The lab's workflow through real processes (issue 33), none of it needing
//! /dev/kvm (TRAPLINE_KVM points nowhere): `--list` says what each view
//! would run; contradictory or idle flags are refused or named; an empty
//! saved run is refused; `--compare` reads a folder in `bench` as in
//! `report`, warns when the runs differ and can fail a CI job; views fit
//! the width `COLUMNS` gives and pipes get every column.

mod common;
use common::*;

#[path = "../../report/tests/common/mod.rs"]
mod sample;

use std::path::{Path, PathBuf};
use std::process::Output;

use trapline_report::{render, Format, Report, View};

/// `trapline ARGS` with no KVM to open and no `COLUMNS` unless `columns`.
fn no_kvm(args: &[&str], columns: Option<&str>) -> Output {
    let mut cmd = trapline();
    cmd.env("TRAPLINE_KVM", "/nonexistent/kvm")
        .env_remove("COLUMNS")
        .args(args);
    if let Some(c) = columns {
        cmd.env("COLUMNS", c);
    }
    cmd.output().expect("spawn trapline")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `r` saved as `name`.
fn save(name: &str, r: &Report) -> PathBuf {
    let path = tmp(name);
    std::fs::write(&path, r.to_json()).unwrap();
    path
}

#[test]
#[cfg(target_arch = "x86_64")]
fn list_shows_what_each_view_would_run() {
    for view in View::all().map(|v| v.name().to_string()) {
        let o = no_kvm(&["bench", "--list", "--view", &view], None);
        assert_eq!(code(&o), 0, "--view {view}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("rows selected"), "--view {view}:\n{out}");
        assert!(
            out.contains("estimated time: about"),
            "--view {view}:\n{out}"
        );
    }
}

#[test]
#[cfg(target_arch = "x86_64")]
fn list_shows_what_each_experiment_would_run() {
    for command in ["linux-boot", "virtio-paths"] {
        let o = no_kvm(&[command, "--list"], None);
        assert_eq!(code(&o), 0, "{command}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(!out.contains("rows selected"), "{command}:\n{out}");
        assert!(out.contains("estimated time: about"), "{command}:\n{out}");
        assert!(out.contains("no probe scenario runs"), "{out}");
        assert!(!out.contains("pio-user-out"), "{command}:\n{out}");
    }
    let o = no_kvm(&["linux-boot", "--list", "--repeat", "2"], None);
    assert!(stdout(&o).contains("2 Linux boot(s)"), "{}", stdout(&o));
    let o = no_kvm(&["virtio-paths", "--list", "--quick"], None);
    assert!(
        stdout(&o).contains("--virtio-notify ioeventfd --virtio-irq irqfd"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn an_experiments_old_view_is_a_usage_error_naming_its_command() {
    for (view, command) in [
        ("linux-boot", "trapline linux-boot"),
        ("virtio", "trapline virtio-paths"),
    ] {
        let o = no_kvm(
            &["bench", "--list", "--view", view, "--only", "pio-*"],
            None,
        );
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!(
                "--view {view} is a command of its own now: run `{command}`"
            )),
            "{err}"
        );
    }
}

#[test]
fn contradictory_or_idle_flags_are_refused_or_named() {
    let o = no_kvm(&["bench", "--min-iters", "100", "--max-iters", "10"], None);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--min-iters 100 is above --max-iters 10"),
        "{}",
        stderr(&o)
    );
    #[cfg(target_arch = "x86_64")]
    {
        let o = no_kvm(
            &["bench", "--micro-bench", "micro-bench.flat", "--list"],
            None,
        );
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("does nothing on this x86_64 host"),
            "{}",
            stderr(&o)
        );
        let o = no_kvm(&["bench", "--list", "--view", "paper", "--verbose"], None);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("warning: --verbose does nothing outside"),
            "{}",
            stderr(&o)
        );
    }
    for cmd in [
        vec!["bench", "--fail-on-regression"],
        vec!["report", "x.json", "--fail-on-regression"],
    ] {
        let o = no_kvm(&cmd, None);
        assert_eq!(code(&o), 2, "{cmd:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--compare"), "{}", stderr(&o));
    }
}

#[test]
fn an_empty_saved_run_is_refused_with_a_reason() {
    let mut empty = sample::sample_report();
    empty.scenarios.clear();
    let path = save("empty-run.json", &empty);
    let full = save("full-run.json", &sample::full_report());
    for args in [
        vec!["report", s(&path)],
        vec!["report", s(&full), "--compare", s(&path)],
        vec!["bench", "--compare", s(&path)],
    ] {
        let o = no_kvm(&args, None);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("holds no scenarios"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!stdout(&o).contains("passed"), "{}", stdout(&o));
    }
}

/// `r` with `name`'s every sample three times slower.
fn slower(mut r: Report, name: &str) -> Report {
    for s in r.scenarios.iter_mut().filter(|s| s.name == name) {
        for x in &mut s.samples {
            x.cycles *= 3;
        }
    }
    r.finish();
    r
}

#[test]
fn compare_reads_a_folder_warns_when_runs_differ_and_can_fail_ci() {
    let mut old = sample::full_report();
    old.config.quick = true;
    old.scenarios.retain(|s| !s.name.starts_with("pci-"));
    let dir = tmp("old-run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("report.json"), old.to_json()).unwrap();
    let same = save("new-same.json", &sample::full_report());
    let worse = save("new-worse.json", &slower(sample::full_report(), "cpuid"));

    let o = no_kvm(&["report", s(&same), "--compare", s(&dir)], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("warning: the two runs differ (--quick: new no, old yes)"),
        "{out}"
    );
    let only = out.matches("only in").count();
    assert_eq!(only, 1, "one line counts them:\n{out}");
    assert!(out.contains("scenarios only in the new run"), "{out}");
    // Machines' formats keep stdout parseable: the warning is on stderr.
    let o = no_kvm(
        &["report", s(&same), "--compare", s(&dir), "--format", "csv"],
        None,
    );
    assert!(
        stderr(&o).contains("trapline report: warning: the compared runs differ (--quick"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("warning"), "{}", stdout(&o));
    let verbose = no_kvm(
        &["report", s(&same), "--compare", s(&dir), "--verbose"],
        None,
    );
    assert!(
        stdout(&verbose).matches("only in new").count() > 1,
        "{}",
        stdout(&verbose)
    );

    let o = no_kvm(
        &[
            "report",
            s(&same),
            "--compare",
            s(&dir),
            "--fail-on-regression",
        ],
        None,
    );
    assert_eq!(code(&o), 0, "no regression, status 0: {}", stdout(&o));
    let o = no_kvm(
        &[
            "report",
            s(&worse),
            "--compare",
            s(&same),
            "--fail-on-regression",
        ],
        None,
    );
    assert!(stdout(&o).contains("verdict: regressed"), "{}", stdout(&o));
    assert_eq!(code(&o), 9, "{}", stderr(&o));
    let o = no_kvm(&["report", s(&worse), "--compare", s(&same)], None);
    assert_eq!(
        code(&o),
        0,
        "without the flag a regression is reported, status 0"
    );

    // bench reads the same folder: past --compare, it stops only at /dev/kvm.
    let o = no_kvm(&["bench", "--compare", s(&dir), "--no-results"], None);
    assert_eq!(code(&o), 6, "{}", stderr(&o));
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn views_fit_the_width_columns_gives_and_pipes_keep_every_column() {
    let r = sample::full_report();
    let path = save("wide.json", &r);
    let loaded = Report::load(&path).unwrap();
    for view in ["paper", "seeds", "vmm", "all"] {
        let mut args = vec!["report", s(&path), "--view", view];
        if view == "all" {
            args.push("--verbose");
        }
        for width in ["80", "100"] {
            let o = no_kvm(&args, Some(width));
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            let w: usize = width.parse().unwrap();
            assert!(
                widest(&stdout(&o)) <= w,
                "--view {view} at COLUMNS={width}:\n{}",
                stdout(&o)
            );
        }
        if view != "all" {
            let o = no_kvm(&args, None);
            let v: View = view.parse().unwrap();
            assert_eq!(stdout(&o), render(&loaded, Format::Table, v), "{view}");
            assert!(widest(&stdout(&o)) > 100, "a pipe keeps the full width");
        }
    }
}
