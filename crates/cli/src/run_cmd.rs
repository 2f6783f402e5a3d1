//! `trapline run`.

use std::fs::OpenOptions;
use std::time::Instant;

use trapline_machine::{status, HostKvm, Machine, MachineConfig, MachineError, SerialOutput};

use crate::args::{DeviceArg, RunArgs, SerialSpec};

fn fail(code: i32, msg: impl std::fmt::Display) -> i32 {
    eprintln!("trapline: error: {msg}");
    code
}

/// Read `--kernel`: a file, or `builtin:NAME`.
pub fn read_kernel(spec: &str) -> Result<Vec<u8>, String> {
    if let Some(name) = spec.strip_prefix("builtin:") {
        return trapline_guest::payload(name)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                let names: Vec<&str> = trapline_guest::PAYLOADS.iter().map(|(n, _)| *n).collect();
                format!(
                    "no built-in payload '{name}'; built-ins are: {}",
                    names.join(", ")
                )
            });
    }
    std::fs::read(spec).map_err(|e| format!("cannot read guest image '{spec}': {e}"))
}

pub fn run(a: RunArgs) -> i32 {
    let start = Instant::now();
    let kernel = match read_kernel(&a.kernel) {
        Ok(k) => k,
        Err(e) => return fail(status::BAD_IMAGE, e),
    };
    let initrd = match &a.initrd {
        Some(p) => match std::fs::read(p) {
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
                        "--serial file:{}: cannot open it for writing: {e}",
                        p.display()
                    ),
                )
            }
        },
    };
    let kvm = match HostKvm::open_from_env() {
        Ok(k) => k,
        Err(e) => return fail(status::NO_KVM, e),
    };
    let mut cfg = MachineConfig::new(kernel, a.kernel.clone());
    cfg.vcpus = a.smp;
    cfg.mem_mib = a.mem;
    cfg.append = a.append;
    cfg.initrd = initrd;
    cfg.serial = serial;
    cfg.timeout = a.timeout;
    cfg.pci_testdev = a.devices.contains(&DeviceArg::PciTestdev);
    cfg.pc_testdev = a.devices.contains(&DeviceArg::PcTestdev);
    cfg.ecam_ro = a.ecam_ro;
    let footprint = std::env::var_os("TRAPLINE_FOOTPRINT").is_some();
    cfg.measure_footprint = footprint;
    cfg.seccomp = if a.no_seccomp {
        trapline_machine::SeccompMode::Off
    } else {
        trapline_machine::SeccompMode::All
    };
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
    match machine.run() {
        Ok(report) => {
            if footprint {
                // One machine-readable line for `trapline bench --view vmm`.
                eprintln!(
                    "trapline-footprint cpu_ns_to_first_kvm_run={} rss_beyond_guest_bytes={} wall_ns={}",
                    report.cpu_at_first_run.map_or(0, |d| d.as_nanos()),
                    report.vmm_rss_bytes.unwrap_or(0),
                    report.wall.as_nanos()
                );
            }
            let o = &report.outcome;
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
