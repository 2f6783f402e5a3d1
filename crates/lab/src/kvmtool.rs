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
//! [`crate::catalog::kvmtool_peer`] lets run, and reads its
//! `TRAPLINE-RESULT` lines from the serial console; the rest get `n/a on
//! kvmtool` rows with the reason. On x86 every probe row is n/a (the probe
//! is a Multiboot image there, which lkvm does not load). kvm-unit-tests'
//! micro-bench (`--micro-bench`) is tried on it, as its build allows.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The binary looked for on PATH.
pub const LKVM: &str = "lkvm";

/// Why the probe's scenarios are not run on kvmtool.
#[cfg(target_arch = "x86_64")]
pub const PROBE_NOT_APPLICABLE: &str = "trapline's x86 probe is a Multiboot image ended through \
     isa-debug-exit, neither of which kvmtool offers";

/// MiB of RAM the probe's kvmtool VM gets (as QEMU's peer VM).
#[cfg(target_arch = "aarch64")]
const PROBE_MEM_MIB: u32 = 128;

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
    fn run_with(
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
fn run_args(kernel: &Path, cpus: u32, mem_mib: u32) -> Vec<String> {
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

/// `lkvm`'s arguments for the probe's kvmtool build: [`run_args`] with a
/// GICv3 (the probe's SGIs and EOIs are the system-register interface's)
/// and the probe's command line (`-p`; lkvm puts its own words such as
/// `console=ttyS0` before it, which the probe ignores).
#[cfg(target_arch = "aarch64")]
fn probe_args(kernel: &Path, cmdline: &str, cpus: u32) -> Vec<String> {
    let mut args = run_args(kernel, cpus, PROBE_MEM_MIB);
    args.extend(["--irqchip", "gicv3", "-p", cmdline].map(String::from));
    args
}

/// Boot the probe's kvmtool build with `cmdline` on `cpus` vCPUs and return
/// its console. The image is written to `dir`. The probe ends with PSCI
/// SYSTEM_OFF, after which lkvm exits with status 0; anything else (or no
/// end within `timeout`) is an error saying how it ended.
#[cfg(target_arch = "aarch64")]
pub fn run_probe(
    k: &Kvmtool,
    dir: &Path,
    cmdline: &str,
    cpus: u32,
    timeout: Duration,
) -> Result<String, String> {
    let kernel = dir.join("trapline-probe-kvmtool.bin");
    std::fs::write(&kernel, trapline_guest::PROBE_KVMTOOL)
        .map_err(|e| format!("writing {}: {e}", kernel.display()))?;
    let (console, status) = k.run_with(probe_args(&kernel, cmdline, cpus), timeout)?;
    if status.success() {
        return Ok(console);
    }
    let last = console
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("nothing");
    Err(format!(
        "lkvm ended with {status} (killed after {} s if signal 9); the console's last line: {last}",
        timeout.as_secs().max(1)
    ))
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

    /// kvmtool runs the probe's scenarios that need only what its machine
    /// offers, and says why for the rest in its own words.
    #[test]
    fn kvmtool_runs_what_its_machine_offers() {
        use crate::catalog::{kvmtool_peer, Peer, ARM64_SCENARIOS};
        let runs: Vec<&str> = ARM64_SCENARIOS
            .iter()
            .filter(|s| !matches!(kvmtool_peer(s), Peer::Skipped(_)))
            .map(|s| s.name())
            .collect();
        let mut expected = [
            "noop",
            "hypercall",
            "sysreg-trap",
            "mmio-vgic-read",
            "mmio-user-read",
            "mmio-user-write",
            "ram-read",
            "ipi",
            "ipi-halt",
            "self-ipi",
            "eoi",
        ];
        let mut got = runs.clone();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected);
        for s in ARM64_SCENARIOS {
            match kvmtool_peer(s) {
                Peer::Skipped(why) => assert!(!why.contains("QEMU"), "{}: {why}", s.name()),
                Peer::ValueUnchecked => assert_eq!(s.name(), "mmio-user-read"),
                Peer::Runs => {}
            }
        }
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

    #[cfg(target_arch = "aarch64")]
    #[test]
    fn the_probe_gets_a_gicv3_and_its_command_line() {
        let args = probe_args(Path::new("/tmp/p.bin"), "s=1,2 cpus=2", 2);
        assert_eq!(&args[..4], ["run", "-k", "/tmp/p.bin", "-c"]);
        assert_eq!(&args[4], "2");
        let tail: Vec<&str> = args[args.len() - 4..].iter().map(String::as_str).collect();
        assert_eq!(tail, ["--irqchip", "gicv3", "-p", "s=1,2 cpus=2"]);
        assert!(args.windows(2).any(|w| w == ["-m", "128"]));
    }
}
