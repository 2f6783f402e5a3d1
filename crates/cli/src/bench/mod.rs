//! `trapline bench`.

mod args;
mod flags;
#[cfg(target_arch = "x86_64")]
mod list;
pub mod results;

use std::time::Duration;

use trapline_lab::{dry_run, run_lab};
use trapline_machine::HostKvm;
use trapline_report::{render, Format, Report, View};

use crate::present::{self, Presentation};
pub use args::BenchArgs;
use args::{status, view, PeerArg, ViewArg};
use results::RunFolder;

/// `--list`: what this invocation would run, as a dry run: the view's own
/// experiment, or the probe scenarios the options select.
fn list(args: &BenchArgs) -> i32 {
    if let Some(text) = experiment_list(args) {
        out!("{text}");
        return status::OK;
    }
    let options = args.options();
    let plan = match dry_run(&options) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("trapline bench: error: {e}");
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

/// `--list` of `--view linux-boot` and `--view virtio` (`None`: a probe
/// run's view). Their repeats and lengths are the ones [`main`] gives them.
#[cfg(target_arch = "aarch64")]
fn experiment_list(_: &BenchArgs) -> Option<String> {
    // Refused before --list on arm64 (see `x86_only`).
    None
}

/// `--list` of `--view linux-boot` and `--view virtio` (`None`: a probe
/// run's view). Their repeats and lengths are the ones [`main`] gives them.
#[cfg(target_arch = "x86_64")]
fn experiment_list(args: &BenchArgs) -> Option<String> {
    match args.view {
        ViewArg::LinuxBoot => Some(
            list::linux_boot(
                args.linux_boot_repeat(),
                args.linux_smp,
                &args.linux_cpu,
                &args.linux_acpi,
                args.peer == Some(PeerArg::Qemu),
            )
            .text("linux-boot"),
        ),
        ViewArg::Virtio => {
            let linux = match std::env::var_os("TRAPLINE_LINUX_KERNEL") {
                None => Err("TRAPLINE_LINUX_KERNEL is not set".to_string()),
                Some(_) => trapline_peers::qemu::find().map(|_| args.linux_io_secs()),
            };
            Some(
                list::virtio(
                    &trapline_peers::experiments::virtio::PATHS,
                    args.virtio_reps(),
                    args.virtio_repeat(),
                    linux,
                )
                .text("virtio"),
            )
        }
        ViewArg::Report(_) => None,
    }
}

/// Run `trapline bench`; returns the process exit status.
pub fn main(args: BenchArgs) -> i32 {
    if let Some(why) = flags::contradiction(&args) {
        eprintln!("trapline bench: error: {why}");
        return status::USAGE;
    }
    for w in flags::ignored(&args) {
        eprintln!("trapline bench: warning: {w}");
    }
    #[cfg(target_arch = "aarch64")]
    if let Some(what) = x86_only(&args) {
        eprintln!(
            "trapline bench: error: {what} is not available on arm64 yet (the lab's probe \
             scenarios are; see docs/arm64.md)"
        );
        return status::USAGE;
    }
    if args.list {
        return list(&args);
    }
    #[cfg(target_arch = "x86_64")]
    if args.view == ViewArg::Virtio {
        return virtio_view(&args);
    }
    // Read the old report and check every output path first: a bad file
    // should fail before minutes of measuring, not after.
    let old = match &args.compare {
        Some(p) => match crate::report_cmd::load(p) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("trapline bench: error: --compare {}: {e}", p.display());
                return status::USAGE;
            }
        },
        None => None,
    };
    let outputs = args.outputs();
    if let Err(e) = outputs.check() {
        eprintln!("trapline bench: error: {e}");
        return status::USAGE;
    }
    if let Some(flat) = &args.micro_bench {
        if !flat.is_file() {
            eprintln!(
                "trapline bench: error: --micro-bench {}: no such file (give a kvm-unit-tests build's arm/micro-bench.flat)",
                flat.display()
            );
            return status::USAGE;
        }
    }
    let mut options = args.options();
    match args.peer {
        Some(PeerArg::Qemu) => match trapline_peers::qemu::find() {
            Ok(q) => options.peer = Some(q),
            Err(e) => {
                eprintln!("trapline bench: error: {e}");
                return status::USAGE;
            }
        },
        Some(PeerArg::Kvmtool) => match trapline_peers::kvmtool::find() {
            Ok(k) => options.kvmtool = Some(k),
            Err(e) => {
                eprintln!("trapline bench: error: {e}");
                return status::USAGE;
            }
        },
        None => {}
    }
    // From here on SIGINT, SIGTERM and SIGHUP stop the lab between VM runs
    // (linux-boot: between boots) and keep what it measured
    // (docs/bench.md#stopping-a-run).
    if let Err(e) = trapline_machine::signals::watch() {
        eprintln!("trapline bench: warning: cannot handle stop signals (one would end the run keeping nothing): {e}");
    }
    #[cfg(target_arch = "x86_64")]
    if args.view == ViewArg::LinuxBoot {
        let repeat = args.linux_boot_repeat();
        // A boot takes ~20 s on an idle host: give the default VM timeout
        // room for a loaded one.
        let timeout = args.timeout.max(Duration::from_secs(600));
        return trapline_peers::experiments::linux_boot::main(
            args.linux_smp,
            repeat,
            &args.linux_cpu,
            &args.linux_acpi,
            options.peer.as_ref(),
            timeout,
            crate::terminal::view_columns(),
        );
    }
    // Before any VM: a results folder that cannot be made fails now.
    let folder = if args.no_results {
        None
    } else {
        match RunFolder::create(&args.results_dir, now_secs()) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("trapline bench: error: {e}");
                return status::USAGE;
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
            eprintln!("trapline bench: error: {e}");
            return status::NO_KVM;
        }
    };
    let mut report = match run_lab(&kvm, &options) {
        Ok(r) => r,
        Err(e) => {
            abandon(folder);
            eprintln!("trapline bench: error: {e}");
            return if let Some(sig) = trapline_machine::signals::received() {
                trapline_machine::signals::exit_status(sig)
            } else if e.is_usage() {
                status::USAGE
            } else {
                status::LAB_ERROR
            };
        }
    };
    // Stopped before anything finished: no report, and no empty folder.
    if let (Some(p), true) = (&report.partial, report.scenarios.is_empty()) {
        abandon(folder);
        eprintln!(
            "trapline bench: stopped by {} before any scenario finished: nothing to report, no results folder kept",
            p.stopped_by
        );
        return stop_status().unwrap_or(status::LAB_ERROR);
    }
    if let (Some(flat), None) = (&args.micro_bench, &report.partial) {
        add_micro_bench(&mut report, flat, &options, args.timeout);
    }
    let mut code = status::OK;
    let files = match folder.map(|f| keep_results(&f, &report)) {
        Some(Ok(files)) => files,
        Some(Err(e)) => {
            eprintln!("trapline bench: error: {e}");
            code = status::USAGE;
            Vec::new()
        }
        None => Vec::new(),
    };
    present::print(
        &report,
        Presentation {
            format: args.format.format(),
            view: view(args.view),
            verbose: args.verbose,
            command: "trapline bench",
        },
        &files,
    );
    match outputs.write(&report, view(args.view)) {
        Ok(written) => {
            for p in written {
                eprintln!("trapline bench: wrote {}", p.display());
            }
        }
        Err(e) => {
            eprintln!("trapline bench: error: {e}");
            return status::USAGE;
        }
    }
    let regressed = old.is_some_and(|old| {
        present::print_comparison(
            &report,
            &old,
            args.format.format(),
            args.verbose,
            "trapline bench",
        )
    });
    if let Some(p) = &report.partial {
        let at = files.first().map_or_else(
            || "not kept (--no-results)".to_string(),
            |f| format!("in {f}"),
        );
        eprintln!("trapline bench: {}; the partial report is {at}", p.note());
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
            eprintln!(
                "trapline bench: the comparison's verdict is regressed (--fail-on-regression)"
            );
            return status::REGRESSED;
        }
        code
    } else {
        eprintln!(
            "trapline bench: {} scenario(s) failed their check: {}",
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
    options: &trapline_lab::LabOptions,
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
        eprintln!("trapline bench: warning: results folder kept, but not linked as latest: {e}");
    }
    Ok(paths.iter().map(|p| p.display().to_string()).collect())
}

