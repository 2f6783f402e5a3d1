//! `trapline bench --view linux-boot`: boot the shared tiny Linux on
//! trapline (and with `--peer qemu` on QEMU's microvm machine, the command
//! in the shared README) and report the time from exec to init's first line
//! (`TINYLINUX-INIT-OK`) and to power-off, with the boot's exit profile
//! (`trapline run --stat`: exits by kind and by key).
//!
//! Each boot is a child process, timed from spawn: what a user waits for.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The line init prints first.
pub const INIT_MARKER: &str = "TINYLINUX-INIT-OK";
/// The guest's command line on both VMMs (no `exitport=`: init powers off).
pub const APPEND: &str = "console=ttyS0 panic=-1";

/// One boot's times.
#[derive(Debug, Clone, Copy)]
pub struct BootTimes {
    /// Spawn to the init marker on the console (`None`: never seen).
    pub to_init: Option<Duration>,
    /// Spawn to the process's exit.
    pub to_exit: Duration,
    /// The exit status.
    pub status: Option<i32>,
}

/// Where `../shared/guests/linux` is: `TRAPLINE_LINUX_DIR`, else beside
/// the current directory or one of the executable's ancestors.
pub fn linux_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("TRAPLINE_LINUX_DIR") {
        return Some(PathBuf::from(d));
    }
    let mut roots: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().map(Path::to_path_buf));
    }
    roots.into_iter().find_map(|r| {
        ["../shared/guests/linux", "shared/guests/linux"]
            .iter()
            .map(|p| r.join(p))
            .find(|d| d.join("vmlinux.xz").exists())
    })
}

/// Decompresses `vmlinux.xz` (with `xz`) into `dir`.
fn vmlinux(src: &Path, dir: &Path) -> Result<PathBuf, String> {
    let out = Command::new("xz")
        .arg("-dc")
        .arg(src.join("vmlinux.xz"))
        .output()
        .map_err(|e| format!("running xz (apt-get install xz-utils): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "xz -dc {}: {}",
            src.join("vmlinux.xz").display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let k = dir.join("vmlinux");
    std::fs::write(&k, &out.stdout).map_err(|e| format!("{}: {e}", k.display()))?;
    Ok(k)
}

/// Runs `cmd`, watching its stdout for the init marker.
fn time_boot(mut cmd: Command, timeout: Duration) -> Result<BootTimes, String> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawning {cmd:?}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let mut to_init = None;
    for line in BufReader::new(stdout).split(b'\n') {
        let Ok(line) = line else { break };
        if to_init.is_none() && String::from_utf8_lossy(&line).contains(INIT_MARKER) {
            to_init = Some(start.elapsed());
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            break;
        }
    }
    let status = child.wait().map_err(|e| format!("waiting: {e}"))?;
    Ok(BootTimes {
        to_init,
        to_exit: start.elapsed(),
        status: status.code(),
    })
}

fn secs(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.2}", d.as_secs_f64()))
}

/// Runs the view; returns the process status.
pub fn main(smp: u32, repeat: u32, peer: Option<&crate::peer::Qemu>, timeout: Duration) -> i32 {
    let Some(src) = linux_dir() else {
        eprintln!(
            "trapline bench: error: no ../shared/guests/linux/vmlinux.xz here (set TRAPLINE_LINUX_DIR)"
        );
        return 2;
    };
    let dir = std::env::temp_dir().join(format!("trapline-linux-boot-{}", std::process::id()));
    let kernel = match vmlinux(&src, &dir) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("trapline bench: error: {e}");
            return 3;
        }
    };
    let initrd = src.join("initramfs-tinit32.cpio.gz");
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("trapline bench: error: {e}");
            return 3;
        }
    };
    let stat = dir.join("boot.stat");
    let mut rows: Vec<(&str, BootTimes)> = Vec::new();
    for i in 0..repeat {
        let mut t = Command::new(&exe);
        t.arg("run")
            .arg("--kernel")
            .arg(&kernel)
            .arg("--initrd")
            .arg(&initrd)
            .args(["--append", APPEND, "--smp", &smp.to_string()])
            .arg(format!("--stat={}", stat.display()));
        match time_boot(t, timeout) {
            Ok(b) => rows.push(("trapline", b)),
            Err(e) => eprintln!("trapline bench: trapline boot {i}: {e}"),
        }
        if let Some(q) = peer {
            let mut c = Command::new(&q.binary);
            c.args(["-M", "microvm", "-nodefaults", "-display", "none"])
                .args(["-serial", "stdio", "-accel", "kvm", "-cpu", "qemu64,-cx16"])
                .args(["-m", "128", "-no-reboot", "-smp", &smp.to_string()])
                .arg("-kernel")
                .arg(&kernel)
                .arg("-initrd")
                .arg(&initrd)
                .args(["-append", APPEND]);
            match time_boot(c, timeout) {
                Ok(b) => rows.push(("qemu-microvm", b)),
                Err(e) => eprintln!("trapline bench: QEMU boot {i}: {e}"),
            }
        }
    }
    println!("linux-boot: Linux 6.1 (PVH vmlinux), tinit32 initramfs, {smp} vCPU(s), 128 MiB");
    println!(
        "{:<14} {:>14} {:>16} {:>7}",
        "vmm", "to init (s)", "to power-off (s)", "status"
    );
    for (vmm, b) in &rows {
        println!(
            "{:<14} {:>14} {:>16} {:>7}",
            vmm,
            secs(b.to_init),
            secs(Some(b.to_exit)),
            b.status.map_or("signal".into(), |s| s.to_string())
        );
    }
    let median = |vmm: &str| {
        let mut v: Vec<f64> = rows
            .iter()
            .filter(|(n, _)| *n == vmm)
            .filter_map(|(_, b)| b.to_init.map(|d| d.as_secs_f64()))
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    if let (Some(t), Some(q)) = (median("trapline"), median("qemu-microvm")) {
        println!(
            "ratio to init (trapline / QEMU microvm, medians): {:.2}",
            t / q
        );
    }
    match std::fs::read_to_string(&stat) {
        Ok(s) => println!("\ntrapline's exits during the last boot (--stat):\n{s}"),
        Err(e) => eprintln!("trapline bench: no exit profile ({}): {e}", stat.display()),
    }
    let _ = std::fs::remove_dir_all(&dir);
    let ok = rows.iter().all(|(_, b)| b.to_init.is_some());
    if ok && !rows.is_empty() {
        0
    } else {
        3
    }
}
