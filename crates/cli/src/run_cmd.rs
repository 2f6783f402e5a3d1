//! `trapline run`.

use std::fs::OpenOptions;
use std::time::Instant;

use trapline_devices::virtio::block::DiskFile;
use trapline_machine::words::io_lower as io_words;
use trapline_machine::{
    status, HostKvm, ImageBytes, Machine, MachineConfig, MachineError, SerialOutput, VirtioIrq,
    VirtioNotify,
};

use crate::args::{
    DeviceArg, OnOff, RunArgs, SerialSpec, StatFormat, VirtioIrqArg, VirtioNotifyArg,
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

/// The longest `--append` any guest can get, if the architecture has a
/// fixed slot for it: on x86 the loader's command-line slot (less its NUL;
/// a bzImage may take less, which the loader says). arm64 puts it in the
/// device tree, whose own limit the loader checks.
fn max_append() -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    return Some(trapline_machine::CMDLINE_CAPACITY as usize - 1);
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// The built-in payloads written for the lab (`builtin:probe`, and
/// `builtin:ringer` for its doorbells), which `trapline run` gives the
/// lab's probe devices and user-space doorbell.
#[cfg_attr(target_arch = "aarch64", allow(dead_code))]
fn is_lab_payload(kernel: &str) -> bool {
    matches!(kernel, "builtin:probe" | "builtin:ringer")
}

/// Whether `kernel` is a built-in payload that checks the pc-testdev ports
/// (`builtin:compat`: kvm-unit-tests' x86/run always adds that device), so
/// `trapline run` adds the device for it, as it adds the lab's devices for
/// the lab's payloads.
fn needs_pc_testdev(kernel: &str) -> bool {
    kernel == "builtin:compat"
}

/// Flags with no meaning on the arm64 `virt` machine, if any is set: the
/// message names the first.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn x86_only_flag(a: &RunArgs) -> Option<&'static str> {
    [
        (
            a.irqchip != crate::args::IrqchipArg::Kernel,
            "--irqchip split|none",
        ),
        (a.no_pit, "--no-pit"),
        (a.acpi != crate::args::AcpiArg::Full, "--acpi reduced"),
        (
            a.devices.contains(&DeviceArg::PcTestdev),
            "--device pc-testdev",
        ),
    ]
    .into_iter()
    .find_map(|(set, flag)| set.then_some(flag))
}

