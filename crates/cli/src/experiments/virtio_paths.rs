//! `trapline virtio-paths`: virtio-blk I/O on each notify × irq path,
//! `builtin:vblk` through child `trapline run`s, then, with QEMU and a
//! Linux kernel, Linux's own driver on QEMU's microvm and on trapline's
//! paths (`trapline_peers::experiments::virtio` runs them).

use std::path::PathBuf;
use std::time::Duration;

use trapline_machine::{signals, HostKvm};
use trapline_peers::experiments::virtio::{self, LinuxBench, VirtioOptions, PATHS};

use super::status;

/// The command's name, as its messages begin.
pub const COMMAND: &str = "trapline virtio-paths";

/// `trapline virtio-paths` arguments.
#[derive(clap::Args, Debug)]
pub struct VirtioPathsArgs {
    /// Runs per path, their medians shown, 1 to 1000 [default: 3; 1 with
    /// --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// Fewer requests per run and shorter Linux I/O.
    #[arg(long)]
    pub quick: bool,
    /// A dry run: list the runs this invocation would make and an estimate
    /// of the time, then exit (no /dev/kvm needed).
    #[arg(long)]
    pub list: bool,
    /// Longest one run may take, in seconds (more than 0, at most 86400; a
    /// Linux boot gets at least 900).
    #[arg(long, value_name = "SECS", default_value = "120", value_parser = crate::secs::parse_secs)]
    pub timeout: Duration,
    /// Run trapline's VMs without seccomp filters (to debug with strace or
    /// gdb).
    #[arg(long)]
    pub no_seccomp: bool,
}

impl VirtioPathsArgs {
    /// Requests of each kind per `builtin:vblk` run.
    fn reps(&self) -> u64 {
        if self.quick {
            100
        } else {
            500
        }
    }

    /// Runs per path (their medians are shown).
    fn repeat(&self) -> u32 {
        self.repeat.unwrap_or(if self.quick { 1 } else { 3 })
    }

    /// Seconds of I/O per Linux + vblktest boot.
    fn linux_io_secs(&self) -> u64 {
        if self.quick {
            1
        } else {
            3
        }
    }
}

/// Runs `trapline virtio-paths`; returns the process exit status.
pub fn main(args: VirtioPathsArgs) -> i32 {
    if let Some(code) = super::unavailable(COMMAND, "virtio-paths") {
        return code;
    }
    if args.list {
        out!("{}", list(&args));
        return status::OK;
    }
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("{COMMAND}: error: cannot find the trapline binary to run children");
        return status::ERROR;
    };
    if let Err(e) = HostKvm::open_from_env() {
        eprintln!("{COMMAND}: error: {e}");
        return status::NO_KVM;
    }
    let opts = VirtioOptions {
        exe,
        reps: args.reps(),
        repeat: args.repeat(),
        timeout: args.timeout,
        seccomp: !args.no_seccomp,
    };
    // A stop signal ends the experiment between its children, keeping the
    // paths measured whole.
    super::watch_stop_signals(COMMAND);
    let measured = virtio::measure(&opts);
    match (signals::received(), measured) {
        (Some(sig), Ok(results)) => stopped(sig, &results, &opts),
        (None, Ok(results)) => {
            print_results(&args, &results, &opts);
            status::OK
        }
        (_, Err(e)) => {
            eprintln!("{COMMAND}: error: {e}");
            status::FAILED
        }
    }
}

/// `--list`: the runs this invocation would make.
fn list(args: &VirtioPathsArgs) -> String {
    let linux = match std::env::var_os("TRAPLINE_LINUX_KERNEL") {
        None => Err("TRAPLINE_LINUX_KERNEL is not set".to_string()),
        Some(_) => trapline_peers::qemu::find().map(|_| args.linux_io_secs()),
    };
    super::list::virtio(&PATHS, args.reps(), args.repeat(), linux).text(COMMAND)
}

/// Text fitted to the terminal, as every view is (a pipe or a file keeps
/// every line whole).
fn fit(text: String) -> String {
    trapline_report::fit_text(&text, crate::terminal::view_columns())
}

