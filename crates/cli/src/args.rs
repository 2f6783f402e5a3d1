//! Command-line arguments.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// A lean VMM on /dev/kvm, and a lab that measures what each way a guest
/// can notify its host costs.
#[derive(Parser, Debug)]
#[command(name = "trapline", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Boot a guest image (Multiboot v1 ELF32, ELF64, or Linux's vmlinux
    /// through its PVH note) and run it to its end.
    Run(RunArgs),
    /// Measure exit costs from inside a guest (the lab).
    #[cfg(feature = "bench")]
    Bench(crate::lazy_args::Lazy<crate::bench::BenchArgs>),
    /// Render a saved run (report.json) in any view and format, or compare
    /// it with an older one, without measuring and without /dev/kvm.
    Report(crate::lazy_args::Lazy<crate::report_cmd::ReportArgs>),
    #[cfg(feature = "bench")]
    /// Boot the shared tiny Linux and time it, beside QEMU's microvm with
    /// `--peer qemu` (an experiment, not a probe run).
    LinuxBoot(crate::lazy_args::Lazy<crate::experiments::linux_boot::LinuxBootArgs>),
    #[cfg(feature = "bench")]
    /// virtio-blk I/O on each notify × irq path, beside Linux's own driver
    /// when QEMU and a kernel are there (an experiment, not a probe run).
    VirtioPaths(crate::lazy_args::Lazy<crate::experiments::virtio_paths::VirtioPathsArgs>),
    #[cfg(feature = "bench")]
    /// virtio-net UDP round trips and bursts on each notify × irq path and
    /// back end (echo, TAP), beside the doorbell's rows and QEMU with
    /// `--peer qemu` (an experiment, not a probe run).
    NetPaths(crate::lazy_args::Lazy<crate::experiments::net_paths::NetPathsArgs>),
    #[cfg(feature = "bench")]
    /// The kernel's share of in-kernel paths: KVM's trace points (tracefs,
    /// root) around each scenario, beside the probe's round trip.
    KernelShare(crate::lazy_args::Lazy<crate::experiments::kernel_share::KernelShareArgs>),
}

