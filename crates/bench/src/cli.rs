//! `trapline bench`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use trapline_kvm::HostKvm;
use trapline_report::{
    compare, render, render_comparison, summary, summary_header, Format, Report, SummaryOptions,
    View,
};

use crate::results::RunFolder;
use crate::runner::{listing, run_lab, LabOptions};

/// Exit statuses of `trapline bench` (shared meanings with `trapline run`).
pub mod status {
    /// Every scenario ran and passed its check (unsupported ones included).
    pub const OK: i32 = 0;
    /// At least one scenario failed its check.
    pub const SCENARIO_FAILED: i32 = 1;
    /// Bad command line or unreadable input file.
    pub const USAGE: i32 = 2;
    /// /dev/kvm is missing or not accessible.
    pub const NO_KVM: i32 = 6;
    /// The lab itself could not run.
    pub const LAB_ERROR: i32 = 8;
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    Table,
    Json,
    Markdown,
    Csv,
    Kut,
    // Bencher Metric Format JSON (median, min, max cycles per scenario).
    Bmf,
    // TAP version 13, one test point per scenario.
    Tap,
}

/// `--view`: one of the report's views (the seed tables' among them, one
/// per seed file), or an experiment that is not a probe run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewArg {
    /// The lab's report, shown so.
    Report(View),
    /// Boot the shared tiny Linux and time it (beside QEMU microvm with
    /// `--peer qemu`); not a probe run.
    LinuxBoot,
    /// virtio-blk I/O on each notify × irq path (its own experiment).
    Virtio,
}

/// Every `--view` value: the report's views, then the experiments.
static VIEW_ARGS: std::sync::LazyLock<Vec<ViewArg>> = std::sync::LazyLock::new(|| {
    View::all()
        .map(ViewArg::Report)
        .chain([ViewArg::LinuxBoot, ViewArg::Virtio])
        .collect()
});

// By hand rather than derived: the report's views are a list (a seed
// table is a data file), not variants written here.
impl clap::ValueEnum for ViewArg {
    fn value_variants<'a>() -> &'a [Self] {
        &VIEW_ARGS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            ViewArg::Report(v) => PossibleValue::new(v.name()),
            ViewArg::LinuxBoot => PossibleValue::new("linux-boot").help(
                "Boot the shared tiny Linux and time it (beside QEMU microvm with `--peer \
                 qemu`); not a probe run",
            ),
            ViewArg::Virtio => PossibleValue::new("virtio")
                .help("virtio-blk I/O on each notify × irq path (its own experiment)"),
        })
    }
}