/// What of `args` the arm64 lab does not have yet (`None`: it runs).
#[cfg(target_arch = "aarch64")]
fn x86_only(args: &BenchArgs) -> Option<&'static str> {
    match args.view {
        ViewArg::Virtio => Some("--view virtio"),
        ViewArg::LinuxBoot => Some("--view linux-boot"),
        _ => None,
    }
}

/// `--view virtio`: builtin:vblk through child `trapline run`s.
#[cfg(target_arch = "x86_64")]
fn virtio_view(args: &BenchArgs) -> i32 {
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("trapline bench: error: cannot find the trapline binary to run children");
        return status::LAB_ERROR;
    };
    if let Err(e) = HostKvm::open_from_env() {
        eprintln!("trapline bench: error: {e}");
        return status::NO_KVM;
    }
    let opts = trapline_peers::experiments::virtio::VirtioOptions {
        exe,
        reps: args.virtio_reps(),
        repeat: args.virtio_repeat(),
        timeout: args.timeout,
        seccomp: !args.no_seccomp,
    };
    // SIGINT, SIGTERM and SIGHUP end the view between its children,
    // keeping the paths measured whole (docs/bench.md#stopping-a-run).
    if let Err(e) = trapline_machine::signals::watch() {
        eprintln!("trapline bench: warning: cannot handle stop signals (one would end the run keeping nothing): {e}");
    }
    let measured = trapline_peers::experiments::virtio::measure(&opts);
    if let (Some(sig), Ok(results)) = (trapline_machine::signals::received(), &measured) {
        let fit = |text: String| trapline_report::fit_text(&text, crate::terminal::view_columns());
        if !results.is_empty() {
            out!(
                "{}",
                fit(trapline_peers::experiments::virtio::render(
                    results,
                    &opts,
                    "not run: the run was stopped"
                ))
            );
        }
        eprintln!(
            "trapline bench: partial run: stopped by {} after {} of {} notify x irq paths (the one it cut short is left out)",
            trapline_machine::signals::name(sig),
            results.len(),
            trapline_peers::experiments::virtio::PATHS.len()
        );
        return trapline_machine::signals::exit_status(sig);
    }
    match measured {
        Ok(results) => {
            let qemu = qemu_rows(args, &opts);
            let note = match &qemu {
                Ok(_) => "below (Linux's virtio-blk driver and vblktest: another guest than builtin:vblk, compare paths within a VMM)".to_string(),
                Err(e) => format!("not run: {e}"),
            };
            // Its prose fits the terminal; pipes keep every line whole.
            let fit =
                |text: String| trapline_report::fit_text(&text, crate::terminal::view_columns());
            out!(
                "{}",
                fit(trapline_peers::experiments::virtio::render(
                    &results, &opts, &note
                ))
            );
            if let Ok(rows) = qemu {
                let rows: Vec<_> = rows
                    .into_iter()
                    .map(|(on, r)| (format!("ioeventfd={}", if on { "on" } else { "off" }), r))
                    .collect();
                outln!();
                out!(
                    "{}",
                    fit(trapline_peers::experiments::virtio::render_linux(
                        "QEMU microvm + Linux",
                        &rows
                    ))
                );
                // The same guest on trapline's paths.
                match linux_rows(args, &opts) {
                    Ok(rows) => {
                        outln!();
                        out!(
                            "{}",
                            fit(trapline_peers::experiments::virtio::render_linux(
                                "trapline + Linux",
                                &rows
                            ))
                        );
                    }
                    Err(e) => outln!("\ntrapline + Linux: not run: {e}"),
                }
            }
            status::OK
        }
        Err(e) => {
            eprintln!("trapline bench: error: {e}");
            status::SCENARIO_FAILED
        }
    }
}