/// `trapline run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Guest image: a file, or `builtin:NAME` for one of trapline's own
    /// payloads (builtin:hello, builtin:smp, builtin:probe, …).
    #[arg(long, help_heading = "Guest", value_name = "FILE")]
    pub kernel: String,
    /// Number of vCPUs, 1 to 64.
    #[arg(long, help_heading = "Machine", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=trapline_abi::MAX_VCPUS as i64))]
    pub smp: u32,
    /// CPU model: `host` (default: what KVM supports), `max` (the same
    /// under KVM) or `qemu64`, then `,+flag`/`,-flag` edits (QEMU's `-cpu`
    /// spelling, e.g. `qemu64,-cx16`).
    #[arg(long, help_heading = "Machine", value_name = "MODEL", default_value = "host", value_parser = trapline_machine::CpuModel::parse)]
    pub cpu: trapline_machine::CpuModel,
    /// Guest RAM: MiB, or a size with a suffix as QEMU's -m takes it
    /// (512M, 1G); 1 MiB to 3 GiB.
    #[arg(long, help_heading = "Machine", value_name = "SIZE", default_value = "128", value_parser = parse_mem)]
    pub mem: u64,
    /// Guest command line (after argv0, which is the image path, as QEMU does).
    #[arg(long, help_heading = "Guest", default_value = "")]
    pub append: String,
    /// A file handed to the guest as its initrd: Multiboot module 0, or
    /// Linux's initramfs (PVH module). On x86, `builtin:vblktest` is an
    /// initramfs whose /init checks and times /dev/vda, `builtin:nettest`
    /// one whose /init brings eth0 up and exchanges UDP over `--net`.
    #[arg(long, help_heading = "Guest", value_name = "FILE")]
    pub initrd: Option<PathBuf>,
    /// Where COM1 output goes: `stdio`, `file:PATH` or `none`.
    #[arg(long, help_heading = "Console and run", default_value = "stdio", value_parser = parse_serial)]
    pub serial: SerialSpec,
    /// With the console on a terminal, keep Ctrl-C, Ctrl-Z and Ctrl-\ as
    /// signals to trapline instead of bytes for the guest (Ctrl-A x quits
    /// either way).
    #[arg(long, help_heading = "Console and run")]
    pub tty_signals: bool,
    /// Stop the guest after this many seconds, at most 86400 (exit status 124).
    #[arg(long, help_heading = "Console and run", value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Option<std::time::Duration>,
    /// Add a device: `pci-testdev` (QEMU's PCI test device, with KVM
    /// ioeventfds for its eventfd tests) or `pc-testdev` on x86,
    /// `chr-testdev` on arm64. Repeatable.
    #[arg(
        long = "device",
        help_heading = "Machine",
        value_name = "NAME",
        value_enum
    )]
    pub devices: Vec<DeviceArg>,
    /// Map the PCI ECAM window read-only over a shadow of config space, so
    /// config-space reads never exit (writes still do).
    #[arg(long, help_heading = "Machine")]
    pub ecam_ro: bool,
    /// Interrupt controllers KVM emulates: `kernel` (LAPICs, IOAPIC and
    /// PICs in the kernel), `split` (LAPICs only) or `none`. A guest that
    /// touches one the VM lacks ends the run with status 14.
    #[arg(
        long,
        help_heading = "Machine",
        value_enum,
        default_value = "kernel",
        value_name = "MODE"
    )]
    pub irqchip: IrqchipArg,
    /// Run without the in-kernel PIT (implied by --irqchip split|none,
    /// since KVM's PIT needs its PIC).
    #[arg(long, help_heading = "Machine")]
    pub no_pit: bool,
    /// The PC's ACPI hardware: `full` (PM timer and PM1 blocks, SCI, the
    /// 8259s; S3 and S5: what kvm-unit-tests needs) or `reduced`
    /// (hardware-reduced ACPI as QEMU's microvm: Linux skips the 8259s,
    /// the PIT checks and the PM timer; COM1 in the DSDT; S5 only).
    /// x86 only.
    #[arg(
        long,
        help_heading = "Machine",
        value_enum,
        default_value = "full",
        value_name = "MODEL"
    )]
    pub acpi: AcpiArg,
    /// Run without seccomp filters (to debug with strace or gdb).
    #[arg(long, help_heading = "Console and run")]
    pub no_seccomp: bool,
    /// Profile every exit (KVM's own counters and the exits that reached
    /// trapline, with handling times) and write the report at the end: to
    /// stderr, or to FILE (`--stat=FILE`; `%p` = process id, `%k` = the
    /// kernel's file name; a directory gets `<kernel>.<pid>.stat`). The
    /// environment variable TRAPLINE_STAT=FILE does the same when --stat
    /// is not given (for harnesses that use QEMU's spellings).
    #[arg(long, help_heading = "Profiling", value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub stat: Option<String>,
    /// The --stat report's format (TRAPLINE_STAT_FORMAT sets it too).
    #[arg(long, help_heading = "Profiling", value_enum, value_name = "FORMAT")]
    pub stat_format: Option<StatFormat>,
    /// The order of the --stat tables of exits: most exits first (`count`,
    /// the default) or most handling time first (`time`);
    /// TRAPLINE_STAT_SORT sets it too.
    #[arg(long, value_enum, value_name = "count|time")]
    pub stat_sort: Option<StatSortArg>,
    /// In the --stat table, also each vCPU's exits by key, not only all
    /// vCPUs' together (the JSON always has both).
    #[arg(long)]
    pub stat_vcpu: bool,
    /// Write Firecracker-style metrics, one JSON line per second and one at
    /// the end, to FILE.
    #[arg(long, help_heading = "Profiling", value_name = "FILE")]
    pub metrics_path: Option<PathBuf>,
    /// A virtio-blk disk backed by the file PATH (`PATH,ro`: read-only,
    /// writes fail with an I/O error). Repeatable: the first is the guest's
    /// /dev/vda. Announced to Linux on its command line.
    #[arg(long = "disk", help_heading = "virtio-blk", value_name = "PATH[,ro]", value_parser = parse_disk)]
    pub disks: Vec<DiskSpec>,
    /// A virtio-net card on the virtio-mmio transport after the disks:
    /// `echo` (every frame the guest sends comes back to it, byte for
    /// byte), `tap` (a TAP trapline creates: needs CAP_NET_ADMIN),
    /// `tap:NAME` (an existing TAP, or one created with that name),
    /// `vhost[:NAME]` (vhost-net on a TAP, where the host has
    /// /dev/vhost-net). The --virtio-* choices apply to it.
    #[arg(long, help_heading = "virtio-net", value_name = "echo|tap[:NAME]|vhost[:NAME]", value_parser = parse_net)]
    pub net: Option<NetSpec>,
    /// How virtio queue notifications reach trapline: `ioeventfd` (a KVM
    /// ioeventfd, served by a worker thread) or `exit` (served on the
    /// vCPU thread inside the MMIO exit).
    #[arg(
        long,
        help_heading = "virtio-blk and virtio-net",
        value_enum,
        default_value = "ioeventfd",
        value_name = "PATH"
    )]
    pub virtio_notify: VirtioNotifyArg,
    /// How virtio completions interrupt the guest: `irqfd` or `line`
    /// (KVM_IRQ_LINE).
    #[arg(
        long,
        help_heading = "virtio-blk and virtio-net",
        value_enum,
        default_value = "irqfd",
        value_name = "PATH"
    )]
    pub virtio_irq: VirtioIrqArg,
    /// Offer VIRTIO_RING_F_EVENT_IDX (notification suppression) to the
    /// driver.
    #[arg(
        long,
        help_heading = "virtio-blk and virtio-net",
        value_enum,
        default_value = "on",
        value_name = "on|off"
    )]
    pub virtio_event_idx: OnOff,
}

