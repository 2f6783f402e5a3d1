//! Helpers every end-to-end test of the `trapline` binary shares.
// Each test file uses its own subset.
#![allow(dead_code)]

#[cfg(target_arch = "aarch64")]
pub mod linux_arm64;
#[cfg(target_arch = "x86_64")]
pub mod linux_x86;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// Write a built-in payload to a file, so the file path is exercised. Each
/// call writes its own file: tests run in parallel, and rewriting a shared
/// one (truncate, then write) while another test's VMM reads it made QEMU
/// fail to load it.
pub fn payload_file(name: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let p = tmp(&format!("{name}-{n}.flat"));
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

/// Runs `kernel` under QEMU (`$TRAPLINE_QEMU`, else qemu-system-x86_64) with
/// KVM, no default devices, COM1 on stdout, isa-debug-exit at 0xf4, 128 MiB
/// and `-cpu qemu64` (QEMU 7.2 aborts with `-cpu host`/`max` on some AMD
/// hosts; qemu64 is its default model anyway), plus `extra`. `None`, said
/// loudly, when QEMU is not installed. A run past 240 s is killed.
pub fn qemu(kernel: &Path, extra: &[&str]) -> Option<Output> {
    let bin = std::env::var("TRAPLINE_QEMU").unwrap_or_else(|_| "qemu-system-x86_64".into());
    if Command::new(&bin).arg("--version").output().is_err() {
        eprintln!("SKIPPED QEMU comparison: {bin} is not installed — this comparison did NOT run");
        return None;
    }
    let mut child = Command::new(&bin)
        .args([
            "-accel",
            "kvm",
            "-cpu",
            "qemu64",
            "-nodefaults",
            "-no-reboot",
            "-display",
            "none",
            "-serial",
            "stdio",
            "-device",
            "isa-debug-exit,iobase=0xf4,iosize=0x4",
            "-m",
            "128",
        ])
        .args(extra)
        .arg("-kernel")
        .arg(kernel)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(240);
    while child.try_wait().ok()?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().ok()
}