/// A run a stop signal ended: the paths measured whole, and the status
/// 128 + N.
fn stopped(sig: i32, results: &[virtio::PathResult], opts: &VirtioOptions) -> i32 {
    if !results.is_empty() {
        out!(
            "{}",
            fit(virtio::render(
                results,
                opts,
                "not run: the run was stopped"
            ))
        );
    }
    eprintln!(
        "{COMMAND}: partial run: stopped by {} after {} of {} notify x irq paths (the one it cut short is left out)",
        signals::name(sig),
        results.len(),
        PATHS.len()
    );
    signals::exit_status(sig)
}

/// The paths' table, then Linux's rows on QEMU and on trapline when QEMU
/// and a kernel are there.
fn print_results(args: &VirtioPathsArgs, results: &[virtio::PathResult], opts: &VirtioOptions) {
    let qemu = qemu_rows(args, opts);
    let note = match &qemu {
        Ok(_) => "below (Linux's virtio-blk driver and vblktest: another guest than builtin:vblk, compare paths within a VMM)".to_string(),
        Err(e) => format!("not run: {e}"),
    };
    out!("{}", fit(virtio::render(results, opts, &note)));
    let Ok(rows) = qemu else { return };
    let rows: Vec<_> = rows
        .into_iter()
        .map(|(on, r)| (format!("ioeventfd={}", if on { "on" } else { "off" }), r))
        .collect();
    outln!();
    out!(
        "{}",
        fit(virtio::render_linux("QEMU microvm + Linux", &rows))
    );
    // The same guest on trapline's paths.
    match linux_rows(args, opts) {
        Ok(rows) => {
            outln!();
            out!("{}", fit(virtio::render_linux("trapline + Linux", &rows)));
        }
        Err(e) => outln!("\ntrapline + Linux: not run: {e}"),
    }
}

/// A 64 MiB scratch disk named for `what`, removed by the caller.
fn scratch_disk(what: &str) -> Result<PathBuf, String> {
    let disk = std::env::temp_dir().join(format!(
        "trapline-lab-{what}-disk-{}.img",
        std::process::id()
    ));
    let f = std::fs::File::create(&disk).map_err(|e| format!("{}: {e}", disk.display()))?;
    f.set_len(64 << 20)
        .map_err(|e| format!("{}: {e}", disk.display()))?;
    Ok(disk)
}

/// QEMU microvm with Linux and vblktest, ioeventfd on and off: needs QEMU
/// and a Linux kernel (`TRAPLINE_LINUX_KERNEL`, an uncompressed vmlinux
/// with PVH entry, like the project's tiny Linux of docs/linux.md).
fn qemu_rows(
    args: &VirtioPathsArgs,
    opts: &VirtioOptions,
) -> Result<Vec<(bool, Vec<LinuxBench>)>, String> {
    let qemu = trapline_peers::qemu::find()?;
    let kernel = std::env::var_os("TRAPLINE_LINUX_KERNEL")
        .map(PathBuf::from)
        .ok_or("set TRAPLINE_LINUX_KERNEL to an uncompressed x86 vmlinux with a PVH entry (docs/linux.md says what it holds)")?;
    let disk = scratch_disk("qemu")?;
    let secs = args.linux_io_secs();
    // A boot takes tens of seconds of emulated kernel code on these hosts.
    let timeout = opts.timeout.max(Duration::from_secs(900));
    let rows = [true, false]
        .into_iter()
        .map(|on| {
            virtio::qemu_linux(&qemu.binary, &kernel, &disk, on, secs, timeout).map(|r| (on, r))
        })
        .collect();
    let _ = std::fs::remove_file(&disk);
    rows
}

/// trapline's four paths with Linux and vblktest (the guest QEMU runs).
fn linux_rows(
    args: &VirtioPathsArgs,
    opts: &VirtioOptions,
) -> Result<Vec<(String, Vec<LinuxBench>)>, String> {
    let kernel = std::env::var_os("TRAPLINE_LINUX_KERNEL")
        .map(PathBuf::from)
        .ok_or("TRAPLINE_LINUX_KERNEL is not set")?;
    let disk = scratch_disk("linux")?;
    let secs = args.linux_io_secs();
    let timeout = opts.timeout.max(Duration::from_secs(900));
    let rows = PATHS
        .into_iter()
        .map(|p| {
            virtio::trapline_linux(&opts.exe, &kernel, &disk, p, secs, timeout)
                .map(|r| (format!("{} + {}", p.0, p.1), r))
        })
        .collect();
    let _ = std::fs::remove_file(&disk);
    rows
}
