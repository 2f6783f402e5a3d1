//! The `virt` machine's QEMU spellings: its `-machine` properties, and
//! chr-testdev, which QEMU builds from three options kvm-unit-tests' arm/run
//! passes together:
//!
//! ```text
//! -device virtio-serial-device -device virtconsole,chardev=ctd -chardev testdev,id=ctd
//! ```
//!
//! trapline has that one combination (`trapline run --device chr-testdev`);
//! the pieces are collected in [`SerialParts`] and checked once the whole
//! command line is read, since QEMU takes them in any order.
//!
//! `-device pci-testdev` is trapline's pci-testdev on the virt machine's
//! PCIe host (`--device pci-testdev`): arm/run adds it when `-device help`
//! lists it, for kvm-unit-tests' arm64 `pci-test`.

use super::device::{DeviceSpec, SerialPart};
use super::syntax::{is_help, split_opts};
use crate::args::DeviceArg;

/// One `virt` `-machine` property other than the type and `accel`.
pub(super) fn parse_virt_machine_prop(item: &str, key: &str, value: &str) -> Result<(), String> {
    match (key, value) {
        // KVM's vGICv3 (with its ITS) is the only interrupt controller.
        ("gic-version", "3" | "host" | "max") => Ok(()),
        ("gic-version", v) => Err(format!(
            "unsupported -machine gic-version={v}: trapline's virt machine has KVM's vGICv3 \
             only (gic-version=3, host or max)"
        )),
        // trapline's map has nothing above 4 GiB either way.
        ("highmem", "on" | "off" | "true" | "false" | "yes" | "no") => Ok(()),
        ("its", "on" | "true" | "yes") => Ok(()),
        ("virtualization", "off" | "false" | "no") => Ok(()),
        ("virtualization", _) => Err(format!(
            "unsupported -machine property '{item}': trapline runs guests at EL1 (no nested \
             virtualization)"
        )),
        _ => Err(format!(
            "unsupported -machine property '{item}' (trapline's virt accepts virt, accel=kvm, \
             gic-version=3|host|max, highmem=on|off, its=on)"
        )),
    }
}

/// `-device DRIVER[,PROP=V…]` on `virt`; `items` are the properties.
pub(super) fn parse_virt_device(
    v: &str,
    driver: &str,
    items: &[String],
) -> Result<DeviceSpec, String> {
    let mut chardev = None;
    for item in items {
        if is_help(item) {
            return Ok(DeviceSpec::Options(match driver {
                "virtconsole" => "virtconsole",
                "virtio-serial-device" => "virtio-serial-device",
                "pci-testdev" => "pci-testdev",
                _ => return Err(unsupported(driver)),
            }));
        }
        match (driver, item.split_once('=')) {
            (_, Some(("id", _))) => {}
            ("pci-testdev", _) => {
                return Err(format!(
                    "-device {v}: unsupported property '{item}' (trapline's pci-testdev takes \
                     no properties but id=; it sits at 00:02.0)"
                ))
            }
            ("virtconsole", Some(("chardev", id))) if !id.is_empty() => {
                chardev = Some(id.to_owned())
            }
            ("virtconsole" | "virtio-serial-device", _) => {
                return Err(format!(
                    "-device {v}: unsupported property '{item}' (trapline's {driver} takes {})",
                    if driver == "virtconsole" {
                        "chardev=ID and id="
                    } else {
                        "only id="
                    }
                ))
            }
            _ => return Err(unsupported(driver)),
        }
    }
    match driver {
        "pci-testdev" => Ok(DeviceSpec::Add(Some(DeviceArg::PciTestdev))),
        "virtio-serial-device" => Ok(DeviceSpec::Serial(SerialPart::Bus)),
        "virtconsole" => match chardev {
            Some(chardev) => Ok(DeviceSpec::Serial(SerialPart::Console { chardev })),
            None => Err(format!(
                "-device {v}: a virtconsole needs chardev=ID (a -chardev testdev,id=ID); \
                 trapline's console is the PL011 (-serial)"
            )),
        },
        _ => Err(unsupported(driver)),
    }
}

