//! `trapline linux-boot`: boot the shared tiny Linux on trapline and time
//! it, beside QEMU's microvm with `--peer qemu`, boot by boot
//! (`trapline_peers::experiments::linux_boot` runs it).

use std::time::Duration;

use super::status;

/// The command's name, as its messages begin.
pub const COMMAND: &str = "trapline linux-boot";

/// The CPU model the guest gets on both VMMs unless `--linux-cpu` says
/// otherwise: the one the shared Linux's README boots QEMU with.
pub const LINUX_BOOT_CPU: &str = "qemu64,-cx16";

/// trapline's `--acpi` unless `--linux-acpi` says otherwise:
/// hardware-reduced, like the peer's microvm.
pub const LINUX_BOOT_ACPI: &str = "reduced";

/// `trapline linux-boot` arguments.
#[derive(clap::Args, Debug)]
pub struct LinuxBootArgs {
    /// Boots per VMM, 1 to 1000 [default: 5; 1 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// One boot per VMM.
    #[arg(long)]
    pub quick: bool,
    /// A dry run: list the boots this invocation would make and an
    /// estimate of the time, then exit (no /dev/kvm needed).
    #[arg(long)]
    pub list: bool,
    /// Also boot the same Linux on QEMU's microvm, interleaved with
    /// trapline's boots.
    #[arg(long, value_enum)]
    pub peer: Option<LinuxBootPeer>,
    /// Longest one boot may run, in seconds (more than 0, at most 86400;
    /// a boot gets at least 600, room for a loaded host).
    #[arg(long, value_name = "SECS", default_value = "120", value_parser = crate::secs::parse_secs)]
    pub timeout: Duration,
    /// vCPUs, 1 to 64.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub linux_smp: u32,
    /// The CPU model the guest gets on every VMM (trapline's `--cpu`,
    /// QEMU's `-cpu`): `qemu64,-cx16` (the shared README's), `host`, …
    #[arg(long, default_value = LINUX_BOOT_CPU)]
    pub linux_cpu: String,
    /// The ACPI hardware of trapline's PC (trapline's `--acpi`): `reduced`
    /// (default: hardware-reduced, the kind of machine QEMU's microvm is)
    /// or `full` (the PC's PM timer, SCI and 8259s).
    #[arg(long, default_value = LINUX_BOOT_ACPI, value_parser = ["full", "reduced"])]
    pub linux_acpi: String,
}

/// `--peer`: the VMM booted beside trapline.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxBootPeer {
    /// QEMU's microvm (qemu-system-x86_64, Debian's qemu-system-x86).
    Qemu,
}

impl LinuxBootArgs {
    /// Boots per VMM: five interleaved pairs by default, enough for a
    /// median and a range that say something on a host whose load drifts.
    fn repeat(&self) -> u32 {
        self.repeat.unwrap_or(if self.quick { 1 } else { 5 })
    }
}

/// Runs `trapline linux-boot`; returns the process exit status.
pub fn main(args: LinuxBootArgs) -> i32 {
    if let Some(code) = super::unavailable(COMMAND, "linux-boot") {
        return code;
    }
    if args.list {
        let plan = super::list::linux_boot(
            args.repeat(),
            args.linux_smp,
            &args.linux_cpu,
            &args.linux_acpi,
            args.peer.is_some(),
        );
        out!("{}", plan.text(COMMAND));
        return status::OK;
    }
    let peer = match args.peer {
        Some(LinuxBootPeer::Qemu) => match trapline_peers::qemu::find() {
            Ok(q) => Some(q),
            Err(e) => {
                eprintln!("{COMMAND}: error: {e}");
                return status::USAGE;
            }
        },
        None => None,
    };
    // A stop signal ends the experiment between boots (the running one is
    // passed the signal) and keeps what it measured.
    super::watch_stop_signals(COMMAND);
    // A boot takes ~20 s on an idle host: give the default timeout room
    // for a loaded one.
    let timeout = args.timeout.max(Duration::from_secs(600));
    trapline_peers::experiments::linux_boot::main(
        args.linux_smp,
        args.repeat(),
        &args.linux_cpu,
        &args.linux_acpi,
        peer.as_ref(),
        timeout,
        crate::terminal::view_columns(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LinuxBootArgs,
    }

    #[test]
    fn linux_cpu_defaults_to_the_shared_readme_model() {
        let a = Cli::try_parse_from(["linux-boot"]).unwrap();
        assert_eq!(a.args.linux_cpu, LINUX_BOOT_CPU);
        assert_eq!(a.args.repeat(), 5);
        let a = Cli::try_parse_from(["linux-boot", "--linux-cpu", "host", "--quick"]).unwrap();
        assert_eq!(a.args.linux_cpu, "host");
        assert_eq!(a.args.repeat(), 1);
    }
}
