//! QEMU as a peer: the identical probe binary booted on
//! `qemu-system-x86_64 -accel kvm` (x86) or `qemu-system-aarch64 -M
//! virt,gic-version=3,highmem=off -device pci-testdev -accel kvm` (arm64),
//! read back from its serial output (QEMU has no ucall port, so the
//! probe's `TRAPLINE-RESULT` lines carry the numbers). Scenarios QEMU
//! cannot serve the same way are reported n/a with the reason.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use crate::arch::qemu::QEMU;
use crate::arch::qemu::{MACHINE_ARGS, PAYLOAD_EXT, PROBE_DONE_STATUS, QEMU_PACKAGE};

/// A QEMU that was found.
#[derive(Clone, Debug)]
pub struct Qemu {
    /// Path or name to run.
    pub binary: PathBuf,
    /// Its `--version` first line.
    pub version: String,
    /// The CPU model it runs guests with, once [`Qemu::select_cpu`] chose
    /// one (`None` until then: `-cpu host` is tried first).
    pub cpu: Option<CpuChoice>,
}

/// A `-cpu` value for the peer. Some QEMU builds abort at start-up with
/// `-cpu host` (and `-cpu max`) on some hosts (QEMU 7.2 on AMD EPYC under
/// nested KVM: `kvm_buf_set_msrs: Assertion ... failed`), so the peer
/// tries these in order and keeps the first that boots a guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuModel {
    /// `-cpu host`: the host's CPUID, as trapline gives its vCPUs.
    Host,
    /// `-cpu max`: everything KVM and QEMU support.
    Max,
    /// No `-cpu` option: QEMU's default model (qemu64 on x86_64).
    Default,
}

impl CpuModel {
    /// The order in which models are tried (the architecture's: see
    /// `arch`).
    pub const PREFERENCE: &'static [CpuModel] = crate::arch::qemu::CPU_PREFERENCE;

    /// The `-cpu` argument, or `None` for QEMU's default.
    pub fn arg(self) -> Option<&'static str> {
        match self {
            CpuModel::Host => Some("host"),
            CpuModel::Max => Some("max"),
            CpuModel::Default => None,
        }
    }

    /// How reports name it.
    pub fn name(self) -> &'static str {
        self.arg().unwrap_or("default")
    }
}

/// The model QEMU runs with, and why the ones before it were not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuChoice {
    /// The model in use.
    pub model: CpuModel,
    /// (model, what QEMU said) for each model that failed before it.
    pub rejected: Vec<(CpuModel, String)>,
}

impl CpuChoice {
    /// One line for reports when the model is not `host` (`None` when it is).
    pub fn fallback_note(&self) -> Option<String> {
        if self.model == CpuModel::Host {
            return None;
        }
        let tried: Vec<String> = self
            .rejected
            .iter()
            .map(|(m, why)| format!("-cpu {} ({why})", m.name()))
            .collect();
        Some(format!(
            "QEMU ran with {} because it could not start a guest with {}",
            match self.model.arg() {
                Some(a) => format!("-cpu {a}"),
                None => "its default CPU model".to_string(),
            },
            tried.join(", ")
        ))
    }
}

/// Find QEMU, or say how to install it.
pub fn find() -> Result<Qemu, String> {
    let binary = std::env::var_os("TRAPLINE_QEMU")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(QEMU));
    let out = Command::new(&binary).arg("--version").output().map_err(|e| {
        format!(
            "cannot run {} ({e}): --peer qemu needs QEMU; on Debian install the {QEMU_PACKAGE} package \
             (apt-get install {QEMU_PACKAGE}), or point TRAPLINE_QEMU at the binary",
            binary.display()
        )
    })?;
    let version = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    Ok(Qemu {
        binary,
        version,
        cpu: None,
    })
}