/// QEMU microvm with Linux and vblktest, ioeventfd on and off: needs QEMU
/// and a Linux kernel (`TRAPLINE_LINUX_KERNEL`, an uncompressed vmlinux
/// with PVH entry, like the project's tiny Linux of docs/linux.md).
#[cfg(target_arch = "x86_64")]
fn qemu_rows(
    args: &BenchArgs,
    opts: &trapline_peers::experiments::virtio::VirtioOptions,
) -> Result<Vec<(bool, Vec<trapline_peers::experiments::virtio::LinuxBench>)>, String> {
    let qemu = trapline_peers::qemu::find()?;
    let kernel = std::env::var_os("TRAPLINE_LINUX_KERNEL")
        .map(std::path::PathBuf::from)
        .ok_or("set TRAPLINE_LINUX_KERNEL to an uncompressed x86 vmlinux with a PVH entry (docs/linux.md says what it holds)")?;
    let disk =
        std::env::temp_dir().join(format!("trapline-lab-qemu-disk-{}.img", std::process::id()));
    let f = std::fs::File::create(&disk).map_err(|e| format!("{}: {e}", disk.display()))?;
    f.set_len(64 << 20)
        .map_err(|e| format!("{}: {e}", disk.display()))?;
    let secs = args.linux_io_secs();
    // A boot takes tens of seconds of emulated kernel code on these hosts.
    let timeout = opts.timeout.max(Duration::from_secs(900));
    let rows = [true, false]
        .into_iter()
        .map(|on| {
            trapline_peers::experiments::virtio::qemu_linux(
                &qemu.binary,
                &kernel,
                &disk,
                on,
                secs,
                timeout,
            )
            .map(|r| (on, r))
        })
        .collect();
    let _ = std::fs::remove_file(&disk);
    rows
}

/// trapline's four paths with Linux and vblktest (the guest QEMU runs).
#[cfg(target_arch = "x86_64")]
fn linux_rows(
    args: &BenchArgs,
    opts: &trapline_peers::experiments::virtio::VirtioOptions,
) -> Result<Vec<(String, Vec<trapline_peers::experiments::virtio::LinuxBench>)>, String> {
    let kernel = std::env::var_os("TRAPLINE_LINUX_KERNEL")
        .map(std::path::PathBuf::from)
        .ok_or("TRAPLINE_LINUX_KERNEL is not set")?;
    let disk = std::env::temp_dir().join(format!(
        "trapline-lab-linux-disk-{}.img",
        std::process::id()
    ));
    let f = std::fs::File::create(&disk).map_err(|e| format!("{}: {e}", disk.display()))?;
    f.set_len(64 << 20)
        .map_err(|e| format!("{}: {e}", disk.display()))?;
    let secs = args.linux_io_secs();
    let timeout = opts.timeout.max(Duration::from_secs(900));
    let rows = trapline_peers::experiments::virtio::PATHS
        .into_iter()
        .map(|p| {
            trapline_peers::experiments::virtio::trapline_linux(
                &opts.exe, &kernel, &disk, p, secs, timeout,
            )
            .map(|r| (format!("{} + {}", p.0, p.1), r))
        })
        .collect();
    let _ = std::fs::remove_file(&disk);
    rows
}