/// `--mem`: MiB without a suffix, else B/K/M/G/T (QEMU's `-m`); whole
/// MiB from 1 to the machine's maximum.
fn parse_mem(s: &str) -> Result<u64, String> {
    const MIB: u128 = 1 << 20;
    let max = trapline_abi::MAX_RAM_MIB;
    let bytes = crate::qemu::parse_size(s, MIB)
        .ok_or_else(|| format!("'{s}' is not a size: write MiB (512) or a suffix (512M, 1G)"))?;
    if !bytes.is_multiple_of(MIB) {
        return Err(format!("'{s}': guest RAM comes in whole MiB"));
    }
    let mib = bytes / MIB;
    if !(1..=u128::from(max)).contains(&mib) {
        return Err(format!("'{s}': guest RAM must be 1 MiB to {max} MiB"));
    }
    Ok(mib as u64)
}

/// A parsed `--disk`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskSpec {
    /// The image file.
    pub path: PathBuf,
    /// `,ro`.
    pub read_only: bool,
}

fn parse_disk(s: &str) -> Result<DiskSpec, String> {
    let (path, read_only) = match s.strip_suffix(",ro") {
        Some(p) => (p, true),
        None => (s.strip_suffix(",rw").unwrap_or(s), false),
    };
    if path.is_empty() {
        return Err(format!("'{s}': expected PATH or PATH,ro"));
    }
    Ok(DiskSpec {
        path: PathBuf::from(path),
        read_only,
    })
}

/// A parsed `--net`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetSpec {
    /// The in-VMM echo.
    Echo,
    /// A TAP: named, or created with a name the kernel picks.
    Tap(Option<String>),
    /// vhost-net on a TAP.
    Vhost(Option<String>),
}

fn parse_net(s: &str) -> Result<NetSpec, String> {
    let (kind, name) = match s.split_once(':') {
        Some((k, n)) => (k, Some(n)),
        None => (s, None),
    };
    let name = match name {
        Some(n) if !trapline_devices::virtio::net::tap::valid_name(n) => {
            return Err(format!(
                "'{s}': '{n}' is not an interface name (1 to 15 characters, no '/', ':' or spaces)"
            ))
        }
        n => n.map(str::to_owned),
    };
    match (kind, name) {
        ("echo", None) => Ok(NetSpec::Echo),
        ("echo", Some(_)) => Err(format!("'{s}': echo takes no name")),
        ("tap", n) => Ok(NetSpec::Tap(n)),
        ("vhost", n) => Ok(NetSpec::Vhost(n)),
        _ => Err(format!(
            "'{s}': expected echo, tap, tap:NAME, vhost or vhost:NAME"
        )),
    }
}

/// `--virtio-notify`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum VirtioNotifyArg {
    /// Served in the MMIO exit on the vCPU thread.
    Exit,
    /// A KVM ioeventfd with a datamatch on the queue index, and a worker.
    Ioeventfd,
}

/// `--virtio-irq`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum VirtioIrqArg {
    /// KVM_IRQ_LINE from the thread that completed the request.
    Line,
    /// An irqfd bound to the device's GSI.
    Irqfd,
}

