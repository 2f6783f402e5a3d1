//! The `virt` machine's QEMU spellings (kvm-unit-tests' arm/run), parsed
//! and translated without a VM, on either build.

use super::help::device_options;
use super::parse::{parse_for, Action};
use super::platform::Platform;
use super::translate::QemuRun;
use crate::args::{DeviceArg, SerialSpec};

fn virt(args: &[&str]) -> Result<Action, String> {
    parse_for(Platform::Virt, args)
}

fn run_of(args: &[&str]) -> QemuRun {
    match virt(args) {
        Ok(Action::Run(q)) => q,
        other => panic!("{args:?}: {other:?}"),
    }
}

fn err_of(args: &[&str]) -> String {
    match virt(args) {
        Err(e) => e,
        other => panic!("{args:?} should be refused: {other:?}"),
    }
}

/// What arm/run builds for `selftest-setup` on KVM (arm/unittests.cfg:
/// smp 2, `-m 256`, the environment as the initrd).
const ARM_RUN: &[&str] = &[
    "-nodefaults",
    "-machine",
    "virt,gic-version=host",
    "-accel",
    "kvm",
    "-cpu",
    "host",
    "-device",
    "virtio-serial-device",
    "-device",
    "virtconsole,chardev=ctd",
    "-chardev",
    "testdev,id=ctd",
    "-display",
    "none",
    "-serial",
    "stdio",
    "-kernel",
    "arm/selftest.flat",
    "-smp",
    "2",
    "-append",
    "setup smp=2 mem=256",
    "-m",
    "256",
    "-initrd",
    "/tmp/env",
];

#[test]
fn arm_runs_command_line_runs_with_chr_testdev() {
    let q = run_of(ARM_RUN);
    assert!(q.warnings.is_empty(), "{:?}", q.warnings);
    assert_eq!(q.devices, vec![DeviceArg::ChrTestdev]);
    let a = q.into_run_args().unwrap();
    assert_eq!(a.kernel, "arm/selftest.flat");
    assert_eq!((a.smp, a.mem), (2, 256));
    assert_eq!(a.append, "setup smp=2 mem=256");
    assert_eq!(a.serial, SerialSpec::Stdio);
    assert_eq!(a.initrd.as_deref(), Some(std::path::Path::new("/tmp/env")));
    assert_eq!(a.devices, vec![DeviceArg::ChrTestdev]);
}

#[test]
fn the_pieces_of_chr_testdev_come_in_any_order() {
    let q = run_of(&[
        "-chardev",
        "testdev,id=x",
        "-device",
        "virtconsole,chardev=x,id=c0",
        "-device",
        "virtio-serial-device",
        "-kernel",
        "k",
    ]);
    assert_eq!(q.devices, vec![DeviceArg::ChrTestdev]);
}

#[test]
fn arm_runs_probes_find_what_they_grep_for() {
    // `-machine '?' | grep -q 'ARM Virtual Machine'`.
    assert_eq!(virt(&["-machine", "?"]), Ok(Action::ListMachines));
    assert!(Platform::Virt
        .machine_list()
        .contains("ARM Virtual Machine"));
    assert!(!Platform::Pc.machine_list().contains("ARM Virtual Machine"));
    // `-machine virt,\? | grep -q gic-version`.
    assert_eq!(virt(&["-machine", "virt,?"]), Ok(Action::MachineOptions));
    assert!(Platform::Virt.machine_options().contains("gic-version"));
    // `$M -device '?' | grep -q virtconsole`, and pci-testdev (arm/run
    // adds `-device pci-testdev` when it is listed).
    assert_eq!(
        virt(&["-machine", "virt,gic-version=host", "-device", "?"]),
        Ok(Action::ListDevices)
    );
    assert!(Platform::Virt.device_list().contains("virtconsole"));
    assert!(Platform::Virt.device_list().contains("pci-testdev"));
    // `$M -chardev '?' | grep -q testdev`.
    assert_eq!(virt(&["-chardev", "?"]), Ok(Action::ListChardevs));
    assert!(super::help::CHARDEV_LIST.contains("testdev"));
    assert!(device_options("virtconsole").contains("chardev"));
}

#[test]
fn a_second_machine_option_adds_properties() {
    // unittests.cfg's qemu_params for gicv3-ipi: `-machine gic-version=3`
    // after arm/run's `-machine virt,gic-version=host`.
    let mut args = ARM_RUN.to_vec();
    args.extend(["-machine", "gic-version=3"]);
    assert!(matches!(virt(&args), Ok(Action::Run(_))));
    for ok in [
        "virt,highmem=off",
        "virt,its=on",
        "accel=kvm",
        "virt,gic-version=max",
    ] {
        assert!(
            matches!(virt(&["-machine", ok, "-kernel", "k"]), Ok(Action::Run(_))),
            "{ok}"
        );
    }
}

