//! `trapline run`.

use std::fs::OpenOptions;
use std::time::Instant;

use trapline_devices::virtio::block::DiskFile;
use trapline_devices::virtio::net::NetBackend;
use trapline_machine::words::io_lower as io_words;
use trapline_machine::{
    status, HostKvm, ImageBytes, Machine, MachineConfig, MachineError, NetConfig, SerialOutput,
    VirtioIrq, VirtioNotify,
};

use crate::args::{
    DeviceArg, NetSpec, OnOff, RunArgs, SerialSpec, StatFormat, VirtioIrqArg, VirtioNotifyArg,
};

fn fail(code: i32, msg: impl std::fmt::Display) -> i32 {
    eprintln!(
        "trapline: error: {}",
        trapline_machine::words::clean(&msg.to_string())
    );
    code
}

/// Where `--serial` sends the guest's console, as the user named it.
fn serial_name(s: &SerialSpec) -> String {
    match s {
        SerialSpec::Stdio => "stdout".into(),
        SerialSpec::None => "--serial none".into(),
        SerialSpec::File(p) => format!("--serial file:{}", p.display()),
    }
}

/// Read `--kernel`: a file (mapped, not copied: the loader's copy into
/// guest RAM is the only one), or `builtin:NAME` (borrowed from the
/// binary). A file or pipe longer than `max` bytes (the guest RAM it must
/// fit in) is refused before it is read past that.
pub fn read_kernel(spec: &str, max: u64) -> Result<ImageBytes, String> {
    if let Some(name) = spec.strip_prefix("builtin:") {
        return trapline_guest::payload(name)
            .map(ImageBytes::Static)
            .ok_or_else(|| {
                let names: Vec<&str> = trapline_guest::PAYLOADS.iter().map(|(n, _)| *n).collect();
                format!(
                    "no built-in payload '{name}'; built-ins are: {}",
                    names.join(", ")
                )
            });
    }
    ImageBytes::map(std::path::Path::new(spec), max)
        .map_err(|e| format!("cannot read guest image '{spec}': {e}"))
}

/// The built-in payloads written for the lab (`builtin:probe`, and
/// `builtin:ringer` for its doorbells), which `trapline run` gives the
/// lab's probe devices and user-space doorbell.
fn is_lab_payload(kernel: &str) -> bool {
    matches!(kernel, "builtin:probe" | "builtin:ringer")
}

/// Whether `kernel` is a built-in payload that checks the pc-testdev ports
/// (`builtin:compat`: kvm-unit-tests' x86/run always adds that device), so
/// `trapline run` adds the device for it (on the PC), as it adds the lab's
/// devices for the lab's payloads.
fn needs_pc_testdev(kernel: &str) -> bool {
    kernel == "builtin:compat"
}