/// An on/off switch.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    /// On.
    On,
    /// Off.
    Off,
}

/// `--acpi`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcpiArg {
    /// A PC's fixed ACPI hardware.
    Full,
    /// Hardware-reduced ACPI.
    Reduced,
}

impl AcpiArg {
    /// The machine's setting.
    pub fn mode(self) -> trapline_machine::AcpiMode {
        match self {
            AcpiArg::Full => trapline_machine::AcpiMode::Full,
            AcpiArg::Reduced => trapline_machine::AcpiMode::Reduced,
        }
    }
}

/// `--irqchip`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqchipArg {
    /// LAPICs, IOAPIC and PICs in the kernel (and the PIT, unless --no-pit).
    Kernel,
    /// LAPICs in the kernel; no IOAPIC, PIC or PIT.
    Split,
    /// No interrupt controller or PIT: HLT exits to trapline.
    None,
}

impl IrqchipArg {
    /// The machine's setting.
    pub fn mode(self) -> trapline_machine::Irqchip {
        match self {
            IrqchipArg::Kernel => trapline_machine::Irqchip::Kernel,
            IrqchipArg::Split => trapline_machine::Irqchip::Split,
            IrqchipArg::None => trapline_machine::Irqchip::None,
        }
    }
}

/// `--stat-format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatFormat {
    /// Aligned columns.
    Table,
    /// Versioned JSON (schema `trapline-stat/1`).
    Json,
}

/// `--stat-sort`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatSortArg {
    /// Most exits first.
    Count,
    /// Most handling time first.
    Time,
}

impl StatSortArg {
    /// The machine's setting.
    pub fn sort(self) -> trapline_machine::StatSort {
        match self {
            StatSortArg::Count => trapline_machine::StatSort::Count,
            StatSortArg::Time => trapline_machine::StatSort::Time,
        }
    }
}

/// Optional devices.
// The names are QEMU's device names, which all end in "testdev".
#[allow(clippy::enum_variant_names)]
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceArg {
    /// QEMU's pci-testdev (1b36:0005) at 00:02.0.
    PciTestdev,
    /// QEMU's pc-testdev: scratch ports 0xE0-0xEB, IRQ ports 0x2000-0x2017, MMIO scratch at 0xFF000000.
    PcTestdev,
    /// arm64: QEMU's chr-testdev, a virtio console on the last virtio-mmio transport whose `Nq` ends the run with status (N<<1)|1.
    ChrTestdev,
}

/// A parsed `--serial`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SerialSpec {
    Stdio,
    File(PathBuf),
    None,
}

fn parse_serial(s: &str) -> Result<SerialSpec, String> {
    match s {
        "stdio" => Ok(SerialSpec::Stdio),
        "none" => Ok(SerialSpec::None),
        _ => match s.strip_prefix("file:") {
            Some(p) if !p.is_empty() => Ok(SerialSpec::File(PathBuf::from(p))),
            _ => Err(format!("'{s}': expected stdio, none or file:PATH")),
        },
    }
}