#[test]
fn what_virt_cannot_do_is_refused_by_name() {
    let e = err_of(&["-machine", "gic-version=2", "-kernel", "k"]);
    assert!(e.contains("gic-version=2") && e.contains("vGICv3"), "{e}");
    let e = err_of(&["-machine", "virt,virtualization=on", "-kernel", "k"]);
    assert!(e.contains("EL1"), "{e}");
    let e = err_of(&["-machine", "virt,mte=on", "-kernel", "k"]);
    assert!(e.contains("mte=on"), "{e}");
    let e = err_of(&["-machine", "pc", "-kernel", "k"]);
    assert!(e.contains("-machine virt"), "{e}");
    // The PC's ISA devices are not on virt.
    let e = err_of(&["-device", "pc-testdev", "-kernel", "k"]);
    assert!(e.contains("'pc-testdev'"), "{e}");
    let e = err_of(&[
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x4",
        "-kernel",
        "k",
    ]);
    assert!(e.contains("'isa-debug-exit'"), "{e}");
    let e = err_of(&["-chardev", "socket,id=x", "-kernel", "k"]);
    assert!(e.contains("testdev"), "{e}");
    let e = err_of(&["-chardev", "testdev", "-kernel", "k"]);
    assert!(e.contains("no id"), "{e}");
}

#[test]
fn chr_testdev_pieces_that_do_not_fit_are_refused() {
    let dev = |v: &'static str| ["-device", v];
    let cases: &[(&[&str], &str)] = &[
        (&dev("virtio-serial-device"), "without a port"),
        (
            &[
                "-device",
                "virtconsole,chardev=c",
                "-chardev",
                "testdev,id=c",
            ],
            "virtio-serial bus",
        ),
        (
            &[
                "-device",
                "virtio-serial-device",
                "-device",
                "virtconsole,chardev=c",
            ],
            "no -chardev testdev,id=c",
        ),
        (&dev("virtconsole"), "chardev=ID"),
        (&dev("virtconsole,chardev=c,name=x"), "'name=x'"),
        (&dev("virtio-serial-device,max_ports=2"), "'max_ports=2'"),
        (
            &[
                "-device",
                "virtio-serial-device",
                "-device",
                "virtio-serial-device",
            ],
            "second",
        ),
        (
            &["-chardev", "testdev,id=c", "-chardev", "testdev,id=c"],
            "duplicate",
        ),
    ];
    for (args, want) in cases {
        let mut a = args.to_vec();
        a.extend(["-kernel", "k"]);
        let e = err_of(&a);
        assert!(e.contains(want), "{a:?}: {e}");
    }
}

#[test]
fn an_unused_testdev_chardev_is_a_warning() {
    let q = run_of(&["-chardev", "testdev,id=c", "-kernel", "k"]);
    assert!(q.devices.is_empty());
    assert!(
        q.warnings.iter().any(|w| w.contains("id=c")),
        "{:?}",
        q.warnings
    );
}

#[test]
fn the_pc_front_end_has_no_virt_spellings() {
    let pc = |a: &[&str]| parse_for(Platform::Pc, a);
    assert!(pc(&["-machine", "virt", "-kernel", "k"]).is_err());
    assert!(pc(&["-device", "virtconsole,chardev=c", "-kernel", "k"]).is_err());
    assert!(pc(&["-machine", "pc,gic-version=3", "-kernel", "k"]).is_err());
    assert_eq!(pc(&["-machine", "pc,?"]), Ok(Action::MachineOptions));
}

#[test]
fn pci_testdev_on_virt_is_traplines_on_the_pcie_host() {
    // arm/run's line for pci-test: the chr-testdev pieces and pci-testdev.
    let mut args = ARM_RUN.to_vec();
    args.extend(["-device", "pci-testdev"]);
    let q = run_of(&args);
    assert!(q.warnings.is_empty(), "{:?}", q.warnings);
    let mut want = vec![DeviceArg::PciTestdev, DeviceArg::ChrTestdev];
    want.sort_by_key(|d| format!("{d:?}"));
    let mut got = q.into_run_args().unwrap().devices;
    got.sort_by_key(|d| format!("{d:?}"));
    assert_eq!(got, want);
    // `driver=`, `id=` and a repeat are QEMU's spellings of the same one.
    let q = run_of(&[
        "-device",
        "driver=pci-testdev,id=p",
        "-device",
        "pci-testdev",
        "-kernel",
        "k",
    ]);
    assert_eq!(q.devices, vec![DeviceArg::PciTestdev]);
    // Its options, and a property trapline's has not.
    assert_eq!(
        virt(&["-device", "pci-testdev,help"]),
        Ok(Action::DeviceOptions("pci-testdev"))
    );
    let e = err_of(&["-device", "pci-testdev,membar=4096", "-kernel", "k"]);
    assert!(
        e.contains("'membar=4096'") && e.contains("pci-testdev"),
        "{e}"
    );
    let e = err_of(&["-device", "pci-testdev,addr=3", "-kernel", "k"]);
    assert!(e.contains("'addr=3'"), "{e}");
}
