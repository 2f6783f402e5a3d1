//! The values of QEMU options: QEMU's comma lists, integers and sizes, and
//! each option's value checked against what trapline can do.

use std::path::PathBuf;

use super::device::DeviceSpec;
use super::platform::Platform;
use super::syntax::{is_help, parse_size, parse_uint, split_opts};
use super::translate::QemuRun;
use super::virt::{parse_virt_device, parse_virt_machine_prop};
use super::{MAX_MEM_MIB, MAX_VCPUS, MIB};
use crate::args::{DeviceArg, IrqchipArg, SerialSpec};

pub(super) fn parse_initrd(v: &str) -> Result<PathBuf, String> {
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
pub(super) fn parse_smp(v: &str, warnings: &mut Vec<String>) -> Result<u32, String> {
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
            "Invalid SMP CPUs {n}. The max CPUs supported by machine '{}' is {MAX_VCPUS}",
            Platform::HOST.machine()
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
pub(super) fn parse_mem(v: &str) -> Result<u64, String> {
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

const DEVICES_HINT: &str = "trapline has isa-debug-exit, pc-testdev and pci-testdev; \
                            -device help lists them";

pub(super) fn parse_device(v: &str, platform: Platform) -> Result<DeviceSpec, String> {
    let items = split_opts(v);
    let first = items[0].as_str();
    let driver = first.strip_prefix("driver=").unwrap_or(first);
    if is_help(driver) {
        return Ok(DeviceSpec::List);
    }
    if platform == Platform::Virt {
        return parse_virt_device(v, driver, &items[1..]);
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

pub(super) fn parse_serial(v: &str) -> Result<SerialSpec, String> {
    match v {
        "stdio" => Ok(SerialSpec::Stdio),
        "none" => Ok(SerialSpec::None),
        // trapline has no monitor to multiplex in: the console is stdio.
        "mon:stdio" => Ok(SerialSpec::Stdio),
        _ => match v.strip_prefix("file:") {
            Some(p) if !p.is_empty() => Ok(SerialSpec::File(PathBuf::from(p))),
            _ => Err(format!(
                "unsupported -serial '{v}' (trapline takes stdio, mon:stdio, none or file:PATH)"
            )),
        },
    }
}

/// `v` is an accelerator list (QEMU tries them in order); trapline is KVM
/// only, so KVM must come first. `spelling` is how the user wrote it.
pub(super) fn check_accel(v: &str, spelling: &str) -> Result<(), String> {
    if v.split(':').next() == Some("kvm") {
        Ok(())
    } else {
        Err(format!(
            "unsupported {spelling}: trapline runs guests only on KVM (accel=kvm)"
        ))
    }
}

/// What a `-machine` value asked to list, if anything.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum MachineHelp {
    /// Nothing: a machine to run.
    None,
    /// `-machine help`: the machine types.
    Types,
    /// `-machine TYPE,help`: the machine's properties.
    Options,
}

/// `-machine [type=]pc[,accel=kvm][,pit=on|off][,kernel_irqchip=on|split|off]`
/// or `[type=]microvm[,accel=kvm][,pit=on|off][,acpi=on]` (trapline's PC with
/// hardware-reduced ACPI: `--acpi reduced`); on `virt`:
/// `[type=]virt[,accel=kvm][,gic-version=…][,highmem=…]`.
pub(super) fn parse_machine(v: &str, q: &mut QemuRun) -> Result<MachineHelp, String> {
    let machine = q.platform.machine();
    for (i, item) in split_opts(v).iter().enumerate() {
        let (k, val) = match item.split_once('=') {
            Some(kv) => kv,
            None if i == 0 => ("type", item.as_str()),
            None if is_help(item) => return Ok(MachineHelp::Options),
            None => return Err(format!("unsupported -machine property '{item}' in '{v}'")),
        };
        match (k, val) {
            ("type", t) if is_help(t) => return Ok(MachineHelp::Types),
            ("type", t) if t == machine => {}
            // QEMU's microvm is a hardware-reduced ACPI PC (its defaults:
            // ACPI on, the PIT and 8259s present but unannounced).
            ("type", "microvm") if q.platform == Platform::Pc => q.microvm = true,
            ("type", t) => {
                return Err(format!(
                    "unsupported machine type '{t}': trapline's machine stands in for QEMU's \
                     -machine {machine}"
                ))
            }
            ("accel", a) => check_accel(a, &format!("-machine accel={a}"))?,
            _ if q.platform == Platform::Virt => parse_virt_machine_prop(item, k, val)?,
            ("pit", "on") => q.no_pit = false,
            ("pit", "off") => q.no_pit = true,
            ("acpi", "on") if q.microvm => {}
            ("kernel_irqchip" | "kernel-irqchip", "on" | "true" | "yes") => {
                q.irqchip = Some(IrqchipArg::Kernel)
            }
            ("kernel_irqchip" | "kernel-irqchip", "split") => q.irqchip = Some(IrqchipArg::Split),
            ("kernel_irqchip" | "kernel-irqchip", "off" | "false" | "no") => {
                q.irqchip = Some(IrqchipArg::None)
            }
            _ => {
                return Err(format!(
                    "unsupported -machine property '{item}' (trapline accepts pc or microvm, \
                     accel=kvm, pit=on|off, kernel_irqchip=on|split|off, and acpi=on with \
                     microvm)"
                ))
            }
        }
    }
    Ok(MachineHelp::None)
}

/// `-accel kvm[,kernel-irqchip=on|split|off]`. `Ok(true)`: `-accel help`.
pub(super) fn parse_accel(v: &str, q: &mut QemuRun) -> Result<bool, String> {
    let items = split_opts(v);
    let first = items[0].as_str();
    let name = first.strip_prefix("accel=").unwrap_or(first);
    if is_help(name) {
        return Ok(true);
    }
    check_accel(name, &format!("-accel {name}"))?;
    for p in &items[1..] {
        q.irqchip = Some(match p.split_once('=') {
            Some(("kernel-irqchip" | "kernel_irqchip", mode)) => {
                irqchip_mode(mode).ok_or_else(|| {
                    format!("unsupported -accel {p}: kernel-irqchip takes on, split or off")
                })?
            }
            _ => {
                return Err(format!(
                    "unsupported -accel property '{p}': trapline takes -accel \
                     kvm[,kernel-irqchip=on|split|off]"
                ))
            }
        });
    }
    Ok(false)
}

/// A `kernel-irqchip` value.
fn irqchip_mode(v: &str) -> Option<IrqchipArg> {
    match v {
        "on" | "true" | "yes" => Some(IrqchipArg::Kernel),
        "split" => Some(IrqchipArg::Split),
        "off" | "false" | "no" => Some(IrqchipArg::None),
        _ => None,
    }
}
