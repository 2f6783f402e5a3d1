//! `trapline bench`.

use std::path::PathBuf;
use std::time::Duration;

use trapline_kvm::HostKvm;
use trapline_report::{render, Format, Report, View};

use crate::outputs::Outputs;
use crate::present::{self, Presentation};
use crate::results::RunFolder;
use crate::runner::{dry_run, run_lab, LabOptions};

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
    /// `--fail-on-regression`: the comparison's verdict is "regressed".
    pub const REGRESSED: i32 = crate::saved::status::REGRESSED;
}

/// Defaults of the flags whose value says whether they were given.
pub struct Defaults {
    pub min_iters: u64,
    pub max_iters: u64,
    pub warmup: u64,
    pub linux_smp: u32,
}

/// [`Defaults`]' values.
pub const DEFAULTS: Defaults = Defaults {
    min_iters: 16,
    max_iters: 1 << 20,
    warmup: 16,
    linux_smp: 1,
};

pub use crate::outputs::FormatArg;

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
            ViewArg::Report(v) => PossibleValue::new(v.name()).help(v.about()),
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
    /// Fresh-VM repeats per scenario, 1 to 1000 [default: 5; 3 with --quick].
    #[arg(long, help_heading = "Measurement", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// TSC cycles a timed loop must last, at least 1000 (the iteration
    /// count doubles until it does) [default: 2^25; 2^23 with --quick].
    #[arg(long, help_heading = "Measurement", value_name = "CYCLES", value_parser = clap::value_parser!(u64).range(1000..))]
    pub goal: Option<u64>,
    /// Smallest timed loop, in iterations (at least 1).
    #[arg(long, help_heading = "Measurement", value_name = "N", default_value_t = DEFAULTS.min_iters, value_parser = clap::value_parser!(u64).range(1..))]
    pub min_iters: u64,
    /// Largest timed loop, in iterations (1 to 2^32 − 1).
    #[arg(long, help_heading = "Measurement", value_name = "N", default_value_t = DEFAULTS.max_iters, value_parser = clap::value_parser!(u64).range(1..=(u32::MAX as u64)))]
    pub max_iters: u64,
    /// Untimed iterations before timing starts.
    #[arg(
        long,
        help_heading = "Measurement",
        value_name = "N",
        default_value_t = DEFAULTS.warmup
    )]
    pub warmup: u64,
    /// Only scenarios matching these comma-separated globs on `name` or
    /// `vmm:name` (`pio-*`, `raw-kvm:*`); noop is always kept. A floor
    /// ladder loop is selected by its rung (`raw-kvm+cpuid:*`) or its
    /// written-out name (`ram-read`: on every rung), not by a bare glob.
    #[arg(long, help_heading = "Selection", value_name = "PATTERNS")]
    pub only: Option<String>,
    /// Fewer repeats and shorter loops (about a minute on a small host).
    #[arg(long, help_heading = "Selection")]
    pub quick: bool,
    /// A dry run: list what this invocation would run (the scenarios
    /// --only / --view select and the VM runs they take, or the boots and
    /// runs of --view linux-boot / virtio) and an estimate of the time,
    /// then exit (no /dev/kvm needed).
    #[arg(long, help_heading = "Selection")]
    pub list: bool,
    /// Output format on stdout (`table`: a one-screen summary; see --verbose).
    #[arg(long, help_heading = "Output", value_enum, default_value = "table")]
    pub format: FormatArg,
    /// With the table format and the default view: the full table (every
    /// row, the floor ladder's, min/max, its pieces, formulas and every
    /// check text) after the summary's header, instead of the summary.
    #[arg(long, help_heading = "Output")]
    pub verbose: bool,
    /// Which rows and published numbers to show; a seed table's view (and
    /// `seeds`) measures only the scenarios it shows.
    #[arg(long, help_heading = "Selection", value_enum, default_value = "all")]
    pub view: ViewArg,
    /// Also write the view as a self-contained HTML page with charts here.
    #[arg(long, help_heading = "Output", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the whole report as JSON here, whatever the view (for
    /// `--compare` or `trapline report` later).
    #[arg(long, help_heading = "Output", value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Also write the view in FORMAT to FILE (repeatable: `--export
    /// csv:r.csv --export md:r.md`).
    #[arg(long, help_heading = "Output", value_name = "FORMAT:FILE", value_parser = crate::outputs::parse_export)]
    pub export: Vec<crate::outputs::Export>,
    /// Where each run keeps its full report: `DIR/<UTC time>/report.json`
    /// and `report.html`, with `DIR/latest` pointing at the newest (checked
    /// before anything is measured).
    #[arg(long, help_heading = "Output", value_name = "DIR", default_value = crate::results::DEFAULT_PARENT)]
    pub results_dir: PathBuf,
    /// Keep no results folder (only what --save and --html ask for).
    #[arg(long, help_heading = "Output", conflicts_with = "results_dir")]
    pub no_results: bool,
    /// Compare with a saved run (its report.json, or the results folder
    /// holding it): per-scenario ratio, changes beyond the spread flagged,
    /// a warning when the runs' settings or hosts differ, and a verdict.
    #[arg(long, help_heading = "Output", value_name = "OLD.json")]
    pub compare: Option<PathBuf>,
    /// With --compare: exit with status 9 when the verdict is "regressed"
    /// (for CI).
    #[arg(long, help_heading = "Output", requires = "compare")]
    pub fail_on_regression: bool,
    /// Longest one probe VM may run, in seconds (more than 0, at most 86400).
    #[arg(long, help_heading = "Measurement", value_name = "SECS", default_value = "120", value_parser = parse_secs)]
    pub timeout: Duration,
    /// No progress on stderr (a bar on a terminal, else a line per VM run).
    #[arg(long, help_heading = "Output")]
    pub no_progress: bool,
    /// Run the VMs without seccomp filters (to debug with strace or gdb).
    #[arg(long, help_heading = "Measurement")]
    pub no_seccomp: bool,
    /// Also run the same probe on a peer VMM, interleaved, for a side-by-side ratio.
    #[arg(long, help_heading = "Measurement", value_enum)]
    pub peer: Option<PeerArg>,
    /// kvm-unit-tests' arm64 micro-bench (a build's `arm/micro-bench.flat`):
    /// boot it on trapline (and on the peer with `--peer qemu`) after the
    /// probe and add its table's lines as `micro-bench:<test>` rows
    /// (arm64 only).
    #[arg(long, help_heading = "Measurement", value_name = "FLAT")]
    pub micro_bench: Option<PathBuf>,
    /// vCPUs for `--view linux-boot`, 1 to 64.
    #[arg(long, help_heading = "Measurement", value_name = "N", default_value_t = DEFAULTS.linux_smp, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub linux_smp: u32,
    /// The CPU model `--view linux-boot` gives the guest on every VMM
    /// (trapline's `--cpu`, QEMU's `-cpu`): `qemu64,-cx16` (the shared
    /// README's), `host`, …
    #[arg(long, default_value = LINUX_BOOT_CPU)]
    pub linux_cpu: String,
    /// The ACPI hardware of trapline's PC in `--view linux-boot`
    /// (trapline's `--acpi`): `reduced` (default: hardware-reduced, the
    /// kind of machine QEMU's microvm is) or `full` (the PC's PM timer,
    /// SCI and 8259s).
    #[arg(long, default_value = LINUX_BOOT_ACPI, value_parser = ["full", "reduced"])]
    pub linux_acpi: String,
    /// Run trapline's VMs without the exit profile: no handling times per
    /// exit, and no `stat-overhead` row.
    #[arg(long, help_heading = "Measurement")]
    pub no_stat: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerArg {
    /// QEMU with KVM: qemu-system-x86_64 (Debian's qemu-system-x86) on x86,
    /// qemu-system-aarch64 -M virt,gic-version=3 (qemu-system-arm) on arm64.
    Qemu,
    /// kvmtool's lkvm found on PATH (Debian's kvmtool package): the probe
    /// cannot run on its arm64 machine (rows say why); kvm-unit-tests'
    /// micro-bench (`--micro-bench`) is tried on it.
    Kvmtool,
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

/// A batch's default length in the probe's clock: TSC cycles on x86
/// (2^25 = about 10 ms at 3 GHz; `--quick`: 2^23), counter ticks on arm64,
/// whose generic timer runs at 25 MHz to 1 GHz (2^22 = 4-170 ms;
/// `--quick`: 2^20).
#[cfg(target_arch = "x86_64")]
const FULL_GOAL: u64 = 1 << 25;
#[cfg(target_arch = "x86_64")]
const QUICK_GOAL: u64 = 1 << 23;
#[cfg(target_arch = "aarch64")]
const FULL_GOAL: u64 = 1 << 22;
#[cfg(target_arch = "aarch64")]
const QUICK_GOAL: u64 = 1 << 20;

/// The CPU model `--view linux-boot` gives the guest on both VMMs unless
/// `--linux-cpu` says otherwise: the one the shared Linux's README boots
/// QEMU with.
pub const LINUX_BOOT_CPU: &str = "qemu64,-cx16";

/// trapline's `--acpi` in `--view linux-boot` unless `--linux-acpi` says
/// otherwise: hardware-reduced, like the peer's microvm.
pub const LINUX_BOOT_ACPI: &str = "reduced";

impl BenchArgs {
    /// The scenarios `--view` needs, as an `--only` selection, when it
    /// reads a known few (a seed table's view); `--only` wins when given.
    fn view_selection(&self) -> Option<String> {
        match self.view {
            ViewArg::Report(v) => v
                .needs(cfg!(target_arch = "aarch64"))
                .map(|keys| keys.join(",")),
            ViewArg::LinuxBoot | ViewArg::Virtio => None,
        }
    }

    /// `--view linux-boot`'s boots per VMM: five interleaved pairs by
    /// default, enough for a median and a range that say something on a
    /// host whose load drifts.
    #[cfg(target_arch = "x86_64")]
    fn linux_boot_repeat(&self) -> u32 {
        self.repeat.unwrap_or(if self.quick { 1 } else { 5 })
    }

    /// `--view virtio`: requests of each kind per `builtin:vblk` run.
    #[cfg(target_arch = "x86_64")]
    fn virtio_reps(&self) -> u64 {
        if self.quick {
            100
        } else {
            500
        }
    }

    /// `--view virtio`: runs per path (their medians are shown).
    #[cfg(target_arch = "x86_64")]
    fn virtio_repeat(&self) -> u32 {
        self.repeat.unwrap_or(if self.quick { 1 } else { 3 })
    }

    /// `--view virtio`: seconds of I/O per Linux + vblktest boot.
    #[cfg(target_arch = "x86_64")]
    fn linux_io_secs(&self) -> u64 {
        if self.quick {
            1
        } else {
            3
        }
    }

    /// The files to write besides stdout.
    fn outputs(&self) -> Outputs {
        Outputs {
            save: self.save.clone(),
            html: self.html.clone(),
            exports: self.export.clone(),
        }
    }

    /// The lab options these arguments ask for.
    pub fn options(&self) -> LabOptions {
        let (repeat, goal) = if self.quick {
            (3, QUICK_GOAL)
        } else {
            (5, FULL_GOAL)
        };
        LabOptions {
            repeat: self.repeat.unwrap_or(repeat),
            goal_cycles: self.goal.unwrap_or(goal),
            min_iters: self.min_iters,
            max_iters: self.max_iters,
            warmup: self.warmup,
            only: self.only.clone().or_else(|| self.view_selection()),
            quick: self.quick,
            vm_timeout: self.timeout,
            hypercall_timeout: Duration::from_secs(if self.quick { 1 } else { 2 }),
            progress: !self.no_progress,
            seccomp: !self.no_seccomp,
            footprint_exe: std::env::current_exe().ok(),
            peer: None,
            kvmtool: None,
            stat: !self.no_stat,
        }
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
            crate::list::linux_boot(
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
                Some(_) => crate::peer::find().map(|_| args.linux_io_secs()),
            };
            Some(
                crate::list::virtio(
                    &crate::virtio::PATHS,
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
    if let Some(why) = crate::flags::contradiction(&args) {
        eprintln!("trapline bench: error: {why}");
        return status::USAGE;
    }
    for w in crate::flags::ignored(&args) {
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
        Some(p) => match crate::saved::load(p) {
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
        Some(PeerArg::Qemu) => match crate::peer::find() {
            Ok(q) => options.peer = Some(q),
            Err(e) => {
                eprintln!("trapline bench: error: {e}");
                return status::USAGE;
            }
        },
        Some(PeerArg::Kvmtool) => match crate::kvmtool::find() {
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
        return crate::linux_boot::main(
            args.linux_smp,
            repeat,
            &args.linux_cpu,
            &args.linux_acpi,
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
    options: &crate::LabOptions,
    timeout: Duration,
) {
    use crate::micro_bench;
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
fn keep_results(
    folder: &RunFolder,
    report: &Report,
) -> Result<Vec<String>, crate::results::ResultsError> {
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
    let opts = crate::virtio::VirtioOptions {
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
    let measured = crate::virtio::measure(&opts);
    if let (Some(sig), Ok(results)) = (trapline_machine::signals::received(), &measured) {
        let fit = |text: String| trapline_report::fit_text(&text, crate::terminal::view_columns());
        if !results.is_empty() {
            out!(
                "{}",
                fit(crate::virtio::render(
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
            crate::virtio::PATHS.len()
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
            out!("{}", fit(crate::virtio::render(&results, &opts, &note)));
            if let Ok(rows) = qemu {
                let rows: Vec<_> = rows
                    .into_iter()
                    .map(|(on, r)| (format!("ioeventfd={}", if on { "on" } else { "off" }), r))
                    .collect();
                outln!();
                out!(
                    "{}",
                    fit(crate::virtio::render_linux("QEMU microvm + Linux", &rows))
                );
                // The same guest on trapline's paths.
                match linux_rows(args, &opts) {
                    Ok(rows) => {
                        outln!();
                        out!(
                            "{}",
                            fit(crate::virtio::render_linux("trapline + Linux", &rows))
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
    opts: &crate::virtio::VirtioOptions,
) -> Result<Vec<(bool, Vec<crate::virtio::LinuxBench>)>, String> {
    let qemu = crate::peer::find()?;
    let kernel = std::env::var_os("TRAPLINE_LINUX_KERNEL")
        .map(PathBuf::from)
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
            crate::virtio::qemu_linux(&qemu.binary, &kernel, &disk, on, secs, timeout)
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
    opts: &crate::virtio::VirtioOptions,
) -> Result<Vec<(String, Vec<crate::virtio::LinuxBench>)>, String> {
    let kernel = std::env::var_os("TRAPLINE_LINUX_KERNEL")
        .map(PathBuf::from)
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
        assert_eq!(a.bench.linux_cpu, LINUX_BOOT_CPU);
        let a =
            Cli::try_parse_from(["bench", "--view", "linux-boot", "--linux-cpu", "host"]).unwrap();
        assert_eq!(a.bench.linux_cpu, "host");
        assert_eq!(a.bench.view, ViewArg::LinuxBoot);
    }
}
