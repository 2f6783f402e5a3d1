//! The one table of QEMU options trapline accepts: each option's name,
//! whether it takes a value, and its entry in `-h`. What an option does is
//! chosen by its variant in [`super::parse`], where the compiler checks
//! that every option is handled.

use std::ffi::OsStr;

/// A QEMU option trapline accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Opt {
    /// `-kernel FILE`.
    Kernel = 0,
    /// `-append STR`.
    Append,
    /// `-initrd FILE`.
    Initrd,
    /// `-smp N`.
    Smp,
    /// `-m SIZE`.
    Mem,
    /// `-device DRIVER[,PROP=V…]`.
    Device,
    /// `-chardev testdev,id=ID` (chr-testdev's backend).
    Chardev,
    /// `-serial stdio|none|file:PATH`.
    Serial,
    /// `-display none`.
    Display,
    /// `-nographic`.
    Nographic,
    /// `-nodefaults`.
    Nodefaults,
    /// `-no-reboot`.
    NoReboot,
    /// `-machine PROPS`.
    Machine,
    /// `-M PROPS`, `-machine`'s short name.
    MachineShort,
    /// `-accel kvm`.
    Accel,
    /// `-enable-kvm`.
    EnableKvm,
    /// `-global kvm-pit.lost_tick_policy=discard`.
    Global,
    /// `-cpu MODEL[,±FLAG…]`.
    Cpu,
    /// `-name NAME`.
    Name,
    /// `-vga none`.
    Vga,
    /// `-vnc none`.
    Vnc,
    /// `-no-user-config`.
    NoUserConfig,
    /// `-h`.
    H,
    /// `-help`.
    Help,
    /// `-version`.
    Version,
}

/// Number of [`Opt`] values.
const OPTS: usize = Opt::Version as usize + 1;

/// What `-h` and the parser need to know about one option.
pub struct Spec {
    /// The name, without its leading dash.
    pub name: &'static str,
    /// Whether the next argument is its value.
    pub takes_value: bool,
    /// Its entry in `-h`, `None` where another option's entry covers it.
    /// `{MAX_VCPUS}` and `{MAX_MEM_MIB}` are filled in by the help text.
    pub help: Option<&'static str>,
}

impl Opt {
    /// Every option, in the order `-h` documents them and refusals list
    /// them. (A list of the wrong length does not compile; a unit test
    /// checks each variant is at its own index.)
    pub const ALL: [Opt; OPTS] = [
        Opt::Kernel,
        Opt::Append,
        Opt::Initrd,
        Opt::Smp,
        Opt::Mem,
        Opt::Device,
        Opt::Chardev,
        Opt::Serial,
        Opt::Display,
        Opt::Nographic,
        Opt::Nodefaults,
        Opt::NoReboot,
        Opt::Machine,
        Opt::MachineShort,
        Opt::Accel,
        Opt::EnableKvm,
        Opt::Global,
        Opt::Cpu,
        Opt::Name,
        Opt::Vga,
        Opt::Vnc,
        Opt::NoUserConfig,
        Opt::H,
        Opt::Help,
        Opt::Version,
    ];

