//! `trapline kernel-share`: the kernel's share of in-kernel paths through
//! KVM's trace points, each scenario alone on a fresh probe VM with tracing
//! armed around it (`trapline_lab::kshare` measures and renders). Off the
//! lab's own runs on purpose: tracing every exit costs, and it needs root.

use std::path::PathBuf;
use std::time::Duration;

use trapline_lab::kshare::{self, render, KshareOptions};
use trapline_lab::LabOptions;
use trapline_machine::HostKvm;

use super::status;

/// The command's name, as its messages begin.
pub const COMMAND: &str = "trapline kernel-share";

/// `trapline kernel-share` arguments.
#[derive(clap::Args, Debug)]
pub struct KernelShareArgs {
    /// Comma-separated scenario names [default: every in-kernel I/O path,
    /// cpuid where there is one, and the profile's user exit
    /// (`pio-user-out` on x86, `mmio-user-write` on arm64)].
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Shorter timed loops (`trapline bench --quick`'s).
    #[arg(long)]
    pub quick: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: KshareFormat,
    /// Where tracefs is (mounted there for the run when it is not).
    #[arg(long, value_name = "DIR", default_value = kshare::tracefs::TRACEFS)]
    pub tracefs: PathBuf,
    /// The trace's ring buffer per CPU in KiB (its bound: events past it
    /// are lost and the row says so), 64 to 65536.
    #[arg(long, value_name = "KIB", default_value_t = 8192, value_parser = clap::value_parser!(u32).range(64..=65536))]
    pub buffer_kb: u32,
    /// Longest one probe VM may run, in seconds.
    #[arg(long, value_name = "SECS", default_value = "120", value_parser = crate::secs::parse_secs)]
    pub timeout: Duration,
}

/// `--format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KshareFormat {
    /// Aligned columns within 100.
    Table,
    /// Versioned JSON (`trapline-kernel-share/1`).
    Json,
    /// One line per scenario and key.
    Csv,
    /// A markdown table.
    Md,
}

/// Runs `trapline kernel-share`; returns the process exit status.
pub fn main(args: KernelShareArgs) -> i32 {
    let names: Vec<String> = if args.only.is_empty() {
        kshare::default_scenarios()
            .into_iter()
            .map(String::from)
            .collect()
    } else {
        args.only.clone()
    };
    if let Some(bad) = names
        .iter()
        .find(|n| trapline_lab::catalog::find(n).is_none())
    {
        eprintln!("{COMMAND}: error: no scenario {bad:?} on this architecture (`trapline bench --list` names them)");
        return status::USAGE;
    }
    let kvm = match HostKvm::open_from_env() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("{COMMAND}: error: {e}");
            return status::NO_KVM;
        }
    };
    super::watch_stop_signals(COMMAND);
    let opts = KshareOptions {
        tracefs: args.tracefs.clone(),
        buffer_kb: args.buffer_kb,
        lab: lab_options(&args),
    };
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let report = kshare::measure(&kvm, &refs, &opts);
    let text = match args.format {
        KshareFormat::Table => render::table(&report),
        KshareFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&render::json(&report)).unwrap_or_default()
        ),
        KshareFormat::Csv => render::csv(&report),
        KshareFormat::Md => render::markdown(&report),
    };
    out!("{text}");
    let failed = report
        .scenarios
        .iter()
        .any(|s| matches!(s.outcome, kshare::Outcome::Failed(_)));
    if failed {
        status::FAILED
    } else {
        status::OK
    }
}

/// One repeat per scenario, no profile, no peer, no footprint: only the
/// probe's round trip is wanted beside the trace.
fn lab_options(args: &KernelShareArgs) -> LabOptions {
    let d = &crate::bench::DEFAULTS;
    LabOptions {
        repeat: 1,
        goal_cycles: if args.quick {
            crate::arch::QUICK_GOAL
        } else {
            crate::arch::FULL_GOAL
        },
        min_iters: d.min_iters,
        max_iters: d.max_iters,
        warmup: d.warmup,
        only: None,
        quick: args.quick,
        vm_timeout: args.timeout,
        hypercall_timeout: Duration::from_secs(2),
        progress: false,
        seccomp: true,
        footprint_exe: None,
        peer: None,
        kvmtool: None,
        stat: false,
        anatomy: false,
    }
}
