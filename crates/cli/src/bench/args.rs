//! `trapline bench`'s arguments: its flags, their defaults, and the lab
//! options they ask for.

use std::path::PathBuf;
use std::time::Duration;

use trapline_lab::LabOptions;
use trapline_report::View;

use crate::outputs::Outputs;

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
    pub const REGRESSED: i32 = crate::report_cmd::status::REGRESSED;
}

/// Defaults of the flags whose value says whether they were given.
pub struct Defaults {
    pub min_iters: u64,
    pub max_iters: u64,
    pub warmup: u64,
}

/// [`Defaults`]' values.
pub const DEFAULTS: Defaults = Defaults {
    min_iters: 16,
    max_iters: 1 << 20,
    warmup: 16,
};

pub use crate::outputs::FormatArg;

/// `--view`: one of the report's views (the seed tables' among them, one
/// per seed file), or, hidden, an experiment that became a command of its
/// own (refused, naming the command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewArg {
    /// The lab's report, shown so.
    Report(View),
    /// `--view linux-boot`: now `trapline linux-boot`.
    LinuxBoot,
    /// `--view virtio`: now `trapline virtio-paths`.
    Virtio,
}

impl ViewArg {
    /// The command an experiment's old `--view` value became.
    pub fn moved_to(self) -> Option<&'static str> {
        match self {
            ViewArg::Report(_) => None,
            ViewArg::LinuxBoot => Some(crate::experiments::linux_boot::COMMAND),
            ViewArg::Virtio => Some(crate::experiments::virtio_paths::COMMAND),
        }
    }
}

/// Every `--view` value: the report's views, then the experiments' old
/// values (hidden).
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
            ViewArg::LinuxBoot => PossibleValue::new("linux-boot").hide(true),
            ViewArg::Virtio => PossibleValue::new("virtio").hide(true),
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
    /// --only / --view select and the VM runs they take) and an estimate
    /// of the time, then exit (no /dev/kvm needed).
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
    #[arg(long, help_heading = "Output", value_name = "DIR", default_value = super::results::DEFAULT_PARENT)]
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
    #[arg(long, help_heading = "Measurement", value_name = "SECS", default_value = "120", value_parser = crate::secs::parse_secs)]
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

impl BenchArgs {
    /// The scenarios `--view` needs, as an `--only` selection, when it
    /// reads a known few (a seed table's view); `--only` wins when given.
    pub(super) fn view_selection(&self) -> Option<String> {
        match self.view {
            ViewArg::Report(v) => v.needs(crate::arch::ARM64).map(|keys| keys.join(",")),
            ViewArg::LinuxBoot | ViewArg::Virtio => None,
        }
    }

    /// The files to write besides stdout.
    pub(super) fn outputs(&self) -> Outputs {
        Outputs {
            save: self.save.clone(),
            html: self.html.clone(),
            exports: self.export.clone(),
        }
    }

    /// The lab options these arguments ask for.
    pub fn options(&self) -> LabOptions {
        let (repeat, goal) = if self.quick {
            (3, crate::arch::QUICK_GOAL)
        } else {
            (5, crate::arch::FULL_GOAL)
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
            anatomy: matches!(self.view, ViewArg::Report(View::Anatomy)),
        }
    }
}

/// The report view `--view` shows (an experiment's old value is refused
/// before anything runs: see `main`).
pub(super) fn view(v: ViewArg) -> View {
    match v {
        ViewArg::Report(v) => v,
        ViewArg::LinuxBoot | ViewArg::Virtio => View::All,
    }
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
    fn an_experiments_old_view_names_its_command() {
        let a = Cli::try_parse_from(["bench", "--view", "linux-boot"]).unwrap();
        assert_eq!(a.bench.view.moved_to(), Some("trapline linux-boot"));
        let a = Cli::try_parse_from(["bench", "--view", "virtio"]).unwrap();
        assert_eq!(a.bench.view.moved_to(), Some("trapline virtio-paths"));
        let a = Cli::try_parse_from(["bench", "--view", "vmm"]).unwrap();
        assert_eq!(a.bench.view.moved_to(), None);
    }
}
