//! `trapline bench`: check the arguments, list or measure, keep the
//! results folder, present the report, compare it, and end with the status
//! the run earned.

mod args;
mod flags;
pub mod results;

use std::time::Duration;

use trapline_lab::{dry_run, run_lab, LabOptions};
use trapline_machine::HostKvm;
use trapline_report::{render, Format, Report, View};

use crate::outputs::Outputs;
use crate::present::{self, Presentation};
pub use args::BenchArgs;
pub(crate) use args::DEFAULTS;
use args::{status, view, PeerArg};
use results::RunFolder;

/// The command's name, as its messages begin.
const COMMAND: &str = "trapline bench";

/// `--list`: what this invocation would run, as a dry run: the probe
/// scenarios the options select.
fn list(args: &BenchArgs) -> i32 {
    let options = args.options();
    let plan = match dry_run(&options) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{COMMAND}: error: {e}");
            return status::USAGE;
        }
    };
    for (vmm, name, group, path) in &plan.rows {
        outln!("{vmm:<10} {name:<24} {group:<10} {path}");
    }
    outln!();
    let selection = match (&args.only, args.view_selection()) {
        (Some(only), _) => Some(format!("--only {only:?}")),
        (None, Some(_)) => Some(format!("--view {}", view(args.view))),
        (None, None) => None,
    };
    out!("{}", plan.summary(&options, selection.as_deref()));
    status::OK
}

/// Run `trapline bench`; returns the process exit status.
pub fn main(args: BenchArgs) -> i32 {
    if let Err(code) = check_flags(&args) {
        return code;
    }
    if args.list {
        return list(&args);
    }
    let (old, outputs) = match read_inputs(&args) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    let options = match lab_options(&args) {
        Ok(o) => o,
        Err(code) => return code,
    };
    // From here on SIGINT, SIGTERM and SIGHUP stop the lab between VM runs
    // and keep what it measured (docs/bench.md#stopping-a-run).
    if let Err(e) = trapline_machine::signals::watch() {
        eprintln!("{COMMAND}: warning: cannot handle stop signals (one would end the run keeping nothing): {e}");
    }
    let (report, folder) = match measure(&args, &options) {
        Ok(measured) => measured,
        Err(code) => return code,
    };
    let (files, code) = keep(folder, &report);
    if let Err(code) = show(&args, &report, &outputs, &files) {
        return code;
    }
    let regressed = old.is_some_and(|old| {
        present::print_comparison(&report, &old, args.format.format(), args.verbose, COMMAND)
    });
    verdict(&args, &report, &files, regressed, code)
}

/// A `--view` that became a command of its own, a flag set that
/// contradicts itself (a usage error each), and the flags the view
/// ignores (a warning each).
fn check_flags(args: &BenchArgs) -> Result<(), i32> {
    if let Some(command) = args.view.moved_to() {
        let old = clap::ValueEnum::to_possible_value(&args.view)
            .map_or_else(String::new, |v| v.get_name().to_string());
        eprintln!(
            "{COMMAND}: error: --view {old} is a command of its own now: run `{command}` (`{command} --help` lists its flags)"
        );
        return Err(status::USAGE);
    }
    if let Some(why) = flags::contradiction(args) {
        eprintln!("{COMMAND}: error: {why}");
        return Err(status::USAGE);
    }
    for w in flags::ignored(args) {
        eprintln!("{COMMAND}: warning: {w}");
    }
    Ok(())
}

/// Reads the old report and checks every output path and input file
/// first: a bad file should fail before minutes of measuring, not after.
fn read_inputs(args: &BenchArgs) -> Result<(Option<Report>, Outputs), i32> {
    let old = match &args.compare {
        Some(p) => match crate::report_cmd::load(p) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("{COMMAND}: error: --compare {}: {e}", p.display());
                return Err(status::USAGE);
            }
        },
        None => None,
    };
    let outputs = args.outputs();
    if let Err(e) = outputs.check() {
        eprintln!("{COMMAND}: error: {e}");
        return Err(status::USAGE);
    }
    if let Some(flat) = &args.micro_bench {
        if !flat.is_file() {
            eprintln!(
                "{COMMAND}: error: --micro-bench {}: no such file (give a kvm-unit-tests build's arm/micro-bench.flat)",
                flat.display()
            );
            return Err(status::USAGE);
        }
    }
    Ok((old, outputs))
}

/// The lab options the arguments ask for, with the peer found.
fn lab_options(args: &BenchArgs) -> Result<LabOptions, i32> {
    let mut options = args.options();
    let found = match args.peer {
        Some(PeerArg::Qemu) => trapline_peers::qemu::find().map(|q| options.peer = Some(q)),
        Some(PeerArg::Kvmtool) => {
            trapline_peers::kvmtool::find().map(|k| options.kvmtool = Some(k))
        }
        None => Ok(()),
    };
    if let Err(e) = found {
        eprintln!("{COMMAND}: error: {e}");
        return Err(status::USAGE);
    }
    Ok(options)
}

