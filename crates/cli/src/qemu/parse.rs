//! The QEMU-style command line, option by option, into an [`Action`].

use super::device::DeviceSpec;
use super::options::{accepted_list, Opt};
use super::platform::Platform;
use super::syntax::{is_help, only};
use super::translate::QemuRun;
use super::values::{
    parse_accel, parse_device, parse_initrd, parse_machine, parse_mem, parse_serial, parse_smp,
    MachineHelp,
};
use super::virt::{parse_chardev, ChardevSpec, SerialParts};

/// What a QEMU-style command line asks for.
#[derive(Debug, PartialEq)]
pub enum Action {
    /// Boot a guest.
    Run(QemuRun),
    /// `-h`, `-help`, `--help`.
    Help(Spelling),
    /// `-version`, `--version`.
    Version(Spelling),
    /// `-device help` / `-device ?`.
    ListDevices,
    /// `-device NAME,help`.
    DeviceOptions(&'static str),
    /// `-machine help`.
    ListMachines,
    /// `-machine TYPE,help`.
    MachineOptions,
    /// `-chardev help`.
    ListChardevs,
    /// `-cpu help`.
    ListCpus,
    /// `-accel help`.
    ListAccels,
}

/// Who answers `-h`/`--help` and `-version`/`--version`: QEMU's
/// single-dash spellings answer as QEMU does, with its version line first
/// (kvm-unit-tests reads the QEMU version from `$QEMU -h | head -1`); the
/// two-dash ones, which people type, name trapline first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// `-h`, `-help`, `-version`.
    Qemu,
    /// `--help`, `--version`.
    Trapline,
}

impl Spelling {
    fn of(arg: &str) -> Spelling {
        if arg.starts_with("--") {
            Spelling::Trapline
        } else {
            Spelling::Qemu
        }
    }
}

/// Parse QEMU-style arguments (without `argv[0]`). Options are processed in
/// order; `-h`, `-version` and the `help` listings act where they appear,
/// as in QEMU. `Err` is a usage error message (status 2).
pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Action, String> {
    parse_for(Platform::HOST, args)
}

/// [`parse`] for `platform`'s machine.
pub fn parse_for<S: AsRef<str>>(platform: Platform, args: &[S]) -> Result<Action, String> {
    let mut q = QemuRun {
        platform,
        ..QemuRun::default()
    };
    // `-device virtio-serial-device`, `-device virtconsole,chardev=…` and
    // `-chardev testdev,id=…`, in any order: chr-testdev once all are read.
    let mut serial_parts = SerialParts::default();
    let mut it = args.iter().map(AsRef::as_ref);
    while let Some(arg) = it.next() {
        let opt = option(arg)?;
        let v = if opt.spec().takes_value {
            it.next()
                .ok_or_else(|| format!("QEMU option '{arg}' needs a value"))?
        } else {
            ""
        };
        if let Some(action) = apply(opt, arg, v, &mut q, &mut serial_parts)? {
            return Ok(action);
        }
    }
    if let Some(d) = serial_parts.resolve(&mut q.warnings)? {
        q.devices.push(d);
    }
    Ok(Action::Run(q))
}

/// The option `arg` names (`-name` or `--name`).
fn option(arg: &str) -> Result<Opt, String> {
    let bare = match arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) {
        Some(n) if !n.is_empty() => n,
        _ => {
            return Err(format!(
                "unexpected argument '{arg}': QEMU would take it as a disk image, and \
                 trapline has no disks (boot a guest with -kernel FILE)"
            ))
        }
    };
    Opt::from_name(bare).ok_or_else(|| {
        format!(
            "unsupported QEMU option '{arg}' (trapline accepts: {})",
            accepted_list()
        )
    })
}

/// Option `opt` (spelt `arg`) with its value `v` (empty for one that takes
/// none) into `q`; an [`Action`] that answers at once (help, a listing).
fn apply(
    opt: Opt,
    arg: &str,
    v: &str,
    q: &mut QemuRun,
    serial_parts: &mut SerialParts,
) -> Result<Option<Action>, String> {
    let platform = q.platform;
    match opt {
        Opt::Kernel => q.kernel = Some(v.to_owned()),
        Opt::Append => q.append = Some(v.to_owned()),
        Opt::Initrd => q.initrd = Some(parse_initrd(v)?),
        Opt::Smp => q.smp = Some(parse_smp(v, &mut q.warnings)?),
        Opt::Mem => q.mem_mib = Some(parse_mem(v)?),
        Opt::Device => match parse_device(v, platform)? {
            DeviceSpec::Add(Some(d)) => {
                if !q.devices.contains(&d) {
                    q.devices.push(d)
                }
            }
            DeviceSpec::Add(None) => {}
            DeviceSpec::Serial(part) => serial_parts.add(part)?,
            DeviceSpec::List => return Ok(Some(Action::ListDevices)),
            DeviceSpec::Options(n) => return Ok(Some(Action::DeviceOptions(n))),
        },
        Opt::Chardev => match parse_chardev(v)? {
            ChardevSpec::Testdev(id) => serial_parts.add_chardev(id)?,
            ChardevSpec::List => return Ok(Some(Action::ListChardevs)),
        },
        Opt::Serial => {
            if q.serial.is_some() {
                return Err(format!(
                    "a second -serial ('{v}'): trapline has one serial port (COM1)"
                ));
            }
            q.serial = Some(parse_serial(v)?);
        }
        Opt::Display => only("-display", v, "none", "trapline has no display")?,
        Opt::Vga => only("-vga", v, "none", "trapline has no display")?,
        Opt::Vnc => only("-vnc", v, "none", "trapline has no display")?,
        Opt::Nographic => q.nographic = true,
        Opt::Nodefaults => q.nodefaults = true,
        // trapline never reboots: a reset or triple fault ends the run
        // (status 10). -name only titles QEMU's windows and logs.
        Opt::NoReboot | Opt::EnableKvm | Opt::NoUserConfig | Opt::Name => {}
        Opt::Machine | Opt::MachineShort => match parse_machine(v, q)? {
            MachineHelp::None => {}
            MachineHelp::Types => return Ok(Some(Action::ListMachines)),
            MachineHelp::Options => return Ok(Some(Action::MachineOptions)),
        },
        Opt::Accel => {
            if parse_accel(v, q)? {
                return Ok(Some(Action::ListAccels));
            }
        }
        Opt::Global => only(
            "-global",
            v,
            "kvm-pit.lost_tick_policy=discard",
            "trapline accepts only that -global",
        )?,
        Opt::Cpu => {
            if is_help(v) {
                return Ok(Some(Action::ListCpus));
            }
            parse_cpu(v, q);
        }
        Opt::H | Opt::Help => return Ok(Some(Action::Help(Spelling::of(arg)))),
        Opt::Version => return Ok(Some(Action::Version(Spelling::of(arg)))),
    }
    Ok(None)
}

/// `-cpu MODEL[,PROPS]`: harnesses written for QEMU pass models and
/// properties trapline does not model; those are skipped with a warning.
fn parse_cpu(v: &str, q: &mut QemuRun) {
    let (model, ignored) = trapline_machine::CpuModel::parse_lenient(v);
    q.warnings.extend(
        ignored
            .into_iter()
            .map(|w| format!("-cpu {v}: {w} (skipped)")),
    );
    q.cpu = Some(model);
}
