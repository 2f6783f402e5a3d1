//! The QEMU front end's parsing, translation and help, without a VM.

use std::ffi::OsStr;
use std::path::PathBuf;

use clap::Parser;

use super::help::help_text;
use super::options::{is_qemu_style, Opt};
use super::parse::{parse, Action, Spelling};
use super::syntax::{parse_size, parse_uint, split_opts};
use super::translate::QemuRun;
use super::values::{parse_mem, parse_smp};
use super::{MAX_MEM_MIB, MAX_VCPUS, MIB};
use crate::args::{Cli, DeviceArg, IrqchipArg, SerialSpec};

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

/// QEMU's microvm command line (the shared tiny Linux's README boots QEMU
/// so) runs on trapline's PC with hardware-reduced ACPI.
#[test]
fn microvm_is_the_hardware_reduced_pc() {
    use crate::args::AcpiArg;
    let a = run_of(&[
        "-M",
        "microvm",
        "-nodefaults",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-accel",
        "kvm",
        "-cpu",
        "qemu64,-cx16",
        "-m",
        "128",
        "-no-reboot",
        "-kernel",
        "vmlinux",
        "-append",
        "console=ttyS0",
    ])
    .into_run_args()
    .unwrap();
    assert_eq!(a.acpi, AcpiArg::Reduced);
    assert_eq!((a.mem, a.kernel.as_str()), (128, "vmlinux"));
    for (machine, acpi, no_pit) in [
        ("pc", AcpiArg::Full, false),
        ("microvm,accel=kvm,acpi=on", AcpiArg::Reduced, false),
        ("type=microvm,pit=off", AcpiArg::Reduced, true),
    ] {
        let a = run_of(&["-machine", machine, "-kernel", "k"])
            .into_run_args()
            .unwrap();
        assert_eq!((a.acpi, a.no_pit), (acpi, no_pit), "{machine}");
    }
    // microvm without ACPI is a machine trapline does not have; acpi= is
    // microvm's property only.
    for machine in ["microvm,acpi=off", "pc,acpi=on"] {
        let e = err_of(&["-machine", machine, "-kernel", "k"]);
        assert!(e.contains("acpi="), "{machine}: {e}");
    }
}

#[test]
fn defaults_match_trapline_run() {
    let a = run_of(&["-kernel", "k"]).into_run_args().unwrap();
    let crate::args::Command::Run(n) = Cli::try_parse_from(["trapline", "run", "--kernel", "k"])
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
            format!("Invalid SMP CPUs {n}. The max CPUs supported by machine 'pc' is {MAX_VCPUS}")
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
    // No monitor to multiplex: the console is stdio; -vnc none is no display.
    assert_eq!(s(&["-serial", "mon:stdio"]), SerialSpec::Stdio);
    assert_eq!(s(&["-vnc", "none"]), SerialSpec::Stdio);
    for (args, needle) in [
        (&["-vnc", ":0"][..], "no display"),
        (
            &["-serial", "tcp:localhost:4444"][..],
            "'tcp:localhost:4444'",
        ),
        (&["-serial", "file:"], "'file:'"),
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
    // -accel's kernel-irqchip property, as -machine's kernel_irqchip.
    for (value, mode) in [
        ("kvm,kernel-irqchip=on", IrqchipArg::Kernel),
        ("kvm,kernel-irqchip=split", IrqchipArg::Split),
        ("kvm,kernel_irqchip=off", IrqchipArg::None),
    ] {
        let a = run_of(&["-kernel", "k", "-accel", value])
            .into_run_args()
            .unwrap();
        assert_eq!(a.irqchip, mode, "{value}");
    }
    let e = err_of(&["-accel", "kvm,kernel-irqchip=maybe"]);
    assert!(e.contains("on, split or off"), "{e}");
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
    for h in ["-h", "-help"] {
        assert_eq!(parse(&[h]), Ok(Action::Help(Spelling::Qemu)));
    }
    assert_eq!(parse(&["--help"]), Ok(Action::Help(Spelling::Trapline)));
    assert_eq!(parse(&["-version"]), Ok(Action::Version(Spelling::Qemu)));
    assert_eq!(
        parse(&["--version"]),
        Ok(Action::Version(Spelling::Trapline))
    );
    assert_eq!(
        parse(&["-kernel", "k", "-h", "-foo"]),
        Ok(Action::Help(Spelling::Qemu))
    );
    assert!(parse(&["-foo", "-h"]).is_err());
    let h = help_text(Spelling::Trapline);
    // trapline first; QEMU's version line and spellings after.
    assert!(h.starts_with("trapline "), "{h}");
    assert!(
        h.contains("\nQEMU emulator version 7.2.0 (trapline "),
        "{h}"
    );
    assert!(h.contains("QEMU-compatible spellings"), "{h}");
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

#[test]
fn every_option_sits_at_its_own_index_is_found_by_name_and_is_in_the_help() {
    let h = help_text(Spelling::Qemu);
    for (i, o) in Opt::ALL.iter().enumerate() {
        assert_eq!(*o as usize, i, "{o:?}");
        let name = o.spec().name;
        assert_eq!(Opt::from_name(name), Some(*o), "{name}");
        assert!(
            h.contains(&format!("-{name}")),
            "-h does not mention -{name}"
        );
    }
    assert!(h.contains(&format!("1-{MAX_VCPUS};")), "{h}");
    assert!(h.contains(&format!("1 MiB to {MAX_MEM_MIB} MiB")), "{h}");
    assert!(!h.contains("{MAX_"), "a placeholder is left: {h}");
}