/// Parse a positive number of seconds (fractions allowed).
pub fn parse_timeout(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= 86_400.0) {
        return Err(format!(
            "'{s}': the timeout must be more than 0 and at most 86400 seconds"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("trapline").chain(args.iter().copied()))
    }

    #[test]
    fn run_defaults() {
        let Command::Run(a) = parse(&["run", "--kernel", "x.elf"]).unwrap().command else {
            panic!()
        };
        assert_eq!((a.smp, a.mem, a.append.as_str()), (1, 128, ""));
        assert_eq!(a.serial, SerialSpec::Stdio);
        assert!(a.timeout.is_none());
    }

    #[test]
    fn run_all_flags() {
        let Command::Run(a) = parse(&[
            "run",
            "--kernel",
            "k",
            "--smp",
            "4",
            "--mem",
            "64",
            "--append",
            "a b",
            "--initrd",
            "i",
            "--serial",
            "file:/tmp/s",
            "--timeout",
            "1.5",
            "--device",
            "pci-testdev",
            "--device",
            "pc-testdev",
            "--ecam-ro",
            "--no-seccomp",
            "--disk",
            "a.img",
            "--disk",
            "b.img,ro",
            "--virtio-notify",
            "exit",
            "--virtio-irq",
            "line",
            "--virtio-event-idx",
            "off",
            "--net",
            "tap:tap7",
        ])
        .unwrap()
        .command
        else {
            panic!()
        };
        assert_eq!((a.smp, a.mem, a.append.as_str()), (4, 64, "a b"));
        assert_eq!(a.serial, SerialSpec::File("/tmp/s".into()));
        assert_eq!(a.timeout, Some(std::time::Duration::from_millis(1500)));
        assert_eq!(a.devices, vec![DeviceArg::PciTestdev, DeviceArg::PcTestdev]);
        assert!(a.ecam_ro);
        assert!(a.no_seccomp);
        assert_eq!(
            a.disks,
            vec![
                DiskSpec {
                    path: "a.img".into(),
                    read_only: false
                },
                DiskSpec {
                    path: "b.img".into(),
                    read_only: true
                }
            ]
        );
        assert_eq!(a.virtio_notify, VirtioNotifyArg::Exit);
        assert_eq!(a.virtio_irq, VirtioIrqArg::Line);
        assert_eq!(a.virtio_event_idx, OnOff::Off);
        assert_eq!(a.net, Some(NetSpec::Tap(Some("tap7".into()))));
    }

    #[test]
    fn net_takes_a_back_end_and_maybe_a_name() {
        for (v, want) in [
            ("echo", NetSpec::Echo),
            ("tap", NetSpec::Tap(None)),
            ("tap:tap0", NetSpec::Tap(Some("tap0".into()))),
            ("vhost", NetSpec::Vhost(None)),
            ("vhost:tv1", NetSpec::Vhost(Some("tv1".into()))),
        ] {
            assert_eq!(parse_net(v), Ok(want), "{v}");
        }
        for bad in [
            "",
            "tun",
            "echo:x",
            "tap:",
            "tap:a/b",
            "tap:sixteen-chars-xx",
            "tap:a:b",
        ] {
            assert!(parse_net(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn mem_takes_qemu_sizes() {
        for (v, mib) in [
            ("512", 512),
            ("512M", 512),
            ("1G", 1024),
            ("0.5G", 512),
            ("1024k", 1),
        ] {
            let Command::Run(a) = parse(&["run", "--kernel", "k", "--mem", v])
                .unwrap()
                .command
            else {
                panic!()
            };
            assert_eq!(a.mem, mib, "{v}");
        }
    }

    #[test]
    fn virtio_defaults_are_the_fast_paths() {
        let Command::Run(a) = parse(&["run", "--kernel", "x.elf"]).unwrap().command else {
            panic!()
        };
        assert!(a.disks.is_empty());
        assert_eq!(a.net, None);
        assert_eq!(a.virtio_notify, VirtioNotifyArg::Ioeventfd);
        assert_eq!(a.virtio_irq, VirtioIrqArg::Irqfd);
        assert_eq!(a.virtio_event_idx, OnOff::On);
    }

    #[test]
    fn bad_flags_are_usage_errors() {
        for bad in [
            &["run"][..],
            &["run", "--kernel", "k", "--smp", "0"],
            &["run", "--kernel", "k", "--smp", "65"],
            &["run", "--kernel", "k", "--mem", "0"],
            &["run", "--kernel", "k", "--mem", "4096"],
            &["run", "--kernel", "k", "--mem", "512X"],
            &["run", "--kernel", "k", "--mem", "1.5M"],
            &["run", "--kernel", "k", "--cpu", "bogus"],
            &["run", "--kernel", "k", "--serial", "tcp:1"],
            &["run", "--kernel", "k", "--serial", "file:"],
            &["run", "--kernel", "k", "--timeout", "0"],
            &["run", "--kernel", "k", "--timeout", "abc"],
            &["run", "--kernel", "k", "--bogus"],
            &["run", "--kernel", "k", "--device", "virtio-net"],
            &["run", "--kernel", "k", "--disk", ",ro"],
            &["run", "--kernel", "k", "--disk", ""],
            &["run", "--kernel", "k", "--virtio-notify", "pio"],
            &["run", "--kernel", "k", "--virtio-irq", "msi"],
            &["run", "--kernel", "k", "--net", "bridge"],
            &["run", "--kernel", "k", "--net", "tap:no/slash"],
            &["frobnicate"],
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.use_stderr(), "{bad:?}");
            assert_eq!(e.exit_code(), 2, "{bad:?}");
        }
    }
}
