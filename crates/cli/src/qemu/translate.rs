//! A QEMU-style run translated into `trapline run`'s arguments.

use std::path::PathBuf;

use clap::Parser;

use super::platform::Platform;
use crate::args::{Cli, DeviceArg, IrqchipArg, RunArgs, SerialSpec};

/// The options of a QEMU-style run, as given (defaults are applied by
/// [`QemuRun::into_run_args`]).
#[derive(Debug, Default, PartialEq)]
pub struct QemuRun {
    pub kernel: Option<String>,
    pub append: Option<String>,
    pub initrd: Option<PathBuf>,
    pub smp: Option<u32>,
    pub cpu: Option<trapline_machine::CpuModel>,
    pub mem_mib: Option<u64>,
    pub devices: Vec<DeviceArg>,
    pub serial: Option<SerialSpec>,
    pub nographic: bool,
    pub nodefaults: bool,
    /// `-machine kernel_irqchip=on|split|off`.
    pub irqchip: Option<IrqchipArg>,
    /// `-machine pit=off`.
    pub no_pit: bool,
    /// `-machine microvm`: the PC with hardware-reduced ACPI.
    pub microvm: bool,
    /// The machine the options are read for.
    pub platform: Platform,
    /// Printed as `trapline: warning: …` before the run.
    pub warnings: Vec<String>,
}

impl QemuRun {
    /// The `trapline run` arguments this command line means.
    pub fn into_run_args(self) -> Result<RunArgs, String> {
        let kernel = self.kernel.ok_or(
            "no -kernel FILE: trapline has no firmware or disks, it boots only a -kernel image",
        )?;
        // Explicit -serial wins; -nographic means stdio; -nodefaults (and no
        // -serial) leaves COM1 unconnected, as QEMU does. Otherwise stdio:
        // QEMU would open a virtual console, and trapline has no display.
        let serial = match self.serial {
            Some(s) => s,
            None if self.nographic => SerialSpec::Stdio,
            None if self.nodefaults => SerialSpec::None,
            None => SerialSpec::Stdio,
        };
        // Start from `trapline run --kernel K`'s defaults (one source of
        // truth for every flag QEMU has no spelling for), then apply ours.
        let mut a = native_defaults(&kernel)?;
        a.smp = self.smp.unwrap_or(a.smp);
        a.cpu = self.cpu.unwrap_or(a.cpu);
        a.mem = self.mem_mib.unwrap_or(a.mem);
        a.append = self.append.unwrap_or(a.append);
        a.initrd = self.initrd;
        a.serial = serial;
        // Harnesses wrap QEMU in `timeout` themselves: no --timeout here.
        a.devices = self.devices;
        a.irqchip = self.irqchip.unwrap_or(a.irqchip);
        a.no_pit = self.no_pit;
        if self.microvm {
            a.acpi = crate::args::AcpiArg::Reduced;
        }
        Ok(a)
    }
}

/// `trapline run --kernel=K` with every other flag at its default.
fn native_defaults(kernel: &str) -> Result<RunArgs, String> {
    let kernel_flag = format!("--kernel={kernel}");
    match Cli::try_parse_from(["trapline", "run", kernel_flag.as_str()]) {
        Ok(Cli {
            command: crate::args::Command::Run(a),
        }) => Ok(a),
        Ok(_) => unreachable!("`run` parses as the run command"),
        Err(e) => Err(format!("-kernel '{kernel}': {e}")),
    }
}
