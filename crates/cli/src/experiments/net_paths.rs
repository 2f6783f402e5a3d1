//! `trapline net-paths`: seed 002 on a whole data path, on both
//! architectures. `builtin:vnet` (trapline's virtio-net driver) on each
//! notify × irq path with the echo and TAP back ends, and vhost-net on
//! ioeventfd + irqfd (`trapline_peers::experiments::net` runs them), the
//! QEMU peer with `--peer qemu`, and beside them the probe's doorbell rows
//! (a child `trapline bench` of the two `doorbell-*-mmio` scenarios), so
//! the user-space hop reads per ring and per packet.

use std::process::Command;
use std::time::Duration;

use trapline_machine::{signals, HostKvm};
use trapline_peers::experiments::net::{self, render, NetOptions, NetRow};

use super::status;

/// The command's name, as its messages begin.
pub const COMMAND: &str = "trapline net-paths";

/// How the rows are written.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetFormat {
    /// Aligned text fitted to the terminal (at most 100 columns).
    Table,
    /// Every row and its histogram's buckets.
    Json,
    /// Raw numbers, one row a line.
    Csv,
    /// A markdown table.
    #[value(alias = "md")]
    Markdown,
}

/// The peer beside trapline.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetPeer {
    /// QEMU with `-device virtio-net-device` on the TAP (and kvmtool's row).
    Qemu,
}

/// `trapline net-paths` arguments.
#[derive(clap::Args, Debug)]
pub struct NetPathsArgs {
    /// Runs per row, their histograms merged, 1 to 1000 [default: 3; 1
    /// with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// Fewer pairs and bursts per run.
    #[arg(long)]
    pub quick: bool,
    /// Request/response pairs per run, 1 to 10^6 [default: 2000; 300 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub pairs: Option<u64>,
    /// Bursts per run, 0 to 10^5 [default: 100; 20 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub bursts: Option<u64>,
    /// UDP payload bytes of the bursts' frames, 8 to 1472.
    #[arg(long, value_name = "BYTES", default_value = "1472", value_parser = clap::value_parser!(u64).range(8..=1472))]
    pub burst_size: u64,
    /// Frames in flight per burst, 1 to 64.
    #[arg(long, value_name = "N", default_value = "32", value_parser = clap::value_parser!(u64).range(1..=64))]
    pub depth: u64,
    /// UDP payload bytes of the pairs' frames, 8 to 1472.
    #[arg(long, value_name = "BYTES", default_value = "64", value_parser = clap::value_parser!(u64).range(8..=1472))]
    pub size: u64,
    /// Longest the guest waits for a frame to come back before it counts
    /// it lost, in ms, 1 to 600000 (more on an emulated host, where a
    /// frame can take longer than a second without being lost).
    #[arg(long, value_name = "MS", default_value = "1000", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub wait_ms: u64,
    /// Run the TAP rows in this existing network namespace (its name under
    /// /run/netns) instead of one made for the run.
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Also run the same payload on a peer.
    #[arg(long, value_enum)]
    pub peer: Option<NetPeer>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: NetFormat,
    /// Skip the doorbell rows (a child `trapline bench`).
    #[arg(long)]
    pub no_doorbell: bool,
    /// Longest one run may take, in seconds (more than 0, at most 86400).
    #[arg(long, value_name = "SECS", default_value = "120", value_parser = crate::secs::parse_secs)]
    pub timeout: Duration,
    /// Run trapline's VMs without seccomp filters (to debug with strace or
    /// gdb).
    #[arg(long)]
    pub no_seccomp: bool,
}

impl NetPathsArgs {
    fn options(&self, exe: std::path::PathBuf) -> NetOptions {
        NetOptions {
            exe,
            pairs: self.pairs.unwrap_or(if self.quick { 300 } else { 2000 }),
            bursts: self.bursts.unwrap_or(if self.quick { 20 } else { 100 }),
            depth: self.depth,
            size: self.size,
            burst_size: self.burst_size,
            repeat: self.repeat.unwrap_or(if self.quick { 1 } else { 3 }),
            timeout: self.timeout,
            wait_ms: self.wait_ms,
            seccomp: !self.no_seccomp,
            netns: self.netns.clone(),
            peer_qemu: self.peer == Some(NetPeer::Qemu),
        }
    }
}

