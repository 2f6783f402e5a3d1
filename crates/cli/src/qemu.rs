//! QEMU-compatible spellings: `trapline -kernel FILE -smp N …`.
//!
//! Harnesses written for QEMU (kvm-unit-tests' `run_tests.sh` above all)
//! drive `qemu-system-x86_64` with single-dash options. When trapline's first
//! argument is one of those, `main` hands the whole argv to [`main`] here. We
//! accept exactly the options whose meaning overlaps `trapline run`, turn
//! them into a [`RunArgs`] and let [`run_cmd::run`] build and run the machine,
//! so the exit statuses are `trapline run`'s. Anything else is refused by
//! name with status 2; nothing is dropped silently, and what is accepted but
//! ignored is listed in the README.

use std::ffi::{OsStr, OsString};
use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use trapline_machine::status;

use crate::args::{Cli, DeviceArg, IrqchipArg, RunArgs, SerialSpec};
use crate::run_cmd;

/// The QEMU version trapline claims in `-version` and `-h`. A compatibility
/// string for version-sniffing scripts: the QEMU whose `-machine pc`
/// behaviour trapline's machine follows for kvm-unit-tests.
pub const QEMU_COMPAT_VERSION: &str = "7.2.0";

/// `trapline run --smp`'s and `--mem`'s upper limits (args.rs; a unit test
/// checks the two agree).
const MAX_VCPUS: u64 = 64;
const MAX_MEM_MIB: u64 = 3072;

const MIB: u128 = 1 << 20;

/// The QEMU options trapline accepts, without their leading dash, and
/// whether each takes a value.
const OPTIONS: &[(&str, bool)] = &[
    ("kernel", true),
    ("append", true),
    ("initrd", true),
    ("smp", true),
    ("m", true),
    ("device", true),
    ("serial", true),
    ("display", true),
    ("nographic", false),
    ("nodefaults", false),
    ("no-reboot", false),
    ("machine", true),
    ("M", true),
    ("accel", true),
    ("enable-kvm", false),
    ("global", true),
    ("cpu", true),
    ("name", true),
    ("vga", true),
    ("no-user-config", false),
    ("h", false),
    ("help", false),
    ("version", false),
];

fn option(name: &str) -> Option<(&'static str, bool)> {
    OPTIONS.iter().copied().find(|(n, _)| *n == name)
}