/// `trapline bench` arguments.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Fresh-VM repeats per scenario.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// TSC cycles a timed loop must last (the iteration count doubles until it does).
    #[arg(long, value_name = "CYCLES", value_parser = clap::value_parser!(u64).range(1000..))]
    pub goal: Option<u64>,
    /// Smallest timed loop.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub min_iters: u64,
    /// Largest timed loop.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..=(u32::MAX as u64)))]
    pub max_iters: u64,
    /// Untimed iterations before timing starts.
    #[arg(long, default_value_t = 16)]
    pub warmup: u64,
    /// Only scenarios matching these comma-separated globs (`pio-*`, `raw-kvm:*`); noop is always kept.
    #[arg(long, value_name = "PATTERN")]
    pub only: Option<String>,
    /// Fewer repeats and shorter loops (under a minute on a small host).
    #[arg(long)]
    pub quick: bool,
    /// List the scenarios and exit.
    #[arg(long)]
    pub list: bool,
    /// Output format on stdout (`table`: a one-screen summary; see --verbose).
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// With the table format and the default view: the full table (every
    /// row, the floor ladder's, min/max, its pieces, formulas and every
    /// check text) after the summary's header, instead of the summary.
    #[arg(long)]
    pub verbose: bool,
    /// Which rows and published numbers to show.
    #[arg(long, value_enum, default_value = "all")]
    pub view: ViewArg,
    /// Also write a self-contained HTML report with charts here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the JSON report here (for --compare later).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Where each run keeps its full report: `DIR/<UTC time>/report.json`
    /// and `report.html`, with `DIR/latest` pointing at the newest (checked
    /// before anything is measured).
    #[arg(long, value_name = "DIR", default_value = crate::results::DEFAULT_PARENT)]
    pub results_dir: PathBuf,
    /// Keep no results folder (only what --save and --html ask for).
    #[arg(long, conflicts_with = "results_dir")]
    pub no_results: bool,
    /// Compare with a saved JSON report: per-scenario ratio, changes beyond the spread flagged.
    #[arg(long, value_name = "OLD.json")]
    pub compare: Option<PathBuf>,
    /// Longest one probe VM may run, in seconds.
    #[arg(long, default_value = "120", value_parser = parse_secs)]
    pub timeout: Duration,
    /// No progress bar on stderr.
    #[arg(long)]
    pub no_progress: bool,
    /// Run the VMs without seccomp filters (to debug with strace or gdb).
    #[arg(long)]
    pub no_seccomp: bool,
    /// Also run the same probe on a peer VMM, interleaved, for a side-by-side ratio.
    #[arg(long, value_enum)]
    pub peer: Option<PeerArg>,
    /// vCPUs for `--view linux-boot`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub linux_smp: u32,
    /// The CPU model `--view linux-boot` gives the guest on every VMM
    /// (trapline's `--cpu`, QEMU's `-cpu`): `qemu64,-cx16` (the shared
    /// README's), `host`, …
    #[arg(long, default_value = crate::linux_boot::DEFAULT_CPU)]
    pub linux_cpu: String,
    /// Run trapline's VMs without the exit profile: no handling times per
    /// exit, and no `stat-overhead` row.
    #[arg(long)]
    pub no_stat: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerArg {
    /// qemu-system-x86_64 -accel kvm (Debian's qemu-system-x86 package).
    Qemu,
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(v > 0.0 && v <= 86_400.0) {
        return Err(format!("'{s}': must be more than 0 and at most 86400"));
    }
    Ok(Duration::from_secs_f64(v))
}

impl BenchArgs {
    /// The lab options these arguments ask for.
    pub fn options(&self) -> LabOptions {
        let (repeat, goal) = if self.quick {
            (3, 1 << 23)
        } else {
            (5, 1 << 25)
        };
        LabOptions {
            repeat: self.repeat.unwrap_or(repeat),
            goal_cycles: self.goal.unwrap_or(goal),
            min_iters: self.min_iters,
            max_iters: self.max_iters.max(self.min_iters),
            warmup: self.warmup,
            only: self.only.clone(),
            quick: self.quick,
            vm_timeout: self.timeout,
            hypercall_timeout: Duration::from_secs(if self.quick { 1 } else { 2 }),
            progress: !self.no_progress && std::io::stderr().is_terminal(),
            seccomp: !self.no_seccomp,
            footprint_exe: std::env::current_exe().ok(),
            peer: None,
            stat: !self.no_stat,
        }
    }
}

fn format(f: FormatArg) -> Format {
    match f {
        FormatArg::Table => Format::Table,
        FormatArg::Json => Format::Json,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Csv => Format::Csv,
        FormatArg::Kut => Format::Kut,
        FormatArg::Bmf => Format::Bmf,
        FormatArg::Tap => Format::Tap,
    }
}

fn view(v: ViewArg) -> View {
    match v {
        ViewArg::Report(v) => v,
        // Handled before any probe run (see `main`).
        ViewArg::LinuxBoot => View::All,
        // Never reaches the report: `--view virtio` runs its own experiment.
        ViewArg::Virtio => View::All,
    }
}