/// `trapline run`: check the flags, open every file, build the machine,
/// run it, and end with the status its outcome gives.
pub fn run(a: RunArgs) -> i32 {
    let start = Instant::now();
    if let Err(code) = check_flags(&a) {
        return code;
    }
    let opened = match Opened::open(&a) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let kvm = match HostKvm::open_from_env() {
        Ok(k) => k,
        Err(e) => return fail(status::NO_KVM, e),
    };
    trapline_machine::footprint::marks::mark("files opened");
    let footprint = std::env::var_os("TRAPLINE_FOOTPRINT").is_some();
    let stat = opened.stat;
    let mut cfg = configure(&a, opened.kernel, opened.devices, footprint);
    // The console: stdin goes to COM1 when its output is on stdio; a
    // terminal is put in raw mode for the run and restored after it.
    let tty = match a.serial {
        SerialSpec::Stdio => {
            let tty = crate::tty::RawTerminal::enter(a.tty_signals);
            cfg.console_input = Some(tty.is_some());
            tty
        }
        _ => None,
    };
    cfg.profile = stat.is_some();
    // SIGINT, SIGTERM and SIGHUP now end the run as a timeout does: the
    // --stat profile and the last metrics line are written, and the status
    // is 128 + the signal's number (a second signal ends it at once).
    if let Err(e) = trapline_machine::signals::watch() {
        eprintln!("trapline: warning: cannot handle stop signals (they will end the run without its --stat profile): {e}");
    }
    let machine = match Machine::build(&kvm, cfg) {
        Ok(m) => m,
        Err(e) => return fail(error_status(&e), e),
    };
    if std::env::var_os("TRAPLINE_TIMING").is_some() {
        eprintln!(
            "trapline: machine built in {:.3} ms",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    let result = machine.run();
    drop(tty);
    match result {
        Ok(report) => finish(&report, stat, &a.serial, footprint),
        Err(e) => fail(error_status(&e), e),
    }
}

/// Flags this machine has no use for, and a command line longer than its
/// slot: usage errors, said before any image is read.
fn check_flags(a: &RunArgs) -> Result<(), i32> {
    if let Some(flag) = crate::arch::unsupported_run_flag(a) {
        return Err(fail(
            status::USAGE,
            format!("{flag} is x86-only: the arm64 virt machine has no such device or mode"),
        ));
    }
    // The command line has a slot of its own among the boot structures: a
    // longer one is a bad flag.
    if let Some(max) = crate::arch::max_append() {
        if a.append.len() > max {
            return Err(fail(
                status::USAGE,
                format!(
                    "--append is {} bytes; the guest command line holds at most {max}",
                    a.append.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Everything `trapline run` reads or writes, opened before the guest
/// starts: a bad path is an error then, not halfway through a run.
struct Opened {
    kernel: ImageBytes,
    stat: Option<StatSink>,
    devices: Devices,
}

/// The images, console and files the machine's devices are given.
struct Devices {
    initrd: Option<ImageBytes>,
    serial: SerialOutput,
    metrics: Option<trapline_machine::MetricsSink>,
    disks: Vec<DiskFile>,
    net: Option<Box<dyn NetBackend>>,
}

impl Opened {
    /// Opens `--kernel`, `--initrd`, `--serial`, `--stat`,
    /// `--metrics-path` and `--disk`; `Err` is the status after saying why.
    fn open(a: &RunArgs) -> Result<Opened, i32> {
        // Neither image can be larger than the guest RAM it is loaded into.
        let ram = a.mem << 20;
        let kernel = read_kernel(&a.kernel, ram).map_err(|e| fail(status::BAD_IMAGE, e))?;
        let initrd = match &a.initrd {
            Some(p) => Some(read_initrd(p, ram.saturating_sub(kernel.len() as u64))?),
            None => None,
        };
        let serial = open_serial(&a.serial)?;
        // --stat and --metrics-path files are opened now, so a bad path is
        // a usage error before the guest starts.
        let stat = StatSink::open(a).map_err(|e| fail(status::USAGE, e))?;
        let metrics = match &a.metrics_path {
            Some(p) => Some(trapline_machine::MetricsSink {
                file: create(p).map_err(|e| {
                    fail(
                        status::USAGE,
                        format!("--metrics-path {}: {e}", p.display()),
                    )
                })?,
                interval: std::time::Duration::from_secs(1),
            }),
            None => None,
        };
        // Disks too: a missing or unreadable file is a usage error before
        // the guest starts.
        let disks = a
            .disks
            .iter()
            .map(|d| DiskFile::open(&d.path, d.read_only))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(status::USAGE, format!("--disk: {e}")))?;
        // The network back end too: a TAP that cannot be had is a usage
        // error before the guest starts.
        let net = a
            .net
            .as_ref()
            .map(open_net)
            .transpose()
            .map_err(|e| fail(status::USAGE, format!("--net: {e}")))?;
        Ok(Opened {
            kernel,
            stat,
            devices: Devices {
                initrd,
                serial,
                metrics,
                disks,
                net,
            },
        })
    }
}

/// `--net`'s back end, opened.
fn open_net(spec: &NetSpec) -> Result<Box<dyn NetBackend>, String> {
    use trapline_devices::virtio::net::{Echo, Tap, TapOptions};
    Ok(match spec {
        NetSpec::Echo => Box::new(Echo::new()),
        NetSpec::Tap(name) => {
            let tap = Tap::open(&TapOptions {
                name: name.clone(),
                vnet_hdr: false,
            })
            .map_err(|e| e.to_string())?;
            Box::new(tap)
        }
        NetSpec::Vhost(_) => {
            return Err(
                "vhost: the vhost-net back end is not in this build yet; use echo or tap[:NAME]"
                    .into(),
            )
        }
    })
}

/// `--initrd`: a built-in initramfs for Linux guests, or a file of at most
/// `max` bytes.
fn read_initrd(p: &std::path::Path, max: u64) -> Result<ImageBytes, i32> {
    if let Some(builtin) = crate::arch::builtin_initrd(p) {
        return Ok(builtin);
    }
    ImageBytes::map(p, max).map_err(|e| {
        fail(
            status::BAD_IMAGE,
            format!("cannot read initrd '{}': {e}", p.display()),
        )
    })
}

/// `--serial`'s sink; a file that cannot be written is a usage error.
fn open_serial(spec: &SerialSpec) -> Result<SerialOutput, i32> {
    Ok(match spec {
        SerialSpec::Stdio => SerialOutput::Stdout,
        SerialSpec::None => SerialOutput::Sink,
        SerialSpec::File(p) => SerialOutput::File(
            create(p)
                .map_err(|e| fail(status::USAGE, format!("--serial file:{}: {e}", p.display())))?,
        ),
    })
}

/// `p` created (or truncated) for writing, or why not in words.
fn create(p: &std::path::Path) -> Result<std::fs::File, String> {
    OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(p)
        .map_err(|e| format!("cannot open it for writing: {}", io_words(&e)))
}

/// The machine the flags describe, with the opened files in it.
fn configure(a: &RunArgs, kernel: ImageBytes, devices: Devices, footprint: bool) -> MachineConfig {
    let mut cfg = MachineConfig::new(kernel, a.kernel.clone());
    cfg.virtio.disks = devices.disks;
    cfg.virtio.net = devices.net.map(NetConfig::new);
    cfg.virtio.notify = match a.virtio_notify {
        VirtioNotifyArg::Exit => VirtioNotify::Exit,
        VirtioNotifyArg::Ioeventfd => VirtioNotify::Ioeventfd,
    };
    cfg.virtio.irq = match a.virtio_irq {
        VirtioIrqArg::Line => VirtioIrq::Line,
        VirtioIrqArg::Irqfd => VirtioIrq::Irqfd,
    };
    cfg.virtio.event_idx = a.virtio_event_idx == OnOff::On;
    cfg.metrics = devices.metrics;
    cfg.vcpus = a.smp;
    cfg.mem_mib = a.mem;
    cfg.cpu = a.cpu.clone();
    cfg.append = a.append.clone();
    cfg.initrd = devices.initrd;
    cfg.serial = devices.serial;
    cfg.timeout = a.timeout;
    cfg.pci_testdev = a.devices.contains(&DeviceArg::PciTestdev);
    cfg.pc_testdev = a.devices.contains(&DeviceArg::PcTestdev)
        || (!crate::arch::ARM64 && needs_pc_testdev(&a.kernel));
    cfg.chr_testdev = a.devices.contains(&DeviceArg::ChrTestdev);
    cfg.ecam_ro = a.ecam_ro;
    cfg.irqchip = a.irqchip.mode();
    cfg.acpi = a.acpi.mode();
    // KVM's PIT needs its PIC: only the full irqchip has one.
    cfg.pit = !a.no_pit && cfg.irqchip.has_ioapic_and_pic();
    cfg.measure_footprint = footprint;
    cfg.seccomp = if a.no_seccomp {
        trapline_machine::SeccompMode::Off
    } else {
        trapline_machine::SeccompMode::All
    };
    // The lab's own guests talk to the lab's devices; any other guest
    // gets a machine without them.
    if is_lab_payload(&a.kernel) {
        cfg.extension = crate::arch::lab_extension();
    }
    cfg
}

/// The network card's machine-readable line: transport counters, frames
/// and bytes each way, drops by reason.
fn net_line(n: &trapline_machine::NetReadout) -> String {
    let t = &n.transport;
    let mut line = format!(
        "trapline-virtio net=0 backend={} notifies={} completions={} interrupts={} resets_requested={} tx_frames={} tx_bytes={} rx_frames={} rx_bytes={} drops={}",
        n.backend,
        t.notifies,
        t.completions,
        t.interrupts,
        t.resets_requested,
        n.tx_frames,
        n.tx_bytes,
        n.rx_frames,
        n.rx_bytes,
        n.drops.iter().map(|d| d.1).sum::<u64>()
    );
    for (name, count) in &n.drops {
        line.push_str(&format!(" {name}={count}"));
    }
    if n.kernel_data_path {
        line.push_str(" data_path=kernel");
    }
    line
}

/// After a run: the footprint lines, the `--stat` profile and the virtio
/// lines, what went wrong if anything, and the outcome's status.
fn finish(
    report: &trapline_machine::RunReport,
    stat: Option<StatSink>,
    serial: &SerialSpec,
    footprint: bool,
) -> i32 {
    if footprint {
        print_footprint(report);
    }
    if let (Some(sink), Some(st)) = (stat, &report.stat) {
        sink.write(st);
        // One machine-readable line per disk, beside the profile.
        for (i, v) in report.virtio.iter().enumerate() {
            eprintln!(
                "trapline-virtio disk={i} notifies={} completions={} interrupts={} reads={} writes={} flushes={} errors={} resets_requested={}",
                v.notifies, v.completions, v.interrupts, v.reads, v.writes, v.flushes, v.errors, v.resets_requested
            );
        }
        if let Some(n) = &report.virtio_net {
            eprintln!("{}", net_line(n));
        }
    }
    if let Some(e) = report
        .virtio_net
        .as_ref()
        .and_then(|n| n.activate_error.as_ref())
    {
        eprintln!("trapline: virtio-net: the back end did not go live: {e}");
    }
    let o = &report.outcome;
    if let trapline_machine::Outcome::OutputFailed { .. } = o {
        // Once, naming the sink; the guest's output after this point is
        // what was lost.
        return fail(
            o.exit_status(),
            format!("{}: {}", serial_name(serial), o.describe()),
        );
    }
    if !matches!(
        o,
        trapline_machine::Outcome::DebugExit(_) | trapline_machine::Outcome::PowerOff
    ) {
        eprintln!("trapline: {}", o.describe());
    }
    o.exit_status()
}

/// `TRAPLINE_FOOTPRINT`'s lines: one machine-readable line for `trapline
/// bench --view vmm`, then start-up split at its marks
/// (docs/bench.md#footprint).
fn print_footprint(report: &trapline_machine::RunReport) {
    eprintln!(
        "trapline-footprint cpu_ns_to_first_kvm_run={} rss_beyond_guest_bytes={} wall_ns={}",
        report.cpu_at_first_run.map_or(0, |d| d.as_nanos()),
        report.vmm_rss_bytes.unwrap_or(0),
        report.wall.as_nanos()
    );
    trapline_machine::footprint::marks::print_phases();
}

fn error_status(e: &MachineError) -> i32 {
    if e.is_image_error() {
        status::BAD_IMAGE
    } else if e.is_kvm_unavailable() {
        status::NO_KVM
    } else if matches!(e, MachineError::Config(_)) {
        status::USAGE
    } else {
        status::VMM_ERROR
    }
}

/// Where the --stat report goes.
struct StatSink {
    /// `None`: stderr.
    file: Option<std::fs::File>,
    format: StatFormat,
    /// How the table is laid out.
    table: trapline_machine::TableOptions,
}

impl StatSink {
    /// From `--stat[=FILE]` or TRAPLINE_STAT, and `--stat-format` or
    /// TRAPLINE_STAT_FORMAT. `None` when profiling is off.
    fn open(a: &RunArgs) -> Result<Option<StatSink>, String> {
        let format = match (a.stat_format, std::env::var("TRAPLINE_STAT_FORMAT").ok()) {
            (Some(f), _) => f,
            (None, Some(f)) if f == "json" => StatFormat::Json,
            (None, Some(f)) if f == "table" || f.is_empty() => StatFormat::Table,
            (None, Some(f)) => {
                return Err(format!("TRAPLINE_STAT_FORMAT={f}: must be table or json"))
            }
            (None, None) => StatFormat::Table,
        };
        let sort = match (a.stat_sort, std::env::var("TRAPLINE_STAT_SORT").ok()) {
            (Some(s), _) => s.sort(),
            (None, Some(s)) if s.is_empty() => trapline_machine::StatSort::default(),
            (None, Some(s)) => s
                .parse()
                .map_err(|e| format!("TRAPLINE_STAT_SORT={s}: {e}"))?,
            (None, None) => trapline_machine::StatSort::default(),
        };
        let table = trapline_machine::TableOptions {
            sort,
            per_vcpu: a.stat_vcpu,
        };
        // How the user named the file, for the error: the flag or the
        // environment variable.
        let (target, named) = match &a.stat {
            Some(t) => (t.clone(), "--stat="),
            None => match std::env::var("TRAPLINE_STAT") {
                Ok(t) if !t.is_empty() => (t, "TRAPLINE_STAT="),
                _ => return Ok(None),
            },
        };
        if target == "-" {
            return Ok(Some(StatSink {
                file: None,
                format,
                table,
            }));
        }
        let path = stat_path(&target, &a.kernel, std::process::id(), format);
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| {
                format!(
                    "{named}{}: cannot open it for writing: {}",
                    path.display(),
                    io_words(&e)
                )
            })?;
        Ok(Some(StatSink {
            file: Some(file),
            format,
            table,
        }))
    }

    fn write(self, report: &trapline_machine::StatReport) {
        use std::io::Write as _;
        let text = match self.format {
            StatFormat::Table => report.table_with(self.table),
            StatFormat::Json => {
                let mut j = serde_json::to_string_pretty(&report.json()).unwrap_or_default();
                j.push('\n');
                j
            }
        };
        let res = match self.file {
            Some(mut f) => f.write_all(text.as_bytes()),
            None => std::io::stderr().write_all(text.as_bytes()),
        };
        if let Err(e) = res {
            eprintln!(
                "trapline: warning: writing the --stat report failed: {}",
                trapline_machine::words::io(&e)
            );
        }
    }
}

/// The --stat file for `target`: `%p` is the process id and `%k` the
/// kernel's file name; an existing directory gets `<kernel>.<pid>.stat`
/// (`.json` for JSON), so a harness running many guests under one
/// TRAPLINE_STAT gets one file per run.
fn stat_path(target: &str, kernel: &str, pid: u32, format: StatFormat) -> std::path::PathBuf {
    let kname = kernel
        .rsplit(['/', ':'])
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or("guest");
    let p = std::path::Path::new(target);
    if p.is_dir() {
        let ext = match format {
            StatFormat::Table => "stat",
            StatFormat::Json => "json",
        };
        return p.join(format!("{kname}.{pid}.{ext}"));
    }
    target
        .replace("%p", &pid.to_string())
        .replace("%k", kname)
        .into()
}

#[cfg(test)]
mod stat_path_tests {
    use super::*;

    #[test]
    fn placeholders_and_directories_make_one_file_per_run() {
        let p = stat_path("/x/%k-%p.txt", "tests/vmexit.flat", 42, StatFormat::Table);
        assert_eq!(p, std::path::PathBuf::from("/x/vmexit.flat-42.txt"));
        let p = stat_path("/x/s", "builtin:hello", 7, StatFormat::Table);
        assert_eq!(p, std::path::PathBuf::from("/x/s"));
        let dir = std::env::temp_dir();
        let p = stat_path(dir.to_str().unwrap(), "builtin:hello", 7, StatFormat::Json);
        assert_eq!(p, dir.join("hello.7.json"));
    }
}

#[cfg(test)]
mod lab_payload_tests {
    use super::is_lab_payload;

    #[test]
    fn only_the_labs_own_payloads_get_the_labs_devices() {
        assert!(is_lab_payload("builtin:probe"));
        assert!(is_lab_payload("builtin:ringer"));
        for plain in [
            "builtin:hello",
            "builtin:smp",
            "probe",
            "/tmp/builtin:probe",
        ] {
            assert!(!is_lab_payload(plain), "{plain}");
        }
    }
}

#[cfg(test)]
mod read_kernel_tests {
    use trapline_machine::ImageBytes;

    use super::read_kernel;

    #[test]
    fn built_in_payloads_are_borrowed_from_the_binary_not_copied() {
        let hello = trapline_guest::payload("hello").unwrap();
        match read_kernel("builtin:hello", 1 << 20).unwrap() {
            ImageBytes::Static(b) => assert!(std::ptr::eq(b, hello)),
            other => panic!("builtin:hello was copied: {other:?}"),
        }
        assert!(read_kernel("builtin:nosuch", 1 << 20)
            .unwrap_err()
            .contains("built-ins are: "));
    }
}