impl Qemu {
    /// Choose the CPU model: boot trapline's `hello` payload with each of
    /// [`CpuModel::PREFERENCE`] until one prints the guest's first line.
    /// A model QEMU dies with before that is recorded with the last line
    /// of its stderr. `dir` holds the kernel file.
    pub fn select_cpu(&mut self, dir: &Path, timeout: Duration) -> Result<&CpuChoice, String> {
        let kernel = dir.join(format!("trapline-hello.{PAYLOAD_EXT}"));
        std::fs::write(&kernel, trapline_guest::HELLO)
            .map_err(|e| format!("writing {}: {e}", kernel.display()))?;
        let mut rejected = Vec::new();
        for &model in CpuModel::PREFERENCE {
            let run = self.boot(model, &kernel, "", 1, timeout)?;
            if run.serial.lines().next().is_some() {
                return Ok(self.cpu.insert(CpuChoice { model, rejected }));
            }
            rejected.push((model, run.why()));
        }
        let tried: Vec<String> = rejected
            .iter()
            .map(|(m, why)| format!("-cpu {}: {why}", m.name()))
            .collect();
        Err(format!(
            "QEMU could not start a guest with any CPU model ({})",
            tried.join("; ")
        ))
    }

    /// QEMU's options for a KVM guest on the peer's machine with a console
    /// on stdout and nothing else: `-accel kvm`, the chosen `-cpu` (`host`
    /// until one is chosen), the machine options (`MACHINE_ARGS`); the caller adds `-m`, `-smp`
    /// (they come after, so they win) and `-kernel`.
    pub fn kvm_machine_args(&self) -> Vec<String> {
        let model = self.cpu.as_ref().map_or(CpuModel::Host, |c| c.model);
        let mut args: Vec<String> = vec!["-accel".into(), "kvm".into()];
        if let Some(cpu) = model.arg() {
            args.extend(["-cpu".into(), cpu.into()]);
        }
        args.extend(
            [
                "-nodefaults",
                "-no-reboot",
                "-display",
                "none",
                "-serial",
                "stdio",
            ]
            .map(String::from),
        );
        args.extend(MACHINE_ARGS.iter().map(|a| a.to_string()));
        args
    }

    /// Boot `kernel` on QEMU with the peer's machine ([`MACHINE_ARGS`]) and
    /// wait for it to end or `timeout`.
    fn boot(
        &self,
        model: CpuModel,
        kernel: &Path,
        append: &str,
        cpus: u32,
        timeout: Duration,
    ) -> Result<QemuRun, String> {
        let mut cmd = Command::new(&self.binary);
        cmd.args(["-accel", "kvm"]);
        if let Some(cpu) = model.arg() {
            cmd.args(["-cpu", cpu]);
        }
        let mut child = cmd
            .args([
                "-nodefaults",
                "-no-reboot",
                "-display",
                "none",
                "-serial",
                "stdio",
            ])
            .args(MACHINE_ARGS)
            .arg("-smp")
            .arg(cpus.to_string())
            .arg("-kernel")
            .arg(kernel)
            .arg("-append")
            .arg(append)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.binary.display()))?;
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut s = String::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_string(&mut s);
                }
                s
            })
        };
        let stdout = drain(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = drain(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let deadline = Instant::now() + timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break Some(st),
                // A stop signal ends QEMU too (a SIGTERM sent to trapline
                // alone does not reach it).
                Ok(None)
                    if Instant::now() < deadline
                        && trapline_machine::signals::received().is_none() =>
                {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        Ok(QemuRun {
            status,
            timeout,
            serial: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        })
    }
}

/// What one QEMU process did.
struct QemuRun {
    /// Its exit status (`None`: killed at the timeout).
    status: Option<std::process::ExitStatus>,
    timeout: Duration,
    serial: String,
    stderr: String,
}

impl QemuRun {
    /// Why it failed, in one line: its status and stderr's last line.
    fn why(&self) -> String {
        match self.status {
            Some(st) => {
                let last = self.stderr.lines().rev().find(|l| !l.trim().is_empty());
                match last {
                    Some(l) => format!("QEMU exited with {st}: {}", l.trim()),
                    None => format!("QEMU exited with {st}"),
                }
            }
            None => format!(
                "QEMU did not finish within {:.0} s and was killed",
                self.timeout.as_secs_f64()
            ),
        }
    }
}

/// One `TRAPLINE-RESULT` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerResult {
    /// Iterations of the final batch.
    pub iterations: u64,
    /// Its TSC cycles.
    pub cycles: u64,
    /// The checked value.
    pub value: u64,
    /// The guest's ResultStatus.
    pub status: u64,
}