pub fn run(a: RunArgs) -> i32 {
    let start = Instant::now();
    #[cfg(target_arch = "aarch64")]
    if let Some(flag) = x86_only_flag(&a) {
        return fail(
            status::USAGE,
            format!("{flag} is x86-only: the arm64 virt machine has no such device or mode"),
        );
    }
    // The command line has a slot of its own among the boot structures: a
    // longer one is a bad flag, said before any image is read.
    if let Some(max) = max_append() {
        if a.append.len() > max {
            return fail(
                status::USAGE,
                format!(
                    "--append is {} bytes; the guest command line holds at most {max}",
                    a.append.len()
                ),
            );
        }
    }
    // Neither image can be larger than the guest RAM it is loaded into.
    let ram = a.mem << 20;
    let kernel = match read_kernel(&a.kernel, ram) {
        Ok(k) => k,
        Err(e) => return fail(status::BAD_IMAGE, e),
    };
    let initrd = match &a.initrd {
        // Built-in initramfs images for Linux guests.
        #[cfg(target_arch = "x86_64")]
        Some(p) if p.as_os_str() == "builtin:vblktest" => {
            Some(ImageBytes::Owned(trapline_guest::linux_vblk_initramfs()))
        }
        Some(p) => match ImageBytes::map(p, ram.saturating_sub(kernel.len() as u64)) {
            Ok(b) => Some(b),
            Err(e) => {
                return fail(
                    status::BAD_IMAGE,
                    format!("cannot read initrd '{}': {e}", p.display()),
                )
            }
        },
        None => None,
    };
    let serial = match &a.serial {
        SerialSpec::Stdio => SerialOutput::Stdout,
        SerialSpec::None => SerialOutput::Sink,
        SerialSpec::File(p) => match OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(p)
        {
            Ok(f) => SerialOutput::File(f),
            Err(e) => {
                return fail(
                    status::USAGE,
                    format!(
                        "--serial file:{}: cannot open it for writing: {}",
                        p.display(),
                        io_words(&e)
                    ),
                )
            }
        },
    };
    // --stat and --metrics-path files are opened now, so a bad path is a
    // usage error before the guest starts.
    let stat = match StatSink::open(&a) {
        Ok(s) => s,
        Err(e) => return fail(status::USAGE, e),
    };
    let metrics = match &a.metrics_path {
        Some(p) => match OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(p)
        {
            Ok(file) => Some(trapline_machine::MetricsSink {
                file,
                interval: std::time::Duration::from_secs(1),
            }),
            Err(e) => {
                return fail(
                    status::USAGE,
                    format!(
                        "--metrics-path {}: cannot open it for writing: {}",
                        p.display(),
                        io_words(&e)
                    ),
                )
            }
        },
        None => None,
    };
    // Disks too: a missing or unreadable file is a usage error before the
    // guest starts.
    let mut disks = Vec::with_capacity(a.disks.len());
    for d in &a.disks {
        match DiskFile::open(&d.path, d.read_only) {
            Ok(f) => disks.push(f),
            Err(e) => return fail(status::USAGE, format!("--disk: {e}")),
        }
    }
    let kvm = match HostKvm::open_from_env() {
        Ok(k) => k,
        Err(e) => return fail(status::NO_KVM, e),
    };
    trapline_machine::footprint::marks::mark("files opened");
    let mut cfg = MachineConfig::new(kernel, a.kernel.clone());
    cfg.virtio.disks = disks;
    cfg.virtio.notify = match a.virtio_notify {
        VirtioNotifyArg::Exit => VirtioNotify::Exit,
        VirtioNotifyArg::Ioeventfd => VirtioNotify::Ioeventfd,
    };
    cfg.virtio.irq = match a.virtio_irq {
        VirtioIrqArg::Line => VirtioIrq::Line,
        VirtioIrqArg::Irqfd => VirtioIrq::Irqfd,
    };
    cfg.virtio.event_idx = a.virtio_event_idx == OnOff::On;
    cfg.profile = stat.is_some();
    cfg.metrics = metrics;
    cfg.vcpus = a.smp;
    cfg.mem_mib = a.mem;
    cfg.cpu = a.cpu;
    cfg.append = a.append;
    cfg.initrd = initrd;
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
    cfg.serial = serial;
    cfg.timeout = a.timeout;
    cfg.pci_testdev = a.devices.contains(&DeviceArg::PciTestdev);
    cfg.pc_testdev = a.devices.contains(&DeviceArg::PcTestdev)
        || (cfg!(target_arch = "x86_64") && needs_pc_testdev(&a.kernel));
    cfg.chr_testdev = a.devices.contains(&DeviceArg::ChrTestdev);
    cfg.ecam_ro = a.ecam_ro;
    cfg.irqchip = a.irqchip.mode();
    cfg.acpi = a.acpi.mode();
    // KVM's PIT needs its PIC: only the full irqchip has one.
    cfg.pit = !a.no_pit && cfg.irqchip.has_ioapic_and_pic();
    let footprint = std::env::var_os("TRAPLINE_FOOTPRINT").is_some();
    cfg.measure_footprint = footprint;
    cfg.seccomp = if a.no_seccomp {
        trapline_machine::SeccompMode::Off
    } else {
        trapline_machine::SeccompMode::All
    };
    #[cfg(target_arch = "x86_64")]
    if is_lab_payload(&a.kernel) {
        // The lab's own guests talk to the lab's devices; any other guest
        // gets a machine without them. No fast paths: those are what a
        // lab scenario turns on, not what the payload needs to run.
        cfg.extension = Some(Box::new(trapline_lab_devices::LabFixtures::default()));
    }
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
        Ok(report) => {
            if footprint {
                // One machine-readable line for `trapline bench --view vmm`.
                eprintln!(
                    "trapline-footprint cpu_ns_to_first_kvm_run={} rss_beyond_guest_bytes={} wall_ns={}",
                    report.cpu_at_first_run.map_or(0, |d| d.as_nanos()),
                    report.vmm_rss_bytes.unwrap_or(0),
                    report.wall.as_nanos()
                );
                // Start-up split at its marks (docs/bench.md#footprint).
                let mut last: Option<trapline_machine::footprint::marks::Mark> = None;
                for m in trapline_machine::footprint::marks::take() {
                    let (cpu, faults) = match last {
                        Some(l) => (
                            m.cpu.saturating_sub(l.cpu),
                            m.minor_faults.saturating_sub(l.minor_faults),
                        ),
                        None => (m.cpu, m.minor_faults),
                    };
                    eprintln!(
                        "trapline-footprint-phase cpu_ns={} faults={faults} until={:?}",
                        cpu.as_nanos(),
                        m.name
                    );
                    last = Some(m);
                }
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
            }
            let o = &report.outcome;
            if let trapline_machine::Outcome::OutputFailed { .. } = o {
                // Once, naming the sink; the guest's output after this
                // point is what was lost.
                return fail(
                    o.exit_status(),
                    format!("{}: {}", serial_name(&a.serial), o.describe()),
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
        Err(e) => fail(error_status(&e), e),
    }
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
