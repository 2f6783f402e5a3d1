//! Helpers every end-to-end test of the `trapline` binary shares.
// Each test file uses its own subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub fn trapline() -> Command {
    Command::new(env!("CARGO_BIN_EXE_trapline"))
}

/// Run it with `args` and wait.
pub fn run(args: &[&str]) -> Output {
    trapline().args(args).output().expect("spawn trapline")
}

/// True when /dev/kvm exists; otherwise say loudly that `test` did not run.
pub fn kvm_present(test: &str) -> bool {
    if Path::new("/dev/kvm").exists() {
        return true;
    }
    eprintln!("SKIPPED {test}: /dev/kvm is absent on this machine — this KVM test did NOT run");
    false
}

/// A path in this test binary's own scratch directory.
pub fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "trapline-{}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Write a built-in payload to a file, so the file path is exercised.
pub fn payload_file(name: &str) -> PathBuf {
    let p = tmp(&format!("{name}.flat"));
    std::fs::write(&p, trapline_guest::payload(name).expect("payload exists")).unwrap();
    p
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The exit status (a signal is a test failure).
pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exited with a status, not a signal")
}
