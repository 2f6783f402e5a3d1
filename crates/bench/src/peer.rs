//! QEMU as a peer: the identical probe binary booted on
//! `qemu-system-x86_64 -accel kvm`, read back from its serial output (QEMU
//! has no ucall port, so the probe's `TRAPLINE-RESULT` lines carry the
//! numbers). Scenarios QEMU cannot serve the same way are reported n/a with
//! the reason.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::catalog::{MachineKind, Scenario};

/// The QEMU binary the peer runs.
pub const QEMU: &str = "qemu-system-x86_64";

/// A QEMU that was found.
#[derive(Clone, Debug)]
pub struct Qemu {
    /// Path or name to run.
    pub binary: PathBuf,
    /// Its `--version` first line.
    pub version: String,
}

/// Find QEMU, or say how to install it.
pub fn find() -> Result<Qemu, String> {
    let binary = std::env::var_os("TRAPLINE_QEMU")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(QEMU));
    let out = Command::new(&binary).arg("--version").output().map_err(|e| {
        format!(
            "cannot run {} ({e}): --peer qemu needs QEMU; on Debian install the qemu-system-x86 package \
             (apt-get install qemu-system-x86), or point TRAPLINE_QEMU at the binary",
            binary.display()
        )
    })?;
    let version = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    Ok(Qemu { binary, version })
}

/// Why QEMU cannot serve a scenario the way trapline does (`None`: it can).
pub fn not_applicable(s: &Scenario) -> Option<&'static str> {
    Some(match s.name {
        "hypercall" => "the hypercall never returns on this host; not repeated on the peer",
        "hlt" => "QEMU runs with KVM's in-kernel irqchip, so HLT never reaches user space",
        "pio-kernel-wildcard" | "pio-kernel-datamatch" | "mmio-kernel-wildcard" | "mmio-kernel-datamatch" => {
            "QEMU registers no ioeventfd on trapline's probe addresses (compare the pci-testdev rows instead)"
        }
        "coalesced-mmio" | "coalesced-pio" => "QEMU has no coalesced zone on trapline's probe addresses",
        "ro-memslot-read" | "ro-memslot-write" => "the read-only memslot page is trapline's",
        "vmm-floor-pio" => "trapline's in-loop floor handler has no QEMU counterpart",
        "mmio-pv-eventfd:pci-mem" | "portio-pv-eventfd:pci-io" => "the PV doorbell port is trapline's (KVM never merged PV MMIO)",
        "pci-config-read-ecam" | "pci-config-read-ecam-ro" | "pci-scan-ecam" | "pci-scan-ecam-ro" => {
            "QEMU's pc machine has no ECAM window"
        }
        "irqfd" | "doorbell-user-mmio" | "doorbell-ioeventfd-mmio" | "doorbell-ioeventfd-pio" | "doorbell-pv" => {
            "needs trapline's lab host threads (irqfd injector, doorbell consumer)"
        }
        _ => return None,
    })
}

/// Scenarios whose read-back value cannot be checked on QEMU: nothing
/// answers trapline's probe addresses there, so the read returns all-ones
/// (it is still an exit to QEMU's user space, which is what is timed).
pub fn value_unchecked(name: &str) -> bool {
    matches!(name, "pio-user-in" | "mmio-user-read")
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
/// serial output. The probe binary is written to `dir`.
pub fn run_probe(
    qemu: &Qemu,
    dir: &Path,
    append: &str,
    cpus: u32,
    timeout: Duration,
) -> Result<String, String> {
    let kernel = dir.join("trapline-probe.flat");
    std::fs::write(&kernel, trapline_guest::PROBE)
        .map_err(|e| format!("writing {}: {e}", kernel.display()))?;
    let mut child = Command::new(&qemu.binary)
        .args([
            "-accel",
            "kvm",
            "-cpu",
            "host",
            "-nodefaults",
            "-no-reboot",
            "-display",
            "none",
            "-serial",
            "stdio",
        ])
        .args([
            "-device",
            "isa-debug-exit,iobase=0xf4,iosize=0x4",
            "-device",
            "pci-testdev",
            "-m",
            "128",
        ])
        .arg("-smp")
        .arg(cpus.to_string())
        .arg("-kernel")
        .arg(&kernel)
        .arg("-append")
        .arg(append)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", qemu.binary.display()))?;
    let mut stdout = child.stdout.take().ok_or("no QEMU stdout")?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let serial = reader.join().unwrap_or_default();
    match status {
        // The probe ends with debug-exit 0: QEMU exits (0 << 1) | 1.
        Some(st) if st.code() == Some(1) => Ok(serial),
        Some(st) => {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            Err(format!(
                "QEMU exited with {st}: {}",
                err.lines().last().unwrap_or("")
            ))
        }
        None => Err(format!(
            "QEMU did not finish within {:.0} s and was killed",
            timeout.as_secs_f64()
        )),
    }
}

/// vCPUs QEMU needs for a machine kind.
pub fn cpus_for(kind: MachineKind) -> u32 {
    match kind {
        MachineKind::Smp | MachineKind::SmpX2apic => 2,
        _ => 1,
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
    fn every_scenario_has_a_peer_decision() {
        for s in crate::catalog::SCENARIOS {
            // Either QEMU serves it or there is a reason; both are fine,
            // but a reason must be a sentence.
            if let Some(r) = not_applicable(s) {
                assert!(r.len() > 20, "{}", s.name);
            }
        }
        assert!(not_applicable(crate::catalog::find("pio-user-out").unwrap()).is_none());
    }
}