/// Runs the lab into a report (and kvm-unit-tests' micro-bench after it),
/// with the run's results folder made first; a run that failed, or was
/// stopped before anything finished, keeps no folder.
fn measure(args: &BenchArgs, options: &LabOptions) -> Result<(Report, Option<RunFolder>), i32> {
    // Before any VM: a results folder that cannot be made fails now.
    let folder = if args.no_results {
        None
    } else {
        match RunFolder::create(&args.results_dir, now_secs()) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("{COMMAND}: error: {e}");
                return Err(status::USAGE);
            }
        }
    };
    let abandon = |folder: Option<RunFolder>| {
        if let Some(f) = folder {
            f.abandon();
        }
    };
    let kvm = match HostKvm::open_from_env() {
        Ok(k) => k,
        Err(e) => {
            abandon(folder);
            eprintln!("{COMMAND}: error: {e}");
            return Err(status::NO_KVM);
        }
    };
    let mut report = match run_lab(&kvm, options) {
        Ok(r) => r,
        Err(e) => {
            abandon(folder);
            eprintln!("{COMMAND}: error: {e}");
            return Err(if let Some(sig) = trapline_machine::signals::received() {
                trapline_machine::signals::exit_status(sig)
            } else if e.is_usage() {
                status::USAGE
            } else {
                status::LAB_ERROR
            });
        }
    };
    // Stopped before anything finished: no report, and no empty folder.
    if let (Some(p), true) = (&report.partial, report.scenarios.is_empty()) {
        abandon(folder);
        eprintln!(
            "{COMMAND}: stopped by {} before any scenario finished: nothing to report, no results folder kept",
            p.stopped_by
        );
        return Err(stop_status().unwrap_or(status::LAB_ERROR));
    }
    if let (Some(flat), None) = (&args.micro_bench, &report.partial) {
        add_micro_bench(&mut report, flat, options, args.timeout);
    }
    Ok((report, folder))
}

/// Keeps the report in its results folder: the files as the summary names
/// them, and the status so far (a folder that could not be written is a
/// usage error, reported after the report is shown).
fn keep(folder: Option<RunFolder>, report: &Report) -> (Vec<String>, i32) {
    match folder.map(|f| keep_results(&f, report)) {
        Some(Ok(files)) => (files, status::OK),
        Some(Err(e)) => {
            eprintln!("{COMMAND}: error: {e}");
            (Vec::new(), status::USAGE)
        }
        None => (Vec::new(), status::OK),
    }
}

/// Prints the report's view and writes the files asked for.
fn show(args: &BenchArgs, report: &Report, outputs: &Outputs, files: &[String]) -> Result<(), i32> {
    present::print(
        report,
        Presentation {
            format: args.format.format(),
            view: view(args.view),
            verbose: args.verbose,
            command: COMMAND,
        },
        files,
    );
    match outputs.write(report, view(args.view)) {
        Ok(written) => {
            for p in written {
                eprintln!("{COMMAND}: wrote {}", p.display());
            }
            Ok(())
        }
        Err(e) => {
            eprintln!("{COMMAND}: error: {e}");
            Err(status::USAGE)
        }
    }
}

/// The status the run ends with: a partial run says where it is kept and
/// ends as its stop signal asks; a failed check beats a regression, which
/// counts only with `--fail-on-regression`.
fn verdict(args: &BenchArgs, report: &Report, files: &[String], regressed: bool, code: i32) -> i32 {
    if let Some(p) = &report.partial {
        let at = files.first().map_or_else(
            || "not kept (--no-results)".to_string(),
            |f| format!("in {f}"),
        );
        eprintln!("{COMMAND}: {}; the partial report is {at}", p.note());
    }
    // A signal that came after the last VM run still ends the process
    // with its status: the caller asked it to stop.
    if let Some(s) = stop_status() {
        return s;
    }
    let failed: Vec<&str> = report
        .scenarios
        .iter()
        .filter(|s| s.status == trapline_report::Status::Failed)
        .map(|s| s.name.as_str())
        .collect();
    if failed.is_empty() {
        if regressed && args.fail_on_regression && code == status::OK {
            eprintln!("{COMMAND}: the comparison's verdict is regressed (--fail-on-regression)");
            return status::REGRESSED;
        }
        code
    } else {
        eprintln!(
            "{COMMAND}: {} scenario(s) failed their check: {}",
            failed.len(),
            failed.join(", ")
        );
        status::SCENARIO_FAILED
    }
}

/// kvm-unit-tests' micro-bench on trapline (this binary, `trapline run`)
/// and on the peer, its lines as rows after the probe's.
fn add_micro_bench(
    report: &mut trapline_report::Report,
    flat: &std::path::Path,
    options: &LabOptions,
    timeout: Duration,
) {
    use trapline_peers::micro_bench;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the trapline binary: {e}"));
    let mut rows = micro_bench::rows(
        &exe.and_then(|exe| micro_bench::run_on_trapline(&exe, flat, timeout)),
        trapline_report::TRAPLINE_VMM,
    );
    if let Some(q) = &options.peer {
        rows.extend(micro_bench::rows(
            &micro_bench::run_on_qemu(q, flat, timeout),
            "qemu",
        ));
    }
    if let Some(k) = &options.kvmtool {
        rows.extend(micro_bench::rows(
            &micro_bench::run_on_kvmtool(k, flat, timeout),
            "kvmtool",
        ));
    }
    for mut r in rows {
        r.compute(report.host.tsc_khz);
        report.push(r);
    }
}

/// 128 + the stop signal received, if one was.
fn stop_status() -> Option<i32> {
    trapline_machine::signals::received().map(trapline_machine::signals::exit_status)
}

/// Seconds since the epoch, now.
fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Writes the full report (the JSON `--save` writes, and the default
/// view's HTML) into the run's folder and points `latest` at it; returns
/// the two paths as the summary names them.
fn keep_results(folder: &RunFolder, report: &Report) -> Result<Vec<String>, results::ResultsError> {
    let paths = folder.write(&report.to_json(), &render(report, Format::Html, View::All))?;
    if let Err(e) = folder.point_latest() {
        eprintln!("{COMMAND}: warning: results folder kept, but not linked as latest: {e}");
    }
    Ok(paths.iter().map(|p| p.display().to_string()).collect())
}