/// Run `trapline bench`; returns the process exit status.
pub fn main(args: BenchArgs) -> i32 {
    if args.list {
        for (vmm, name, group, path) in listing() {
            println!("{:<10} {:<24} {:<10} {path}", vmm, name, group);
        }
        return status::OK;
    }
    if args.view == ViewArg::Virtio {
        return virtio_view(&args);
    }
    // Read the old report first: a bad file should fail before minutes of
    // measuring, not after.
    let old = match &args.compare {
        Some(p) => match Report::load(p) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("trapline bench: error: --compare {}: {e}", p.display());
                return status::USAGE;
            }
        },
        None => None,
    };
    let mut options = args.options();
    if args.peer == Some(PeerArg::Qemu) {
        match crate::peer::find() {
            Ok(q) => options.peer = Some(q),
            Err(e) => {
                eprintln!("trapline bench: error: {e}");
                return status::USAGE;
            }
        }
    }
    if args.view == ViewArg::LinuxBoot {
        // Five interleaved pairs by default: enough for a median and a
        // range that say something on a host whose load drifts.
        let repeat = args.repeat.unwrap_or(if args.quick { 1 } else { 5 });
        // A boot takes ~20 s on an idle host: give the default VM timeout
        // room for a loaded one.
        let timeout = args.timeout.max(Duration::from_secs(600));
        return crate::linux_boot::main(
            args.linux_smp,
            repeat,
            &args.linux_cpu,
            options.peer.as_ref(),
            timeout,
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
    let report = match run_lab(&kvm, &options) {
        Ok(r) => r,
        Err(e) => {
            abandon(folder);
            eprintln!("trapline bench: error: {e}");
            return if e.is_usage() {
                status::USAGE
            } else {
                status::LAB_ERROR
            };
        }
    };
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
    print_report(&args, &report, &files);
    for (path, fmt) in [(&args.html, Format::Html), (&args.save, Format::Json)] {
        if let Some(p) = path {
            if let Err(e) = std::fs::write(p, render(&report, fmt, view(args.view))) {
                eprintln!("trapline bench: error: cannot write {}: {e}", p.display());
                return status::USAGE;
            }
            eprintln!("trapline bench: wrote {}", p.display());
        }
    }
    if let Some(old) = old {
        println!();
        print!(
            "{}",
            render_comparison(&compare(&report, &old), format(args.format))
        );
    }
    let failed: Vec<&str> = report
        .scenarios
        .iter()
        .filter(|s| s.status == trapline_report::Status::Failed)
        .map(|s| s.name.as_str())
        .collect();
    if failed.is_empty() {
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

/// Seconds since the epoch, now.
fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Writes the full report (every view's data: the JSON `--save` writes for
/// the default view, and its HTML) into the run's folder and points
/// `latest` at it; returns the two paths as the summary names them.
fn keep_results(
    folder: &RunFolder,
    report: &Report,
) -> Result<Vec<String>, crate::results::ResultsError> {
    let paths = folder.write(
        &render(report, Format::Json, View::All),
        &render(report, Format::Html, View::All),
    )?;
    if let Err(e) = folder.point_latest() {
        eprintln!("trapline bench: warning: results folder kept, but not linked as latest: {e}");
    }
    Ok(paths.iter().map(|p| p.display().to_string()).collect())
}

/// What goes to stdout: the summary by default, the full table with
/// `--verbose`, any other format or view as it always was (the results'
/// paths then go to stderr, out of the machine-readable output).
fn print_report(args: &BenchArgs, report: &Report, files: &[String]) {
    let default_view = args.view == ViewArg::Report(View::All);
    if args.format != FormatArg::Table || !default_view {
        print!("{}", render(report, format(args.format), view(args.view)));
        for f in files {
            eprintln!("trapline bench: wrote {f}");
        }
        return;
    }
    let width = crate::terminal::stdout_columns();
    if args.verbose {
        print!("{}", summary_header(report, width));
        println!();
        print!("{}", render(report, Format::Table, View::All));
        if !files.is_empty() {
            println!(
                "
Full report: {}",
                files.join(", ")
            );
        }
        return;
    }
    print!(
        "{}",
        summary(
            report,
            &SummaryOptions {
                width,
                files: files.to_vec(),
            }
        )
    );
}

/// `--view virtio`: builtin:vblk through child `trapline run`s.
fn virtio_view(args: &BenchArgs) -> i32 {
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("trapline bench: error: cannot find the trapline binary to run children");
        return status::LAB_ERROR;
    };
    if let Err(e) = HostKvm::open_from_env() {
        eprintln!("trapline bench: error: {e}");
        return status::NO_KVM;
    }
    let opts = crate::virtio::VirtioOptions {
        exe,
        reps: if args.quick { 100 } else { 500 },
        repeat: args.repeat.unwrap_or(if args.quick { 1 } else { 3 }),
        timeout: args.timeout,
        seccomp: !args.no_seccomp,
    };
    match crate::virtio::measure(&opts) {
        Ok(results) => {
            let qemu = qemu_rows(args, &opts);
            let note = match &qemu {
                Ok(_) => "below (Linux's virtio-blk driver and vblktest: another guest than builtin:vblk, compare paths within a VMM)".to_string(),
                Err(e) => format!("not run: {e}"),
            };
            print!("{}", crate::virtio::render(&results, &opts, &note));
            if let Ok(rows) = qemu {
                let rows: Vec<_> = rows
                    .into_iter()
                    .map(|(on, r)| (format!("ioeventfd={}", if on { "on" } else { "off" }), r))
                    .collect();
                println!();
                print!(
                    "{}",
                    crate::virtio::render_linux("QEMU microvm + Linux", &rows)
                );
                // The same guest on trapline's paths.
                match linux_rows(args, &opts) {
                    Ok(rows) => {
                        println!();
                        print!("{}", crate::virtio::render_linux("trapline + Linux", &rows));
                    }
                    Err(e) => println!("\ntrapline + Linux: not run: {e}"),
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
/// with PVH entry, like ../shared/guests/linux/vmlinux.xz).
fn qemu_rows(
    args: &BenchArgs,
    opts: &crate::virtio::VirtioOptions,
) -> Result<Vec<(bool, Vec<crate::virtio::LinuxBench>)>, String> {
    let qemu = crate::peer::find()?;
    let kernel = std::env::var_os("TRAPLINE_LINUX_KERNEL")
        .map(PathBuf::from)
        .ok_or("set TRAPLINE_LINUX_KERNEL to a vmlinux with a PVH entry (e.g. ../shared/guests/linux/vmlinux.xz, decompressed)")?;
    let disk = std::env::temp_dir().join(format!(
        "trapline-bench-qemu-disk-{}.img",
        std::process::id()
    ));
    let f = std::fs::File::create(&disk).map_err(|e| format!("{}: {e}", disk.display()))?;
    f.set_len(64 << 20)
        .map_err(|e| format!("{}: {e}", disk.display()))?;
    let secs = if args.quick { 1 } else { 3 };
    // A boot takes tens of seconds of emulated kernel code on these hosts.
    let timeout = opts.timeout.max(Duration::from_secs(900));
    let rows = [true, false]
        .into_iter()
        .map(|on| {
            crate::virtio::qemu_linux(&qemu.binary, &kernel, &disk, on, secs, timeout)
                .map(|r| (on, r))
        })
        .collect();
    let _ = std::fs::remove_file(&disk);
    rows
}

/// trapline's four paths with Linux and vblktest (the guest QEMU runs).
fn linux_rows(
    args: &BenchArgs,
    opts: &crate::virtio::VirtioOptions,
) -> Result<Vec<(String, Vec<crate::virtio::LinuxBench>)>, String> {
    let kernel = std::env::var_os("TRAPLINE_LINUX_KERNEL")
        .map(PathBuf::from)
        .ok_or("TRAPLINE_LINUX_KERNEL is not set")?;
    let disk = std::env::temp_dir().join(format!(
        "trapline-bench-linux-disk-{}.img",
        std::process::id()
    ));
    let f = std::fs::File::create(&disk).map_err(|e| format!("{}: {e}", disk.display()))?;
    f.set_len(64 << 20)
        .map_err(|e| format!("{}: {e}", disk.display()))?;
    let secs = if args.quick { 1 } else { 3 };
    let timeout = opts.timeout.max(Duration::from_secs(900));
    let rows = crate::virtio::PATHS
        .into_iter()
        .map(|p| {
            crate::virtio::trapline_linux(&opts.exe, &kernel, &disk, p, secs, timeout)
                .map(|r| (format!("{} + {}", p.0, p.1), r))
        })
        .collect();
    let _ = std::fs::remove_file(&disk);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    #[test]
    fn linux_boot_cpu_defaults_to_the_shared_readme_model() {
        let a = Cli::try_parse_from(["bench", "--view", "linux-boot"]).unwrap();
        assert_eq!(a.bench.linux_cpu, crate::linux_boot::DEFAULT_CPU);
        let a =
            Cli::try_parse_from(["bench", "--view", "linux-boot", "--linux-cpu", "host"]).unwrap();
        assert_eq!(a.bench.linux_cpu, "host");
        assert_eq!(a.bench.view, ViewArg::LinuxBoot);
    }
}