/// Parse the probe's serial output.
pub fn parse(serial: &str) -> BTreeMap<String, PeerResult> {
    let mut out = BTreeMap::new();
    for line in serial.lines() {
        let Some(rest) = line.trim_end_matches('\r').strip_prefix("TRAPLINE-RESULT ") else {
            continue;
        };
        let mut it = rest.split_whitespace();
        let Some(name) = it.next() else { continue };
        let field = |k: &str| -> Option<u64> {
            let v = rest
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))?;
            match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => v.parse().ok(),
            }
        };
        if let (Some(iterations), Some(cycles), Some(value), Some(status)) = (
            field("iters"),
            field("cycles"),
            field("value"),
            field("status"),
        ) {
            out.insert(
                name.to_string(),
                PeerResult {
                    iterations,
                    cycles,
                    value,
                    status,
                },
            );
        }
    }
    out
}

/// Boot the probe on QEMU with `append`, `cpus` vCPUs, and return its
/// serial output. The probe binary is written to `dir`. QEMU runs with the
/// CPU model [`Qemu::select_cpu`] chose (`-cpu host` if none was chosen).
pub fn run_probe(
    qemu: &Qemu,
    dir: &Path,
    append: &str,
    cpus: u32,
    timeout: Duration,
) -> Result<String, String> {
    let kernel = dir.join(format!("trapline-probe.{PAYLOAD_EXT}"));
    std::fs::write(&kernel, trapline_guest::PROBE)
        .map_err(|e| format!("writing {}: {e}", kernel.display()))?;
    let model = qemu.cpu.as_ref().map_or(CpuModel::Host, |c| c.model);
    let run = qemu.boot(model, &kernel, append, cpus, timeout)?;
    match run.status {
        Some(st) if st.code() == Some(PROBE_DONE_STATUS) => Ok(run.serial),
        _ => Err(run.why()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_result_lines() {
        let s = "probe: s=0\r\nTRAPLINE-RESULT noop iters=16 cycles=2446928 value=0x0 status=0\r\n\
                 TRAPLINE-RESULT mmio-no-eventfd:pci-mem iters=8 cycles=9 value=0x1c status=0\n\
                 TRAPLINE-RESULT broken iters=x\n";
        let r = parse(s);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r["noop"],
            PeerResult {
                iterations: 16,
                cycles: 2_446_928,
                value: 0,
                status: 0
            }
        );
        assert_eq!(r["mmio-no-eventfd:pci-mem"].value, 0x1c);
    }

    #[test]
    fn a_cpu_fallback_is_explained_and_host_needs_no_note() {
        let host = CpuChoice {
            model: CpuModel::Host,
            rejected: vec![],
        };
        assert_eq!(host.fallback_note(), None);
        let fallback = CpuChoice {
            model: CpuModel::Default,
            rejected: vec![
                (
                    CpuModel::Host,
                    "QEMU exited with signal: 6 (SIGABRT)".into(),
                ),
                (CpuModel::Max, "QEMU exited with signal: 6 (SIGABRT)".into()),
            ],
        };
        let note = fallback.fallback_note().unwrap();
        assert!(
            note.starts_with("QEMU ran with its default CPU model because"),
            "{note}"
        );
        assert!(
            note.contains("-cpu host (QEMU exited") && note.contains("-cpu max ("),
            "{note}"
        );
    }
}
