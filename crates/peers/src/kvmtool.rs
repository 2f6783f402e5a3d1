//! kvmtool as a peer (`--peer kvmtool`): an `lkvm` found on the host, as a
//! user installs it from their distribution (Debian's `kvmtool` package),
//! or the binary `TRAPLINE_LKVM` names. Without one the lab refuses the
//! flag, saying how to get it, with the status a missing QEMU gives.
//!
//! What it can run: kvmtool boots a kernel image as Linux's arm64 boot
//! protocol says, raw at its RAM base + 512 KiB, and its machine is its
//! own (`trapline_abi::KVMTOOL_*`: RAM from 0x8000_0000, an 8250 UART at
//! 0x0100_0000, the GIC just below 0x4000_0000, no PL011). On arm64 the
//! lab boots the probe's kvmtool build there (`trapline_guest::
//! PROBE_KVMTOOL`, linked for that map) with the scenarios
//! the catalog lets run, and reads its
//! `TRAPLINE-RESULT` lines from the serial console; the rest get `n/a on
//! kvmtool` rows with the reason. On x86 every probe row is n/a (the probe
//! is a Multiboot image there, which lkvm does not load). kvm-unit-tests'
//! micro-bench (`--micro-bench`) is tried on it, as its build allows.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The binary looked for on PATH.
pub const LKVM: &str = "lkvm";

pub use crate::arch::kvmtool::*;

/// An `lkvm` that was found.
#[derive(Clone, Debug)]
pub struct Kvmtool {
    /// Path or name to run.
    pub binary: PathBuf,
    /// `lkvm version`'s line, e.g. `kvm tool 3.18.0`.
    pub version: String,
}

/// Find `lkvm`, or say how to install it.
pub fn find() -> Result<Kvmtool, String> {
    let binary = std::env::var_os("TRAPLINE_LKVM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(LKVM));
    let missing = |why: String| {
        format!(
            "cannot run {} ({why}): --peer kvmtool needs kvmtool's lkvm on PATH; on Debian install \
             the kvmtool package (apt-get install kvmtool), or point TRAPLINE_LKVM at the binary",
            binary.display()
        )
    };
    let out = Command::new(&binary)
        .arg("version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| missing(e.to_string()))?;
    if !out.status.success() {
        return Err(missing(format!(
            "`lkvm version` exited with {}",
            out.status
        )));
    }
    let version = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    Ok(Kvmtool { binary, version })
}

impl Kvmtool {
    /// How the report names it: `kvmtool (kvm tool 3.18.0)`.
    pub fn label(&self) -> String {
        format!("kvmtool ({})", self.version)
    }

    /// `lkvm run` of `kernel` with `cpus` vCPUs and `mem_mib` MiB on the
    /// serial console, ended by `timeout` (lkvm has no timeout of its
    /// own); returns the console and lkvm's exit status.
    pub fn run(
        &self,
        kernel: &Path,
        cpus: u32,
        mem_mib: u32,
        timeout: Duration,
    ) -> Result<(String, std::process::ExitStatus), String> {
        self.run_with(run_args(kernel, cpus, mem_mib), timeout)
    }

    /// `lkvm` with `args`, ended by `timeout`.
    pub(crate) fn run_with(
        &self,
        args: Vec<String>,
        timeout: Duration,
    ) -> Result<(String, std::process::ExitStatus), String> {
        crate::child::stdout_and_status(
            Command::new("timeout")
                .args(["-s", "KILL"])
                .arg(timeout.as_secs().max(1).to_string())
                .arg(&self.binary)
                .args(args),
        )
        .map_err(|e| format!("starting {}: {e}", self.binary.display()))
    }
}

/// `lkvm`'s arguments to boot `kernel` with `cpus` vCPUs and `mem_mib` MiB,
/// its console on the 8250 (stdout).
pub(crate) fn run_args(kernel: &Path, cpus: u32, mem_mib: u32) -> Vec<String> {
    let mut args: Vec<String> = vec!["run".into(), "-k".into()];
    args.push(kernel.display().to_string());
    args.extend(
        [
            "-c",
            &cpus.to_string(),
            "-m",
            &mem_mib.to_string(),
            "--console",
            "serial",
        ]
        .map(String::from),
    );
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_lkvm_says_how_to_install_it() {
        std::env::set_var("TRAPLINE_LKVM", "/nonexistent/lkvm");
        let e = find().unwrap_err();
        std::env::remove_var("TRAPLINE_LKVM");
        assert!(e.contains("apt-get install kvmtool"), "{e}");
        assert!(e.contains("TRAPLINE_LKVM"), "{e}");
    }

    #[test]
    fn lkvm_boots_the_image_on_its_serial_console() {
        let args = run_args(Path::new("/tmp/x.flat"), 2, 256);
        assert_eq!(
            args,
            [
                "run",
                "-k",
                "/tmp/x.flat",
                "-c",
                "2",
                "-m",
                "256",
                "--console",
                "serial"
            ]
        );
    }
}