fn accepted_list() -> String {
    OPTIONS
        .iter()
        .map(|(n, _)| format!("-{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `main` should hand argv to [`main`]: the first argument is a
/// single-dash option (QEMU's style; trapline's own flags are `--long`,
/// except clap's `-V`), or the two-dash spelling of an option in the table
/// above (`--no-reboot`, which run_tests.sh puts first, `--help`,
/// `--version`).
pub fn is_qemu_style(arg: &OsStr) -> bool {
    let Some(a) = arg.to_str() else {
        return false;
    };
    if let Some(long) = a.strip_prefix("--") {
        return option(long).is_some();
    }
    a.len() > 1 && a.starts_with('-') && a != "-V"
}

/// What a QEMU-style command line asks for.
#[derive(Debug, PartialEq)]
pub enum Action {
    /// Boot a guest.
    Run(QemuRun),
    /// `-h`, `-help`, `--help`.
    Help,
    /// `-version`, `--version`.
    Version,
    /// `-device help` / `-device ?`.
    ListDevices,
    /// `-device NAME,help`.
    DeviceOptions(&'static str),
    /// `-machine help`.
    ListMachines,
    /// `-cpu help`.
    ListCpus,
    /// `-accel help`.
    ListAccels,
}

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

/// Parse QEMU-style arguments (without argv[0]). Options are processed in
/// order; `-h`, `-version` and the `help` listings act where they appear,
/// as in QEMU. `Err` is a usage error message (status 2).
pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Action, String> {
    let mut q = QemuRun::default();
    let mut it = args.iter().map(AsRef::as_ref);
    while let Some(arg) = it.next() {
        let bare = match arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) {
            Some(n) if !n.is_empty() => n,
            _ => {
                return Err(format!(
                    "unexpected argument '{arg}': QEMU would take it as a disk image, and \
                     trapline has no disks (boot a guest with -kernel FILE)"
                ))
            }
        };
        let Some((name, takes_value)) = option(bare) else {
            return Err(format!(
                "unsupported QEMU option '{arg}' (trapline accepts: {})",
                accepted_list()
            ));
        };
        let v = if takes_value {
            it.next()
                .ok_or_else(|| format!("QEMU option '{arg}' needs a value"))?
        } else {
            ""
        };
        match name {
            "kernel" => q.kernel = Some(v.to_owned()),
            "append" => q.append = Some(v.to_owned()),
            "initrd" => q.initrd = Some(parse_initrd(v)?),
            "smp" => q.smp = Some(parse_smp(v, &mut q.warnings)?),
            "m" => q.mem_mib = Some(parse_mem(v)?),
            "device" => match parse_device(v)? {
                DeviceSpec::Add(Some(d)) => {
                    if !q.devices.contains(&d) {
                        q.devices.push(d)
                    }
                }
                DeviceSpec::Add(None) => {}
                DeviceSpec::List => return Ok(Action::ListDevices),
                DeviceSpec::Options(n) => return Ok(Action::DeviceOptions(n)),
            },
            "serial" => {
                if q.serial.is_some() {
                    return Err(format!(
                        "a second -serial ('{v}'): trapline has one serial port (COM1)"
                    ));
                }
                q.serial = Some(parse_serial(v)?);
            }
            "display" => only("-display", v, "none", "trapline has no display")?,
            "vga" => only("-vga", v, "none", "trapline has no display")?,
            "nographic" => q.nographic = true,
            "nodefaults" => q.nodefaults = true,
            // trapline never reboots: a reset or triple fault ends the run
            // (status 10). -name only titles QEMU's windows and logs.
            "no-reboot" | "enable-kvm" | "no-user-config" | "name" => {}
            "machine" | "M" => {
                if parse_machine(v, &mut q)? {
                    return Ok(Action::ListMachines);
                }
            }
            "accel" => {
                if parse_accel(v)? {
                    return Ok(Action::ListAccels);
                }
            }
            "global" => only(
                "-global",
                v,
                "kvm-pit.lost_tick_policy=discard",
                "trapline accepts only that -global",
            )?,
            "cpu" => {
                if is_help(v) {
                    return Ok(Action::ListCpus);
                }
                // Harnesses written for QEMU pass models and properties
                // trapline does not model: skip those with a warning.
                let (model, ignored) = trapline_machine::CpuModel::parse_lenient(v);
                q.warnings.extend(
                    ignored
                        .into_iter()
                        .map(|w| format!("-cpu {v}: {w} (skipped)")),
                );
                q.cpu = Some(model);
            }
            "h" | "help" => return Ok(Action::Help),
            "version" => return Ok(Action::Version),
            _ => unreachable!("every entry of OPTIONS is handled: {name}"),
        }
    }
    Ok(Action::Run(q))
}

fn is_help(v: &str) -> bool {
    matches!(v, "?" | "help")
}

fn only(opt: &str, v: &str, allowed: &str, why: &str) -> Result<(), String> {
    if v == allowed {
        Ok(())
    } else {
        Err(format!(
            "unsupported {opt} '{v}': {why} (only {opt} {allowed})"
        ))
    }
}

/// Split a QEMU option list on commas; `,,` is a literal comma.
fn split_opts(v: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ',' {
            if chars.peek() == Some(&',') {
                chars.next();
                items.last_mut().unwrap().push(',');
            } else {
                items.push(String::new());
            }
        } else {
            items.last_mut().unwrap().push(c);
        }
    }
    items
}

/// A QEMU integer property: `0x` hex, leading-0 octal, or decimal.
fn parse_uint(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

fn parse_initrd(v: &str) -> Result<PathBuf, String> {
    let items = split_opts(v);
    if items.len() != 1 || items[0].is_empty() {
        return Err(format!(
            "unsupported -initrd '{v}': trapline hands the guest one Multiboot module, \
             not a comma-separated list"
        ));
    }
    Ok(PathBuf::from(&items[0]))
}

/// `-smp N`, `-smp cpus=N[,maxcpus=M][,sockets=…,dies=…,clusters=…,cores=…,threads=…]`
/// or `-smp N,sockets=…`: the number of vCPUs. As in QEMU, the count is
/// `cpus`, else `maxcpus`, else the product of the topology.
fn parse_smp(v: &str, warnings: &mut Vec<String>) -> Result<u32, String> {
    let bad = |why: String| format!("invalid -smp '{v}': {why}");
    let (mut cpus, mut maxcpus) = (None, None);
    let mut topology: Vec<(String, u64)> = Vec::new();
    for (i, item) in split_opts(v).iter().enumerate() {
        let (k, val) = match item.split_once('=') {
            Some(kv) => kv,
            None if i == 0 => ("cpus", item.as_str()),
            None => return Err(bad(format!("'{item}' is not KEY=VALUE"))),
        };
        let n: u64 = val
            .parse()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| bad(format!("{k}='{val}' is not a number of at least 1")))?;
        match k {
            "cpus" => cpus = Some(n),
            "maxcpus" => maxcpus = Some(n),
            "sockets" | "dies" | "clusters" | "cores" | "threads" => {
                topology.push((k.to_owned(), n))
            }
            _ => {
                return Err(bad(format!(
                    "unsupported key '{k}' (trapline takes cpus, maxcpus, sockets, dies, \
                     clusters, cores, threads)"
                )))
            }
        }
    }
    let product = (!topology.is_empty())
        .then(|| topology.iter().fold(1u64, |p, (_, n)| p.saturating_mul(*n)));
    let n = cpus.or(maxcpus).or(product).unwrap_or(1);
    if n > MAX_VCPUS {
        // QEMU's words: kvm-unit-tests' `run_tests.sh --probe-maxsmp`
        // greps for "SMP CPUs" and takes the line's last word as the limit.
        return Err(format!(
            "Invalid SMP CPUs {n}. The max CPUs supported by machine 'pc' is {MAX_VCPUS}"
        ));
    }
    if let Some(m) = maxcpus {
        if m < n {
            return Err(bad(format!("maxcpus ({m}) is less than cpus ({n})")));
        }
        if m > n {
            warnings.push(format!(
                "-smp maxcpus={m} ignored: trapline has no CPU hotplug; the guest gets {n} vCPUs"
            ));
        }
    }
    if topology.iter().any(|(_, t)| *t > 1) {
        let t: Vec<String> = topology.iter().map(|(k, n)| format!("{k}={n}")).collect();
        warnings.push(format!(
            "-smp topology ({}) ignored: trapline does not model sockets, cores or threads; \
             the guest gets {n} vCPUs",
            t.join(",")
        ));
    }
    Ok(n as u32)
}

/// `-m SIZE` / `-m size=SIZE`: MiB without a suffix, else B/K/M/G/T
/// (either case, fractions allowed, as QEMU does). Whole MiB only.
fn parse_mem(v: &str) -> Result<u64, String> {
    let bad = |why: &str| format!("invalid -m '{v}': {why}");
    let mut size = None;
    for (i, item) in split_opts(v).iter().enumerate() {
        match item.split_once('=') {
            Some(("size", s)) => size = Some(s.to_owned()),
            None if i == 0 => size = Some(item.clone()),
            Some((k, _)) if matches!(k, "slots" | "maxmem") => {
                return Err(bad(&format!(
                    "'{k}' is not supported: trapline has no memory hotplug"
                )))
            }
            _ => {
                return Err(bad(&format!(
                    "unsupported '{item}' (trapline takes SIZE or size=SIZE)"
                )))
            }
        }
    }
    let size = size.ok_or_else(|| bad("no size"))?;
    let bytes =
        parse_size(&size, MIB).ok_or_else(|| bad("expected a size such as 256, 256M or 1G"))?;
    if !bytes.is_multiple_of(MIB) {
        return Err(bad("trapline sizes guest RAM in whole MiB"));
    }
    let mib = bytes / MIB;
    if !(1..=u128::from(MAX_MEM_MIB)).contains(&mib) {
        return Err(bad(&format!(
            "trapline gives a guest 1 MiB to {MAX_MEM_MIB} MiB of RAM"
        )));
    }
    Ok(mib as u64)
}

/// A size in bytes: digits with an optional fraction, then an optional
/// B/K/M/G/T suffix (no suffix: `default_unit`). Exact; `None` when the
/// result is not a whole number of bytes or the text is not a size.
fn parse_size(s: &str, default_unit: u128) -> Option<u128> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let unit: u128 = match suffix.to_ascii_lowercase().as_str() {
        "" => default_unit,
        "b" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = format!("{int}{frac}");
    if digits.is_empty() || digits.len() > 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scaled = digits.parse::<u128>().ok()? * unit;
    let den = 10u128.pow(frac.len() as u32);
    scaled.is_multiple_of(den).then_some(scaled / den)
}

enum DeviceSpec {
    /// A device to add (`None`: isa-debug-exit, which is always there).
    Add(Option<DeviceArg>),
    List,
    Options(&'static str),
}

const DEVICES_HINT: &str = "trapline has isa-debug-exit, pc-testdev and pci-testdev; \
                            -device help lists them";

fn parse_device(v: &str) -> Result<DeviceSpec, String> {
    let items = split_opts(v);
    let first = items[0].as_str();
    let driver = first.strip_prefix("driver=").unwrap_or(first);
    if is_help(driver) {
        return Ok(DeviceSpec::List);
    }
    let (name, dev) = match driver {
        "pci-testdev" => ("pci-testdev", Some(DeviceArg::PciTestdev)),
        "pc-testdev" => ("pc-testdev", Some(DeviceArg::PcTestdev)),
        "isa-debug-exit" => ("isa-debug-exit", None),
        _ => {
            return Err(format!(
                "unsupported QEMU device '{driver}' ({DEVICES_HINT})"
            ))
        }
    };
    let (mut iobase, mut iosize) = (None, None);
    for item in &items[1..] {
        if is_help(item) {
            return Ok(DeviceSpec::Options(name));
        }
        let number = |val: &str| {
            parse_uint(val).ok_or_else(|| format!("-device {v}: '{item}' is not a number"))
        };
        match (dev, item.split_once('=')) {
            (_, Some(("id", _))) => {}
            (None, Some(("iobase", val))) => iobase = Some(number(val)?),
            (None, Some(("iosize", val))) => iosize = Some(number(val)?),
            _ => {
                let takes = if dev.is_none() {
                    "iobase=0xf4,iosize=0x4"
                } else {
                    "no properties but id="
                };
                return Err(format!(
                    "-device {v}: unsupported property '{item}' (trapline's {name} takes {takes})"
                ));
            }
        }
    }
    if dev.is_none() && (iobase, iosize) != (Some(0xf4), Some(4)) {
        let show = |x: Option<u64>, qemu_default: &str| match x {
            Some(x) => format!("{x:#x}"),
            None => format!("unset (QEMU's default is {qemu_default})"),
        };
        return Err(format!(
            "unsupported -device {v}: trapline's isa-debug-exit is always present at \
             iobase=0xf4,iosize=0x4 and takes no other values (got iobase={}, iosize={})",
            show(iobase, "0x501"),
            show(iosize, "0x2")
        ));
    }
    Ok(DeviceSpec::Add(dev))
}

fn parse_serial(v: &str) -> Result<SerialSpec, String> {
    match v {
        "stdio" => Ok(SerialSpec::Stdio),
        "none" => Ok(SerialSpec::None),
        _ => match v.strip_prefix("file:") {
            Some(p) if !p.is_empty() => Ok(SerialSpec::File(PathBuf::from(p))),
            _ => Err(format!(
                "unsupported -serial '{v}' (trapline takes stdio, none or file:PATH)"
            )),
        },
    }
}

/// `v` is an accelerator list (QEMU tries them in order); trapline is KVM
/// only, so KVM must come first. `spelling` is how the user wrote it.
fn check_accel(v: &str, spelling: &str) -> Result<(), String> {
    if v.split(':').next() == Some("kvm") {
        Ok(())
    } else {
        Err(format!(
            "unsupported {spelling}: trapline runs guests only on KVM (accel=kvm)"
        ))
    }
}

/// `-machine [type=]pc[,accel=kvm][,pit=on|off][,kernel_irqchip=on|split|off]`.
/// `Ok(true)`: `-machine help`.
fn parse_machine(v: &str, q: &mut QemuRun) -> Result<bool, String> {
    for (i, item) in split_opts(v).iter().enumerate() {
        let (k, val) = match item.split_once('=') {
            Some(kv) => kv,
            None if i == 0 => ("type", item.as_str()),
            None => return Err(format!("unsupported -machine property '{item}' in '{v}'")),
        };
        match (k, val) {
            ("type", t) if is_help(t) => return Ok(true),
            ("type", "pc") => {}
            ("type", t) => {
                return Err(format!(
                    "unsupported machine type '{t}': trapline's machine stands in for QEMU's \
                     -machine pc"
                ))
            }
            ("accel", a) => check_accel(a, &format!("-machine accel={a}"))?,
            ("pit", "on") => q.no_pit = false,
            ("pit", "off") => q.no_pit = true,
            ("kernel_irqchip" | "kernel-irqchip", "on" | "true" | "yes") => {
                q.irqchip = Some(IrqchipArg::Kernel)
            }
            ("kernel_irqchip" | "kernel-irqchip", "split") => q.irqchip = Some(IrqchipArg::Split),
            ("kernel_irqchip" | "kernel-irqchip", "off" | "false" | "no") => {
                q.irqchip = Some(IrqchipArg::None)
            }
            _ => {
                return Err(format!(
                    "unsupported -machine property '{item}' (trapline accepts pc, accel=kvm, \
                     pit=on|off, kernel_irqchip=on|split|off)"
                ))
            }
        }
    }
    Ok(false)
}

/// `-accel kvm`. `Ok(true)`: `-accel help`.
fn parse_accel(v: &str) -> Result<bool, String> {
    let items = split_opts(v);
    let first = items[0].as_str();
    let name = first.strip_prefix("accel=").unwrap_or(first);
    if is_help(name) {
        return Ok(true);
    }
    check_accel(name, &format!("-accel {name}"))?;
    if let Some(p) = items.get(1) {
        return Err(format!(
            "unsupported -accel property '{p}': trapline takes plain -accel kvm"
        ));
    }
    Ok(false)
}

fn version_line() -> String {
    format!(
        "QEMU emulator version {QEMU_COMPAT_VERSION} (trapline {})",
        env!("CARGO_PKG_VERSION")
    )
}

fn help_text() -> String {
    let native = Cli::command().render_help().to_string();
    format!(
        "{version}
trapline — QEMU-compatible front end to trapline, a lean VMM on Linux KVM.
The QEMU version above is a compatibility string for scripts that look for
QEMU: trapline is not QEMU and runs no QEMU code.

usage: trapline -kernel FILE [QEMU options]    (the QEMU spellings below)
       trapline run --kernel FILE [flags]      (trapline's own; trapline run --help)

QEMU options trapline accepts (two dashes work too, as in QEMU):
  -kernel FILE      guest image: Multiboot v1 ELF32 (kvm-unit-tests' .flat) or
                    ELF64, or builtin:NAME for one of trapline's payloads
  -append STR       guest command line (argv[0] is the -kernel path)
  -initrd FILE      one Multiboot module (kvm-unit-tests' environment file)
  -smp N            vCPUs, 1-{MAX_VCPUS}; also cpus=N[,maxcpus=…,sockets=…,cores=…,threads=…]
                    (the CPU count is taken; topology and hotplug are not modelled)
  -m SIZE           guest RAM: MiB, or with a B/K/M/G/T suffix, or size=SIZE;
                    1 MiB to {MAX_MEM_MIB} MiB, default 128M
  -device pci-testdev | pc-testdev | isa-debug-exit,iobase=0xf4,iosize=0x4 | help
                    (isa-debug-exit is always present, at exactly those values)
  -serial stdio|none|file:PATH
                    COM1 (default stdio; unconnected under -nodefaults)
  -display none, -vga none, -nographic (= -display none -serial stdio)
  -machine [pc,]accel=kvm[,pit=on|off][,kernel_irqchip=on|split|off]    (also -M)
  -accel kvm, -enable-kvm
  -global kvm-pit.lost_tick_policy=discard
  -cpu MODEL[,…]    host (default), max or qemu64, then +flag/-flag (qemu64,-cx16)
                    on this host; QEMU models and flags are ignored
  -name NAME, -nodefaults, -no-reboot, -no-user-config    accepted
  -h, -help, --help, -version, --version
Any other option is refused by name (status 2). Exit statuses are those of
trapline run: (V<<1)|1 when the guest writes V to port 0xf4, 4 when the kernel
cannot be loaded, 6 without KVM, 10 on a triple fault (trapline never reboots).

trapline's own commands:
{native}",
        version = version_line(),
    )
}

fn print_out(text: &str) -> i32 {
    // A closed pipe (`… | grep -q`) is not an error worth a panic.
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    0
}

fn device_list() -> &'static str {
    "Misc devices:
name \"isa-debug-exit\", bus ISA, desc \"always present in trapline (iobase=0xf4,iosize=0x4)\"
name \"pc-testdev\", bus ISA
name \"pci-testdev\", bus PCI, desc \"PCI Test Device\"
"
}

fn device_options(name: &str) -> String {
    match name {
        "isa-debug-exit" => "isa-debug-exit options:
  iobase=<uint32>        - 0xf4 (the only value trapline accepts)
  iosize=<uint32>        - 0x4 (the only value trapline accepts)
"
        .to_owned(),
        _ => format!("There are no options for {name}.\n"),
    }
}

/// Entry point for a QEMU-style command line: `argv` is the whole argv,
/// argv[0] included. Returns the process exit status.
pub fn main(argv: impl IntoIterator<Item = OsString>) -> i32 {
    let mut args = Vec::new();
    for a in argv.into_iter().skip(1) {
        match a.into_string() {
            Ok(s) => args.push(s),
            Err(a) => {
                eprintln!(
                    "trapline: argument '{}' is not valid UTF-8",
                    a.to_string_lossy()
                );
                return status::USAGE;
            }
        }
    }
    let action = match parse(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("trapline: {e}");
            return status::USAGE;
        }
    };
    match action {
        Action::Run(q) => launch(q),
        Action::Help => print_out(&help_text()),
        Action::Version => print_out(&format!(
            "{}\ntrapline {} is not QEMU: the QEMU version is a compatibility string\n",
            version_line(),
            env!("CARGO_PKG_VERSION")
        )),
        Action::ListDevices => print_out(device_list()),
        Action::DeviceOptions(name) => print_out(&device_options(name)),
        Action::ListMachines => print_out(
            "Supported machines are:\n\
             pc                   Standard PC (trapline's PC machine, KVM only) (default)\n",
        ),
        Action::ListCpus => print_out(
            "Available CPUs:\n\
             x86 host             KVM processor with all supported host features\n\
             x86 max              Enables all features supported by the accelerator in the current host\n\
             x86 qemu64           QEMU Virtual CPU version 2.5+\n",
        ),
        Action::ListAccels => print_out("Accelerators supported in QEMU binary:\nkvm\n"),
    }
}

fn launch(q: QemuRun) -> i32 {
    for w in &q.warnings {
        eprintln!("trapline: warning: {w}");
    }
    let a = match q.into_run_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("trapline: {e}");
            return status::USAGE;
        }
    };
    // QEMU's order: the accelerator, then the kernel. run_tests.sh's probe
    // (the same command line with `-kernel _NO_FILE_4Uhere_`) must see
    // "could not load kernel" only when everything before it would work.
    if let Err(e) = trapline_machine::HostKvm::open_from_env() {
        eprintln!("trapline: error: {e}");
        return status::NO_KVM;
    }
    if let Err(e) = check_kernel(&a.kernel) {
        eprintln!("trapline: error: {e}");
        return status::BAD_IMAGE;
    }
    run_cmd::run(a)
}

/// Whether the kernel can be opened, in the words run_tests.sh greps for
/// (`could not load kernel '<path>'`, on one line with the path).
fn check_kernel(spec: &str) -> Result<(), String> {
    let fail = |why: &dyn Display| format!("could not load kernel '{spec}': {why}");
    if spec.starts_with("builtin:") {
        return run_cmd::read_kernel(spec).map(drop).map_err(|e| fail(&e));
    }
    match std::fs::metadata(spec) {
        Err(e) => Err(fail(&e)),
        Ok(m) if m.is_dir() => Err(fail(&"it is a directory")),
        Ok(_) => std::fs::File::open(spec).map(drop).map_err(|e| fail(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(args: &[&str]) -> QemuRun {
        match parse(args) {
            Ok(Action::Run(q)) => q,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn err_of(args: &[&str]) -> String {
        match parse(args) {
            Err(e) => e,
            other => panic!("{args:?} should be refused: {other:?}"),
        }
    }

    fn smp(v: &str) -> Result<u32, String> {
        parse_smp(v, &mut Vec::new())
    }

    /// The command line kvm-unit-tests' run_tests.sh builds (spec §5.3).
    const RUN_TESTS: &[&str] = &[
        "--no-reboot",
        "-nodefaults",
        "-global",
        "kvm-pit.lost_tick_policy=discard",
        "-device",
        "pc-testdev",
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x4",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-device",
        "pci-testdev",
        "-machine",
        "accel=kvm",
        "-kernel",
        "x86/vmexit.flat",
        "-smp",
        "2",
        "-append",
        "ipi",
        "-machine",
        "pit=off",
        "-initrd",
        "/tmp/env",
    ];

    #[test]
    fn the_run_tests_command_line_maps_onto_trapline_run() {
        let q = run_of(RUN_TESTS);
        assert!(q.warnings.is_empty(), "{:?}", q.warnings);
        let a = q.into_run_args().unwrap();
        assert_eq!(a.kernel, "x86/vmexit.flat");
        assert_eq!((a.smp, a.mem, a.append.as_str()), (2, 128, "ipi"));
        assert_eq!(a.initrd, Some(PathBuf::from("/tmp/env")));
        assert_eq!(a.serial, SerialSpec::Stdio);
        assert_eq!(a.devices, vec![DeviceArg::PcTestdev, DeviceArg::PciTestdev]);
        assert!(a.timeout.is_none() && !a.ecam_ro);
        // -machine pit=off: no PIT, as in QEMU.
        assert!(a.no_pit);
        assert_eq!(a.irqchip, IrqchipArg::Kernel);
    }

    #[test]
    fn kernel_irqchip_and_pit_map_onto_irqchip_and_no_pit() {
        for (machine, irqchip, no_pit) in [
            ("pc", IrqchipArg::Kernel, false),
            ("pc,kernel_irqchip=on", IrqchipArg::Kernel, false),
            ("pc,kernel_irqchip=split", IrqchipArg::Split, false),
            ("pc,kernel-irqchip=off,pit=off", IrqchipArg::None, true),
            ("pit=off,pit=on", IrqchipArg::Kernel, false),
        ] {
            let a = run_of(&["-machine", machine, "-kernel", "k"])
                .into_run_args()
                .unwrap();
            assert_eq!((a.irqchip, a.no_pit), (irqchip, no_pit), "{machine}");
        }
    }

    #[test]
    fn defaults_match_trapline_run() {
        let a = run_of(&["-kernel", "k"]).into_run_args().unwrap();
        let crate::args::Command::Run(n) =
            Cli::try_parse_from(["trapline", "run", "--kernel", "k"])
                .unwrap()
                .command
        else {
            panic!()
        };
        assert_eq!((a.smp, a.mem, &a.append), (n.smp, n.mem, &n.append));
        assert_eq!(
            (&a.serial, a.timeout, &a.devices),
            (&n.serial, n.timeout, &n.devices)
        );
        assert_eq!((a.ecam_ro, &a.initrd), (n.ecam_ro, &n.initrd));
    }

    #[test]
    fn limits_match_trapline_run() {
        let ok = |flag: &str, v: u64| {
            Cli::try_parse_from(["trapline", "run", "--kernel", "k", flag, &v.to_string()]).is_ok()
        };
        assert!(ok("--smp", MAX_VCPUS) && !ok("--smp", MAX_VCPUS + 1));
        assert!(ok("--mem", MAX_MEM_MIB) && !ok("--mem", MAX_MEM_MIB + 1));
    }

    #[test]
    fn every_single_valued_option_keeps_its_last_value_and_two_dashes_work() {
        let q = run_of(&[
            "-kernel", "a", "--kernel", "b", "-append", "x", "-append", "y z", "-initrd", "i",
        ]);
        assert_eq!(q.kernel.as_deref(), Some("b"));
        assert_eq!(q.append.as_deref(), Some("y z"));
        assert_eq!(q.initrd, Some(PathBuf::from("i")));
    }

    #[test]
    fn harmless_options_are_accepted() {
        let q = run_of(&[
            "-kernel",
            "k",
            "-no-reboot",
            "--no-reboot",
            "-enable-kvm",
            "-no-user-config",
            "-name",
            "guest=x,debug-threads=on",
            "-vga",
            "none",
            "-display",
            "none",
            "-accel",
            "kvm",
            "-machine",
            "pc",
            "-M",
            "pc,accel=kvm:tcg,pit=on,kernel_irqchip=on",
            "-machine",
            "type=pc,kernel-irqchip=true",
            "-global",
            "kvm-pit.lost_tick_policy=discard",
        ]);
        assert!(q.warnings.is_empty());
        assert_eq!(q.kernel.as_deref(), Some("k"));
    }

    #[test]
    fn cpu_models_and_flags_are_honoured() {
        let q = run_of(&["-cpu", "qemu64,+x2apic,-cx16", "-kernel", "k"]);
        assert!(q.warnings.is_empty(), "{:?}", q.warnings);
        assert_eq!(
            q.cpu.as_ref().map(|c| c.to_string()).as_deref(),
            Some("qemu64,+x2apic,-cx16")
        );
        let q = run_of(&["-cpu", "max,vendor=GenuineIntel", "-kernel", "k"]);
        assert_eq!(q.warnings.len(), 1, "{:?}", q.warnings);
        assert!(
            q.warnings[0].contains("vendor=GenuineIntel"),
            "{:?}",
            q.warnings
        );
        assert_eq!(parse(&["-cpu", "help"]), Ok(Action::ListCpus));
        assert_eq!(parse(&["-cpu", "?"]), Ok(Action::ListCpus));
    }

    #[test]
    fn smp_forms() {
        assert_eq!(smp("1"), Ok(1));
        assert_eq!(smp("4"), Ok(4));
        assert_eq!(smp("cpus=3"), Ok(3));
        assert_eq!(smp("2,sockets=1,cores=2,threads=1"), Ok(2));
        assert_eq!(smp("cpus=4,maxcpus=4"), Ok(4));
        assert_eq!(smp("sockets=2,cores=2,threads=2"), Ok(8));
        assert_eq!(smp("maxcpus=6"), Ok(6));
        assert_eq!(smp("64"), Ok(64));
        let mut w = Vec::new();
        assert_eq!(parse_smp("2,maxcpus=4,sockets=2", &mut w), Ok(2));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().all(|w| w.contains("ignored")), "{w:?}");
        let mut w = Vec::new();
        assert_eq!(parse_smp("2,sockets=1,cores=1,threads=1", &mut w), Ok(2));
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn smp_refusals() {
        for bad in [
            "0",
            "65",
            "x",
            "",
            "cpus=",
            "2,4",
            "cpus=2,maxcpus=1",
            "2,books=2",
            "-1",
            "cpus=0",
            "sockets=65",
        ] {
            let e = smp(bad).unwrap_err();
            assert!(e.contains("-smp") || e.contains("SMP CPUs"), "{bad}: {e}");
        }
        // Above the limit, QEMU's sentence, with the limit as its last word.
        for (v, n) in [("65", 65), ("sockets=65", 65), ("cpus=1000", 1000)] {
            assert_eq!(
                smp(v).unwrap_err(),
                format!(
                    "Invalid SMP CPUs {n}. The max CPUs supported by machine 'pc' is {MAX_VCPUS}"
                )
            );
        }
    }

    #[test]
    fn memory_sizes() {
        for (v, mib) in [
            ("256", 256),
            ("1", 1),
            ("64M", 64),
            ("64m", 64),
            ("1G", 1024),
            ("1g", 1024),
            ("1.5G", 1536),
            ("3G", 3072),
            ("size=512M", 512),
            ("size=2G", 2048),
            ("524288K", 512),
            ("268435456B", 256),
            ("0.5G", 512),
            ("3072", 3072),
        ] {
            assert_eq!(parse_mem(v), Ok(mib), "{v}");
        }
        assert_eq!(run_of(&["-m", "1G", "-kernel", "k"]).mem_mib, Some(1024));
    }

    #[test]
    fn memory_refusals() {
        for bad in [
            "0",
            "3073",
            "4G",
            "1T",
            "1.7M",
            "1000K",
            "x",
            "",
            "12Q",
            "1..5G",
            "M",
            "256,slots=2,maxmem=1G",
            "size=1G,maxmem=2G",
            "foo=1",
            "99999999999999999999999G",
        ] {
            let e = parse_mem(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{bad}: {e}");
        }
    }

    #[test]
    fn devices() {
        let q = run_of(&[
            "-device",
            "pci-testdev",
            "-device",
            "pc-testdev",
            "-device",
            "pci-testdev",
            "-device",
            "isa-debug-exit,iobase=0xf4,iosize=0x4",
            "-device",
            "isa-debug-exit,iosize=4,iobase=244,id=dbg",
            "-device",
            "driver=pc-testdev,id=t",
        ]);
        assert_eq!(q.devices, vec![DeviceArg::PciTestdev, DeviceArg::PcTestdev]);
        assert_eq!(parse(&["-device", "?"]), Ok(Action::ListDevices));
        assert_eq!(parse(&["-device", "help"]), Ok(Action::ListDevices));
        assert_eq!(
            parse(&["-device", "isa-debug-exit,help"]),
            Ok(Action::DeviceOptions("isa-debug-exit"))
        );
        assert_eq!(
            parse(&["-device", "pci-testdev,?"]),
            Ok(Action::DeviceOptions("pci-testdev"))
        );
    }

    #[test]
    fn device_refusals_name_what_is_wrong() {
        for (v, needle) in [
            ("virtio-net-pci", "'virtio-net-pci'"),
            ("isa-debug-exit", "iobase=unset (QEMU's default is 0x501)"),
            (
                "isa-debug-exit,iobase=0x501,iosize=0x2",
                "iobase=0x501, iosize=0x2",
            ),
            ("isa-debug-exit,iobase=0xf4,iosize=0x2", "iosize=0x2"),
            ("isa-debug-exit,iobase=0xf4", "iosize=unset"),
            ("isa-debug-exit,iobase=zz,iosize=4", "'iobase=zz'"),
            ("isa-debug-exit,iobase=0xf4,iosize=0x4,foo=1", "'foo=1'"),
            ("pci-testdev,membar=4096", "'membar=4096'"),
            ("pc-testdev,addr=3", "'addr=3'"),
        ] {
            let e = err_of(&["-device", v]);
            assert!(e.contains(needle), "{v}: {e}");
        }
    }

    #[test]
    fn serial_and_display() {
        let s = |args: &[&str]| {
            let mut full = vec!["-kernel", "k"];
            full.extend_from_slice(args);
            run_of(&full).into_run_args().unwrap().serial
        };
        assert_eq!(s(&[]), SerialSpec::Stdio);
        assert_eq!(s(&["-serial", "stdio"]), SerialSpec::Stdio);
        assert_eq!(s(&["-serial", "none"]), SerialSpec::None);
        assert_eq!(
            s(&["-serial", "file:/tmp/s.txt"]),
            SerialSpec::File("/tmp/s.txt".into())
        );
        assert_eq!(s(&["-nodefaults"]), SerialSpec::None);
        assert_eq!(s(&["-nodefaults", "-nographic"]), SerialSpec::Stdio);
        assert_eq!(s(&["-nodefaults", "-serial", "stdio"]), SerialSpec::Stdio);
        assert_eq!(s(&["-nographic", "-serial", "none"]), SerialSpec::None);
        for (args, needle) in [
            (
                &["-serial", "tcp:localhost:4444"][..],
                "'tcp:localhost:4444'",
            ),
            (&["-serial", "file:"], "'file:'"),
            (&["-serial", "mon:stdio"], "'mon:stdio'"),
            (&["-serial", "stdio", "-serial", "none"], "one serial port"),
            (&["-display", "gtk"], "'gtk'"),
            (&["-display", "sdl"], "no display"),
            (&["-vga", "std"], "'std'"),
        ] {
            let e = err_of(args);
            assert!(e.contains(needle), "{args:?}: {e}");
        }
    }

    #[test]
    fn accelerator_and_machine_refusals() {
        for (args, needle) in [
            (&["-machine", "accel=tcg"][..], "accel=tcg"),
            (&["-machine", "pc,accel=tcg:kvm"], "-machine accel=tcg:kvm"),
            (&["-accel", "tcg"], "-accel tcg"),
            (
                &["-accel", "kvm,dirty-ring-size=65536"],
                "'dirty-ring-size=65536'",
            ),
            (&["-machine", "q35"], "'q35'"),
            (&["-machine", "pc,usb=on"], "'usb=on'"),
            (&["-machine", "pc,pit=maybe"], "'pit=maybe'"),
            (
                &["-global", "kvm-pit.lost_tick_policy=delay"],
                "lost_tick_policy=delay",
            ),
            (&["-global", "isa-debugcon.iobase=0x402"], "isa-debugcon"),
        ] {
            let e = err_of(args);
            assert!(e.contains(needle), "{args:?}: {e}");
        }
        assert_eq!(parse(&["-machine", "help"]), Ok(Action::ListMachines));
        assert_eq!(parse(&["-M", "?"]), Ok(Action::ListMachines));
        assert_eq!(parse(&["-accel", "help"]), Ok(Action::ListAccels));
    }

    #[test]
    fn unknown_options_missing_values_and_positionals_are_named() {
        let e = err_of(&["-kernel", "k", "-foo"]);
        assert!(
            e.starts_with("unsupported QEMU option '-foo' (trapline accepts: -kernel"),
            "{e}"
        );
        for opt in [
            "-hda", "-S", "-s", "-gdb", "-monitor", "-bios", "-netdev", "--frob", "-V",
        ] {
            let e = err_of(&[opt, "x"]);
            assert!(e.contains(&format!("'{opt}'")), "{e}");
        }
        for opt in [
            "-kernel", "-m", "-smp", "-device", "-append", "-initrd", "-cpu", "-serial",
        ] {
            let e = err_of(&[opt]);
            assert_eq!(e, format!("QEMU option '{opt}' needs a value"));
        }
        for pos in ["disk.img", "-", "--"] {
            let e = err_of(&["-kernel", "k", pos]);
            assert!(e.contains(&format!("'{pos}'")), "{e}");
        }
        let e = err_of(&["-initrd", "a,b"]);
        assert!(e.contains("one Multiboot module"), "{e}");
        assert_eq!(
            run_of(&["-initrd", "a,,b"]).initrd,
            Some(PathBuf::from("a,b"))
        );
    }

    #[test]
    fn a_missing_kernel_is_a_usage_error() {
        let e = run_of(&["-smp", "2"]).into_run_args().unwrap_err();
        assert!(e.contains("-kernel"), "{e}");
    }

    #[test]
    fn help_and_version_act_where_they_appear() {
        for h in ["-h", "-help", "--help"] {
            assert_eq!(parse(&[h]), Ok(Action::Help));
        }
        assert_eq!(parse(&["-version"]), Ok(Action::Version));
        assert_eq!(parse(&["--version"]), Ok(Action::Version));
        assert_eq!(parse(&["-kernel", "k", "-h", "-foo"]), Ok(Action::Help));
        assert!(parse(&["-foo", "-h"]).is_err());
        let h = help_text();
        assert!(
            h.starts_with("QEMU emulator version 7.2.0 (trapline "),
            "{h}"
        );
        assert!(h.contains("QEMU-compatible front end"), "{h}");
        assert!(
            h.contains("trapline run"),
            "the native help is there too: {h}"
        );
    }

    #[test]
    fn dispatch_rule() {
        for a in [
            "-kernel",
            "-m",
            "-smp",
            "-device",
            "-h",
            "-version",
            "-nodefaults",
            "--no-reboot",
            "--help",
            "--version",
            "-foo",
            "--kernel",
        ] {
            assert!(is_qemu_style(OsStr::new(a)), "{a}");
        }
        for a in ["run", "bench", "-V", "--frobnicate", "--", "-", "help", ""] {
            assert!(!is_qemu_style(OsStr::new(a)), "{a}");
        }
    }

    #[test]
    fn helpers() {
        assert_eq!(split_opts("a,b,,c,"), vec!["a", "b,c", ""]);
        assert_eq!(split_opts(""), vec![""]);
        assert_eq!(parse_uint("0xf4"), Some(0xf4));
        assert_eq!(parse_uint("0XF4"), Some(0xf4));
        assert_eq!(parse_uint("0364"), Some(0xf4));
        assert_eq!(parse_uint("244"), Some(0xf4));
        assert_eq!(parse_uint("0"), Some(0));
        assert_eq!(parse_uint("0x"), None);
        assert_eq!(parse_size("1.25K", MIB), Some(1280));
        assert_eq!(parse_size("1.0001K", MIB), None);
    }
}
