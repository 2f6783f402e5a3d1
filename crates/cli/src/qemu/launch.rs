//! The QEMU front end's entry point: parse, print what was asked for, or
//! check the host and the kernel in QEMU's order and run the machine.

use std::ffi::OsString;
use std::fmt::Display;

use trapline_machine::status;

use super::help::{device_options, help_text, version_text, ACCEL_LIST, CHARDEV_LIST};
use super::parse::{parse, Action};
use super::platform::Platform;
use super::translate::QemuRun;
use crate::run_cmd;

/// Entry point for a QEMU-style command line: `argv` is the whole argv,
/// `argv[0]` included. Returns the process exit status.
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
        Action::Help(s) => print_out(&help_text(s)),
        Action::Version(s) => print_out(&version_text(s)),
        Action::ListDevices => print_out(Platform::HOST.device_list()),
        Action::DeviceOptions(name) => print_out(&device_options(name)),
        Action::ListMachines => print_out(Platform::HOST.machine_list()),
        Action::MachineOptions => print_out(Platform::HOST.machine_options()),
        Action::ListChardevs => print_out(CHARDEV_LIST),
        Action::ListCpus => print_out(Platform::HOST.cpu_list()),
        Action::ListAccels => print_out(ACCEL_LIST),
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
        eprintln!(
            "trapline: error: {}",
            trapline_machine::words::clean(&e.to_string())
        );
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
    let fail = |why: &dyn Display| {
        format!(
            "could not load kernel '{spec}': {}",
            trapline_machine::words::clean(&why.to_string())
        )
    };
    if spec.starts_with("builtin:") {
        return run_cmd::read_kernel(spec, u64::MAX)
            .map(drop)
            .map_err(|e| fail(&e));
    }
    match std::fs::metadata(spec) {
        Err(e) => Err(fail(&e)),
        Ok(m) if m.is_dir() => Err(fail(&"it is a directory")),
        Ok(_) => std::fs::File::open(spec).map(drop).map_err(|e| fail(&e)),
    }
}

fn print_out(text: &str) -> i32 {
    // A closed pipe (`… | grep -q`) ends trapline quietly, as it ends QEMU.
    trapline_lab::out::write_all(text);
    0
}