/// Runs `trapline net-paths`; returns the process exit status.
pub fn main(args: NetPathsArgs) -> i32 {
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("{COMMAND}: error: cannot find the trapline binary to run children");
        return status::ERROR;
    };
    if let Err(e) = HostKvm::open_from_env() {
        eprintln!("{COMMAND}: error: {e}");
        return status::NO_KVM;
    }
    let opts = args.options(exe);
    super::watch_stop_signals(COMMAND);
    let progress = |what: &str| eprintln!("{COMMAND}: {what}");
    let stopped = || signals::received().is_some();
    let rows = match net::measure(&opts, &progress, &stopped) {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("{COMMAND}: error: {e}");
            return status::ERROR;
        }
    };
    let doorbells = if args.no_doorbell || stopped() {
        Err("not run (--no-doorbell, or the run was stopped)".to_string())
    } else {
        progress("the probe's doorbell rows (trapline bench)");
        doorbells(&opts)
    };
    print(&args, &opts, &rows, doorbells);
    if let Some(sig) = signals::received() {
        eprintln!(
            "{COMMAND}: partial run: stopped by {} after {} rows",
            signals::name(sig),
            rows.len()
        );
        return signals::exit_status(sig);
    }
    let failed = rows.iter().any(|r| match &r.outcome {
        net::Outcome::Failed(_) => true,
        net::Outcome::Measured(m) => m.lost + m.reordered + m.bad > 0,
        net::Outcome::NotAvailable(_) => false,
    });
    if failed {
        for r in &rows {
            if let net::Outcome::Failed(w) = &r.outcome {
                eprintln!(
                    "{COMMAND}: {} {} ({}) failed: {w}",
                    r.vmm,
                    r.path,
                    r.backend.name()
                );
            }
        }
        status::FAILED
    } else {
        status::OK
    }
}

/// The rows in the chosen format.
fn print(
    args: &NetPathsArgs,
    opts: &NetOptions,
    rows: &[NetRow],
    doorbells: Result<render::Doorbells, String>,
) {
    let heading = render::heading(opts.pairs, opts.bursts, opts.depth, opts.repeat);
    match args.format {
        NetFormat::Table => {
            let text = format!(
                "{heading}\n\n{}{}",
                render::table(rows),
                render::hop(rows, doorbells)
            );
            out!(
                "{}",
                trapline_report::fit_text(&text, crate::terminal::view_columns())
            );
        }
        NetFormat::Markdown => {
            out!(
                "{}{}",
                render::markdown(&heading, rows),
                render::hop(rows, doorbells)
            );
        }
        NetFormat::Csv => out!("{}", render::csv(rows)),
        NetFormat::Json => {
            let v = render::json(&heading, rows, doorbells.ok());
            out!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    }
}

/// The probe's two MMIO doorbells, ns per ring, from a child `trapline
/// bench --quick --only …` (its JSON report).
fn doorbells(opts: &NetOptions) -> Result<render::Doorbells, String> {
    let mut cmd = Command::new(&opts.exe);
    cmd.args(["bench", "--quick", "--no-results", "--no-progress"])
        .args(["--only", "doorbell-user-mmio,doorbell-ioeventfd-mmio"])
        .args(["--format", "json"]);
    if !opts.seccomp {
        cmd.arg("--no-seccomp");
    }
    let o = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", opts.exe.display()))?;
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).map_err(|e| {
        format!(
            "trapline bench printed no JSON report ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )
    })?;
    let ns = |name: &str| {
        scenario_ns(&v, name).ok_or_else(|| format!("trapline bench's report has no {name} row"))
    };
    Ok(render::Doorbells {
        user_ns: ns("doorbell-user-mmio")?,
        ioeventfd_ns: ns("doorbell-ioeventfd-mmio")?,
    })
}

/// A scenario's ns per iteration (median of its repeats) in a `trapline
/// bench` JSON report.
fn scenario_ns(report: &serde_json::Value, name: &str) -> Option<f64> {
    report
        .get("scenarios")?
        .as_array()?
        .iter()
        .find(|s| s.get("name").and_then(|n| n.as_str()) == Some(name))?
        .get("ns_per_iter")?
        .as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_scenarios_ns_per_iteration() {
        let r = serde_json::json!({"scenarios": [
            {"name": "noop", "ns_per_iter": 1.0},
            {"name": "doorbell-user-mmio", "ns_per_iter": 9000.5}
        ]});
        assert_eq!(scenario_ns(&r, "doorbell-user-mmio"), Some(9000.5));
        assert_eq!(scenario_ns(&r, "doorbell-pv"), None);
    }
}