    /// The option's row of the table.
    pub const fn spec(self) -> Spec {
        let (name, takes_value, help) = match self {
            Opt::Kernel => ("kernel", true, Some(concat!(
                    "  -kernel FILE      guest image: Multiboot v1 ELF32 (kvm-unit-tests' .flat) or\n",
                    "                    ELF64, or builtin:NAME for one of trapline's payloads\n",
                ))),
            Opt::Append => ("append", true, Some("  -append STR       guest command line (argv[0] is the -kernel path)\n")),
            Opt::Initrd => ("initrd", true, Some("  -initrd FILE      one Multiboot module (kvm-unit-tests' environment file)\n")),
            Opt::Smp => ("smp", true, Some(concat!(
                    "  -smp N            vCPUs, 1-{MAX_VCPUS}; also cpus=N[,maxcpus=…,sockets=…,cores=…,threads=…]\n",
                    "                    (the CPU count is taken; topology and hotplug are not modelled)\n",
                ))),
            Opt::Mem => ("m", true, Some(concat!(
                    "  -m SIZE           guest RAM: MiB, or with a B/K/M/G/T suffix, or size=SIZE;\n",
                    "                    1 MiB to {MAX_MEM_MIB} MiB, default 128M\n",
                ))),
            Opt::Device => ("device", true, Some(concat!(
                    "  -device pci-testdev | pc-testdev | isa-debug-exit,iobase=0xf4,iosize=0x4 | help\n",
                    "                    (isa-debug-exit is always present, at exactly those values);\n",
                    "                    arm64: -device virtio-serial-device -device virtconsole,chardev=ID\n",
                ))),
            Opt::Chardev => ("chardev", true, Some(concat!(
                    "  -chardev testdev,id=ID | help\n",
                    "                    QEMU's testdev backend, for -device virtconsole,chardev=ID (arm64)\n",
                ))),
            Opt::Serial => ("serial", true, Some(concat!(
                    "  -serial stdio|none|file:PATH\n",
                    "                    COM1 (default stdio; unconnected under -nodefaults)\n",
                ))),
            Opt::Display => ("display", true, Some("  -display none, -vga none, -vnc none, -nographic (= -display none -serial stdio)\n")),
            Opt::Nographic => ("nographic", false, None),
            Opt::Nodefaults => ("nodefaults", false, None),
            Opt::NoReboot => ("no-reboot", false, None),
            Opt::Machine => ("machine", true, Some(concat!(
                    "  -machine [pc,]accel=kvm[,pit=on|off][,kernel_irqchip=on|split|off]    (also -M)\n",
                    "                    arm64: -machine [virt,]accel=kvm[,gic-version=3|host|max][,highmem=on|off]\n",
                ))),
            Opt::MachineShort => ("M", true, None),
            Opt::Accel => ("accel", true, Some("  -accel kvm[,kernel-irqchip=on|split|off], -enable-kvm\n")),
            Opt::EnableKvm => ("enable-kvm", false, None),
            Opt::Global => ("global", true, Some("  -global kvm-pit.lost_tick_policy=discard\n")),
            Opt::Cpu => ("cpu", true, Some(concat!(
                    "  -cpu MODEL[,…]    host (default), max or qemu64, then +flag/-flag (qemu64,-cx16)\n",
                    "                    on this host; QEMU models and flags are ignored\n",
                ))),
            Opt::Name => ("name", true, Some("  -name NAME, -nodefaults, -no-reboot, -no-user-config    accepted\n")),
            Opt::Vga => ("vga", true, None),
            Opt::Vnc => ("vnc", true, None),
            Opt::NoUserConfig => ("no-user-config", false, None),
            Opt::H => ("h", false, Some("  -h, -help, --help, -version, --version\n")),
            Opt::Help => ("help", false, None),
            Opt::Version => ("version", false, None),
        };
        Spec {
            name,
            takes_value,
            help,
        }
    }

    /// The option called `name` (no leading dash), if trapline accepts it.
    pub fn from_name(name: &str) -> Option<Opt> {
        Opt::ALL.into_iter().find(|o| o.spec().name == name)
    }
}

/// Every accepted option, dashed, for refusals.
pub fn accepted_list() -> String {
    Opt::ALL
        .iter()
        .map(|o| format!("-{}", o.spec().name))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `main` should hand argv to [`super::main`]: the first argument
/// is a single-dash option (QEMU's style; trapline's own flags are
/// `--long`, except clap's `-V`), or the two-dash spelling of an option in
/// the table (`--no-reboot`, which run_tests.sh puts first, `--help`,
/// `--version`).
pub fn is_qemu_style(arg: &OsStr) -> bool {
    let Some(a) = arg.to_str() else {
        return false;
    };
    if let Some(long) = a.strip_prefix("--") {
        return Opt::from_name(long).is_some();
    }
    a.len() > 1 && a.starts_with('-') && a != "-V"
}