fn unsupported(driver: &str) -> String {
    format!(
        "unsupported QEMU device '{driver}' (trapline's virt has pci-testdev, and \
         virtio-serial-device and virtconsole for chr-testdev; -device help lists them)"
    )
}

/// What `-chardev` asked for.
pub(super) enum ChardevSpec {
    /// `-chardev testdev,id=ID`.
    Testdev(String),
    /// `-chardev help`.
    List,
}

/// `-chardev BACKEND,id=ID`: trapline has QEMU's testdev backend only.
pub(super) fn parse_chardev(v: &str) -> Result<ChardevSpec, String> {
    let items = split_opts(v);
    let first = items[0].as_str();
    let backend = first.strip_prefix("backend=").unwrap_or(first);
    if is_help(backend) {
        return Ok(ChardevSpec::List);
    }
    if backend != "testdev" {
        return Err(format!(
            "unsupported -chardev backend '{backend}': trapline has testdev (for chr-testdev); \
             the console is -serial"
        ));
    }
    let mut id = None;
    for item in &items[1..] {
        match item.split_once('=') {
            Some(("id", i)) if !i.is_empty() => id = Some(i.to_owned()),
            _ => {
                return Err(format!(
                    "-chardev {v}: unsupported property '{item}' (testdev takes only id=ID)"
                ))
            }
        }
    }
    id.map(ChardevSpec::Testdev)
        .ok_or_else(|| format!("-chardev {v}: chardev: no id specified"))
}

/// The chr-testdev pieces a command line gave, in any order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SerialParts {
    bus: bool,
    console: Option<String>,
    testdevs: Vec<String>,
}

impl SerialParts {
    /// Take a `-device` piece.
    pub(super) fn add(&mut self, part: SerialPart) -> Result<(), String> {
        match part {
            SerialPart::Bus if self.bus => Err(
                "a second -device virtio-serial-device: trapline has one (for chr-testdev)".into(),
            ),
            SerialPart::Bus => {
                self.bus = true;
                Ok(())
            }
            SerialPart::Console { .. } if self.console.is_some() => Err(
                "a second -device virtconsole: trapline's virtio-serial-device has one port".into(),
            ),
            SerialPart::Console { chardev } => {
                self.console = Some(chardev);
                Ok(())
            }
        }
    }

    /// Take a `-chardev testdev,id=ID`.
    pub(super) fn add_chardev(&mut self, id: String) -> Result<(), String> {
        if self.testdevs.contains(&id) {
            return Err(format!("-chardev: duplicate chardev id '{id}'"));
        }
        self.testdevs.push(id);
        Ok(())
    }

    /// chr-testdev if the pieces make it, nothing if there are none, or
    /// what is missing. `warnings` gets the chardevs no device uses.
    pub(super) fn resolve(&self, warnings: &mut Vec<String>) -> Result<Option<DeviceArg>, String> {
        let unused = self
            .testdevs
            .iter()
            .filter(|id| self.console.as_ref() != Some(*id));
        for id in unused {
            warnings.push(format!(
                "-chardev testdev,id={id} is connected to no device (ignored)"
            ));
        }
        match (&self.console, self.bus) {
            (None, false) => Ok(None),
            (None, true) => Err("-device virtio-serial-device without a port: trapline's \
                 carries one -device virtconsole,chardev=ID on a -chardev testdev,id=ID \
                 (chr-testdev)"
                .into()),
            (Some(_), false) => Err("-device virtconsole needs a virtio-serial bus: add \
                 -device virtio-serial-device"
                .into()),
            (Some(id), true) if !self.testdevs.contains(id) => Err(format!(
                "-device virtconsole,chardev={id}: no -chardev testdev,id={id} (trapline's \
                 virtconsole takes a testdev chardev only)"
            )),
            (Some(_), true) => Ok(Some(DeviceArg::ChrTestdev)),
        }
    }
}
