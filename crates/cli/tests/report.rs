//! `trapline report`: a saved run re-rendered in every view and format,
//! several files from one call, a comparison with its verdict — all
//! without /dev/kvm (TRAPLINE_KVM points nowhere in every call).

mod common;
use common::*;

#[path = "../../report/tests/common/mod.rs"]
mod sample;

use std::path::Path;
use std::process::Output;

use trapline_report::{render, Format, Report, View};

/// `trapline report ARGS` with no KVM to open.
fn report(args: &[&str]) -> Output {
    trapline()
        .env("TRAPLINE_KVM", "/nonexistent/kvm")
        // A pipe without COLUMNS: every view at its full width.
        .env_remove("COLUMNS")
        .arg("report")
        .args(args)
        .output()
        .expect("spawn trapline")
}

/// The full sample report, saved as `name`.
fn saved(name: &str) -> (std::path::PathBuf, Report) {
    let path = tmp(name);
    let r = sample::full_report();
    std::fs::write(&path, r.to_json()).unwrap();
    let loaded = Report::load(&path).unwrap();
    (path, loaded)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_saved_run_renders_every_view_in_every_format_without_kvm() {
    let (path, loaded) = saved("every.json");
    for view in View::all() {
        for format in Format::ALL {
            let o = report(&[s(&path), "--view", view.name(), "--format", format.name()]);
            assert_eq!(code(&o), 0, "{view} {format}: {}", stderr(&o));
            let out = stdout(&o);
            assert!(!out.is_empty(), "{view} {format}");
            // The default table is the one-screen summary; everything else
            // is exactly what the report crate renders.
            if !(format == Format::Table && view == View::All) {
                assert_eq!(out, render(&loaded, format, view), "{view} {format}");
            }
        }
    }
    // `md` for markdown; a results folder stands for its report.json.
    let dir = tmp("folder");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&path, dir.join("report.json")).unwrap();
    let o = report(&[s(&dir), "--format", "md", "--view", "paper"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("## KVM/ARM Table 3"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn one_call_writes_several_files_and_save_is_the_whole_report() {
    let (path, loaded) = saved("several.json");
    let (html, csv, md, json) = (
        tmp("out.html"),
        tmp("out.csv"),
        tmp("out.md"),
        tmp("out.json"),
    );
    let o = report(&[
        s(&path),
        "--view",
        "seeds",
        "--format",
        "kut",
        "--html",
        s(&html),
        "--export",
        &format!("csv:{}", s(&csv)),
        "--export",
        &format!("md:{}", s(&md)),
        "--save",
        s(&json),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let seeds = View::Seeds;
    assert_eq!(stdout(&o), render(&loaded, Format::Kut, seeds));
    assert_eq!(
        std::fs::read_to_string(&html).unwrap(),
        render(&loaded, Format::Html, seeds)
    );
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        render(&loaded, Format::Csv, seeds)
    );
    assert_eq!(
        std::fs::read_to_string(&md).unwrap(),
        render(&loaded, Format::Markdown, seeds)
    );
    // --save is the report, not the seeds view: it loads and compares.
    let back = Report::load(&json).expect("--save writes a report");
    assert_eq!(back.to_json(), loaded.to_json());
    let o = report(&[s(&json), "--compare", s(&path)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("Significant: a change is significant when"),
        "{out}"
    );
    assert!(
        out.trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("verdict: no change ("),
        "{out}"
    );
}

#[test]
fn a_bad_output_path_fails_before_anything_is_written() {
    let (path, _) = saved("bad-out.json");
    let ok = tmp("never.csv");
    for flag in ["--html", "--save", "--export"] {
        let bad = "/nonexistent/dir/out.file";
        let value = if flag == "--export" {
            format!("csv:{bad}")
        } else {
            bad.to_string()
        };
        let o = report(&[
            s(&path),
            "--export",
            &format!("csv:{}", s(&ok)),
            flag,
            &value,
        ]);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{flag}: {err}");
        assert!(stdout(&o).is_empty(), "{flag}: nothing rendered");
        assert!(!ok.exists(), "{flag}: nothing written");
        assert!(
            err.starts_with(&format!(
                "trapline report: error: cannot write {flag} {bad}: "
            )),
            "{err}"
        );
        assert!(err.contains("folder does not exist"), "{err}");
    }
}

#[test]
fn a_missing_or_foreign_file_is_a_usage_error() {
    let o = report(&["/nonexistent/run.json"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("/nonexistent/run.json"),
        "{}",
        stderr(&o)
    );
    let foreign = tmp("foreign.json");
    std::fs::write(&foreign, "{\"a\": 1}").unwrap();
    let o = report(&[s(&foreign)]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("schema"), "{}", stderr(&o));
    let (path, _) = saved("bad-view.json");
    let o = report(&[s(&path), "--view", "linux-boot"]);
    assert_eq!(
        code(&o),
        2,
        "linux-boot is an experiment, not a view of a run"
    );
}

#[test]
fn table_3_takes_an_x86_run_and_an_arm64_run_side_by_side() {
    let (x86, _) = saved("pair-x86.json");
    let mut arm = sample::full_report();
    arm.host.arch = Some(trapline_report::model::ARCH_ARM64.into());
    arm.host.cpu_model = "arm64 CPU implementer 0x00 part 0x000".into();
    arm.scenarios
        .retain(|s| s.name == "noop" || s.name == "hypercall");
    arm.push(
        trapline_report::ScenarioResult::new("sysreg-trap", "trap", "ID register trap")
            .with_samples(sample::samples(130.0, &[])),
    );
    arm.finish();
    let arm_path = tmp("pair-arm64.json");
    std::fs::write(&arm_path, arm.to_json()).unwrap();
    // Either order; each side takes its own architecture's scenario.
    for (a, b) in [(&x86, &arm_path), (&arm_path, &x86)] {
        let o = report(&[s(a), "--view", "paper", "--beside", s(b), "--format", "csv"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = stdout(&o);
        let trap = out.lines().find(|l| l.starts_with("Trap,")).unwrap();
        assert!(
            trap.contains(",cpuid,") && trap.contains(",sysreg-trap,"),
            "{trap}"
        );
    }
    let o = report(&[s(&x86), "--view", "paper", "--beside", s(&arm_path)]);
    assert!(
        stdout(&o).contains("trapline arm64 (ticks)"),
        "{}",
        stdout(&o)
    );
    // Two x86 runs, another view, or a format the pair lacks: usage errors.
    for args in [
        vec![s(&x86), "--view", "paper", "--beside", s(&x86)],
        vec![s(&x86), "--view", "doorbell", "--beside", s(&arm_path)],
        vec![
            s(&x86),
            "--view",
            "paper",
            "--beside",
            s(&arm_path),
            "--format",
            "html",
        ],
    ] {
        let o = report(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(
            stderr(&o).starts_with("trapline report: error: "),
            "{}",
            stderr(&o)
        );
    }
}
