//! `trapline linux-boot`: boot the shared tiny Linux on
//! trapline and, with `--peer qemu`, on QEMU's microvm machine (the command
//! in the shared README), the two interleaved boot by boot, and explain the
//! difference:
//!
//! * wall time from spawn to init's first line (`TINYLINUX-INIT-OK`) and to
//!   power-off, median and range per VMM, and the ratio of each pair;
//! * the CPU time each VMM process used (user + system, the guest's time in
//!   KVM_RUN included): less disturbed by other load than wall time;
//! * the guest's own timeline, phase by phase, from the kernel's printk
//!   timestamps ([`phases`]);
//! * KVM's counters for each side's VM: trapline's from its `--stat`
//!   profile, QEMU's through QMP `query-stats` ([`qmp`]), both the binary
//!   statistics KVM keeps per VM and vCPU (exits, instructions emulated,
//!   guest page-table writes the shadow MMU emulated, INVLPGs, …).
//!
//! Each boot is a child process, timed from spawn: what a user waits for.
//! A stop signal (SIGINT, SIGTERM, SIGHUP) is passed on to the boot that
//! is running; the boots finished before it are reported, the run is said
//! to be partial, and the status is 128 + N.

pub mod phases;
pub mod qmp;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The line init prints first.
pub const INIT_MARKER: &str = "TINYLINUX-INIT-OK";
/// The guest's command line on both VMMs (no `exitport=`: init powers
/// off). `printk.time=1` makes sure every kernel line carries the guest
/// timestamp the phases are read from.
pub const APPEND: &str = "console=ttyS0 panic=-1 printk.time=1";
/// KVM's counters the report lines up, in this order, with what they say.
pub const COUNTERS: [(&str, &str); 8] = [
    ("exits", "exits to the host (all reasons)"),
    ("insn_emulation", "instructions the host emulated"),
    (
        "mmu_pte_write",
        "guest page-table writes the shadow MMU emulated",
    ),
    ("invlpg", "INVLPGs the host handled"),
    ("irq_injections", "interrupts injected"),
    ("io_exits", "port I/O exits"),
    ("mmio_exits", "MMIO exits"),
    ("halt_exits", "HLT exits"),
];

/// Which VMM a boot ran on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vmm {
    /// This binary's `run`.
    Trapline,
    /// QEMU's microvm machine.
    QemuMicrovm,
}

impl Vmm {
    /// The column heading.
    pub fn name(self) -> &'static str {
        match self {
            Vmm::Trapline => "trapline",
            Vmm::QemuMicrovm => "QEMU microvm",
        }
    }
}

/// One boot, measured.
#[derive(Debug, Clone)]
pub struct Boot {
    /// Where it ran.
    pub vmm: Vmm,
    /// Spawn to the init marker on the console (`None`: never seen).
    pub to_init: Option<Duration>,
    /// Spawn to power-off: trapline's exit, QEMU's `SHUTDOWN` event.
    pub to_power_off: Duration,
    /// Whether the guest powered off (rather than the timeout or an error).
    pub powered_off: bool,
    /// User + system CPU time of the VMM process.
    pub cpu: Option<Duration>,
    /// Guest timestamps at the end of each of [`phases::PHASES`].
    pub phase_ends: Vec<Option<f64>>,
    /// Bytes and lines the guest wrote to its console.
    pub console: (usize, usize),
    /// KVM's counters (VM and vCPUs summed), or why they are not readable.
    pub kvm: Result<BTreeMap<String, u64>, String>,
    /// Exits that reached the VMM in user space, where known (trapline).
    pub user_exits: Option<u64>,
}

/// Where the Linux for this experiment is (`vmlinux.xz` and
/// `initramfs-tinit32.cpio.gz`): `TRAPLINE_LINUX_DIR`, else the project's
/// shared guests folder when it sits beside the current directory or one of
/// the executable's ancestors (a development checkout; a clone elsewhere
/// names the folder by the variable).
pub fn linux_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("TRAPLINE_LINUX_DIR").filter(|d| !d.is_empty()) {
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

/// What the console reader saw.
struct Console {
    text: String,
    init_at: Option<Instant>,
}

/// Read `child`'s stdout on a thread; the receiver gets the whole console
/// at EOF.
fn watch_console(child: &mut Child) -> Result<Receiver<Console>, String> {
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut c = Console {
            text: String::new(),
            init_at: None,
        };
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let line = String::from_utf8_lossy(&line);
            if c.init_at.is_none() && line.contains(INIT_MARKER) {
                c.init_at = Some(Instant::now());
            }
            c.text.push_str(&line);
            c.text.push('\n');
        }
        let _ = tx.send(c);
    });
    Ok(rx)
}

/// While alive, passes a stop signal trapline receives on to one child
/// (SIGTERM: trapline's `run` then ends as at a timeout, QEMU quits), so
/// a boot ends at once instead of running on to its power-off. Drop it
/// before the child is reaped: the pid is only the child's until then.
struct PassStopOn {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl PassStopOn {
    fn child(child: &Child) -> Self {
        use std::sync::atomic::{AtomicBool, Ordering};
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let pid = child.id() as libc::pid_t;
        let flag = done.clone();
        let watcher = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                if trapline_machine::signals::received().is_some() {
                    // SAFETY: kill(2) on our own child, not yet reaped
                    // (the guard is dropped, and this thread joined,
                    // before the reap), so the pid is still its.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Self {
            done,
            watcher: Some(watcher),
        }
    }
}

impl Drop for PassStopOn {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
    }
}

/// Reap `child` with wait4: its exit status and its user + system CPU time.
fn reap(child: &mut Child) -> (Option<i32>, Option<Duration>) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, zero is a valid value for every field.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; status and ru are valid for
    // writes. std's Child is not waited on afterwards.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    if r != pid {
        return (child.wait().ok().and_then(|s| s.code()), None);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, Some(tv(ru.ru_utime) + tv(ru.ru_stime)))
}

/// KVM's counters from trapline's `--stat-format json` report.
fn trapline_counters(stat: &Path) -> (Result<BTreeMap<String, u64>, String>, Option<u64>) {
    let text = match std::fs::read_to_string(stat) {
        Ok(t) => t,
        Err(e) => return (Err(format!("no --stat report ({e})")), None),
    };
    let v: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return (Err(format!("--stat report: {e}")), None),
    };
    let mut out = BTreeMap::new();
    for part in [&v["total"]["kvm"], &v["kvm_vm"]] {
        for (k, n) in part.as_object().into_iter().flatten() {
            if let Some(n) = n.as_u64() {
                *out.entry(k.clone()).or_default() += n;
            }
        }
    }
    let user_exits = v["total"]["exits"].as_u64();
    if out.is_empty() {
        let why = v["total"]["kvm"]["unavailable"]
            .as_str()
            .unwrap_or("KVM's statistics were not readable");
        return (Err(why.to_string()), user_exits);
    }
    (Ok(out), user_exits)
}

/// The boot's files and options.
struct Setup<'a> {
    exe: &'a Path,
    kernel: &'a Path,
    initrd: &'a Path,
    smp: u32,
    cpu: &'a str,
    /// trapline's `--acpi` (QEMU's microvm is always hardware-reduced).
    acpi: &'a str,
    dir: &'a Path,
    timeout: Duration,
}

fn boot_trapline(s: &Setup, i: u32) -> Result<Boot, String> {
    let stat = s.dir.join(format!("boot{i}.stat.json"));
    let mut cmd = Command::new(s.exe);
    cmd.arg("run")
        .arg("--kernel")
        .arg(s.kernel)
        .arg("--initrd")
        .arg(s.initrd)
        .args(["--append", APPEND, "--smp", &s.smp.to_string()])
        .args(["--cpu", s.cpu, "--acpi", s.acpi])
        .arg(format!("--stat={}", stat.display()))
        .args(["--stat-format", "json"])
        .args(["--timeout", &s.timeout.as_secs().to_string()]);
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawning {cmd:?}: {e}"))?;
    let console = watch_console(&mut child)?;
    let stop = PassStopOn::child(&child);
    // trapline's own --timeout ends the run; the extra minute only guards
    // against a process that would not.
    let c = match console.recv_timeout(s.timeout + Duration::from_secs(60)) {
        Ok(c) => c,
        Err(_) => {
            let _ = child.kill();
            console.recv().map_err(|_| "console reader lost")?
        }
    };
    drop(stop);
    let (status, cpu) = reap(&mut child);
    let to_power_off = start.elapsed();
    let (kvm, user_exits) = trapline_counters(&stat);
    Ok(Boot {
        vmm: Vmm::Trapline,
        to_init: c.init_at.map(|t| t - start),
        to_power_off,
        powered_off: status == Some(0),
        cpu,
        phase_ends: phases::ends(&c.text),
        console: phases::console_size(&c.text),
        kvm,
        user_exits,
    })
}

fn boot_qemu(s: &Setup, q: &crate::qemu::Qemu, i: u32) -> Result<Boot, String> {
    let socket = s.dir.join(format!("qmp{i}.sock"));
    let _ = std::fs::remove_file(&socket);
    let mut cmd = Command::new(&q.binary);
    cmd.args(["-M", "microvm", "-nodefaults", "-display", "none"])
        .args(["-serial", "stdio", "-accel", "kvm", "-cpu", s.cpu])
        .args(["-m", "128", "-no-reboot", "-smp", &s.smp.to_string()])
        .arg("-kernel")
        .arg(s.kernel)
        .arg("-initrd")
        .arg(s.initrd)
        .args(["-append", APPEND])
        // Stay after the guest's power-off so KVM's statistics can be read.
        .arg("-no-shutdown")
        .arg("-qmp")
        .arg(format!("unix:{},server=on,wait=off", socket.display()));
    let start = Instant::now();
    let deadline = start + s.timeout;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawning {cmd:?}: {e}"))?;
    let console = watch_console(&mut child)?;
    let stop = PassStopOn::child(&child);
    let mut qmp = match qmp::Qmp::connect(&socket, Duration::from_secs(10)) {
        Ok(q) => q,
        Err(e) => {
            drop(stop);
            let _ = child.kill();
            let _ = reap(&mut child);
            return Err(e);
        }
    };
    let shutdown = qmp.wait_shutdown(deadline);
    let to_power_off = shutdown.as_ref().map_or(start.elapsed(), |t| *t - start);
    let kvm = match &shutdown {
        Ok(_) => qmp
            .kvm_stats()
            .map_err(|e| format!("not readable through QMP query-stats ({e})")),
        Err(e) => Err(e.clone()),
    };
    qmp.quit();
    let c = match console.recv_timeout(Duration::from_secs(30)) {
        Ok(c) => c,
        Err(_) => {
            let _ = child.kill();
            console.recv().map_err(|_| "console reader lost")?
        }
    };
    drop(stop);
    let (_, cpu) = reap(&mut child);
    let _ = std::fs::remove_file(&socket);
    Ok(Boot {
        vmm: Vmm::QemuMicrovm,
        to_init: c.init_at.map(|t| t - start),
        to_power_off,
        powered_off: shutdown.is_ok(),
        cpu,
        phase_ends: phases::ends(&c.text),
        console: phases::console_size(&c.text),
        kvm,
        user_exits: None,
    })
}

/// Median, minimum and maximum of `v` (empty: `None`).
pub fn spread(v: &[f64]) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some((median, v[0], v[n - 1]))
}

fn show(s: Option<(f64, f64, f64)>) -> String {
    s.map_or("-".into(), |(m, lo, hi)| {
        format!("{m:.2} ({lo:.2}–{hi:.2})")
    })
}

/// The per-boot values of one VMM, by `f`.
fn values(boots: &[Boot], vmm: Vmm, f: impl Fn(&Boot) -> Option<f64>) -> Vec<f64> {
    boots
        .iter()
        .filter(|b| b.vmm == vmm)
        .filter_map(f)
        .collect()
}

/// Print the experiment's report, fitted to `columns` as every view is (`None`:
/// a pipe or a file keeps each line whole).
pub fn report(
    boots: &[Boot],
    sides: &[Vmm],
    cpu: &str,
    acpi: &str,
    smp: u32,
    columns: Option<usize>,
) {
    let text = report_text(boots, sides, cpu, acpi, smp);
    trapline_stdio::out!("{}", trapline_report::fit_text(&text, columns));
}

/// `write!` into the report's text (a String: the write cannot fail).
macro_rules! put {
    ($text:expr, $($arg:tt)*) => {{
        let _ = std::fmt::Write::write_fmt($text, format_args!($($arg)*));
    }};
}

/// `writeln!` into the report's text.
macro_rules! putln {
    ($text:expr) => {
        $text.push('\n')
    };
    ($text:expr, $($arg:tt)*) => {{
        let _ = std::fmt::Write::write_fmt($text, format_args!("{}\n", format_args!($($arg)*)));
    }};
}

/// The view's report as text, each line whole: the set-up, the times,
/// trapline's ratios to QEMU, the guest's phases, KVM's counters.
fn report_text(boots: &[Boot], sides: &[Vmm], cpu: &str, acpi: &str, smp: u32) -> String {
    let mut text = String::new();
    setup_lines(&mut text, boots, sides, cpu, acpi, smp);
    time_table(&mut text, boots, sides);
    if sides.contains(&Vmm::QemuMicrovm) {
        pair_ratios(&mut text, boots);
    }
    phase_table(&mut text, boots, sides);
    counter_table(&mut text, boots, sides);
    text
}

/// What was booted, on which machines and host.
fn setup_lines(text: &mut String, boots: &[Boot], sides: &[Vmm], cpu: &str, acpi: &str, smp: u32) {
    let t = Vmm::Trapline;
    let pairs = boots.iter().filter(|b| b.vmm == t).count();
    let load = crate::host::load_avg();
    putln!(
        text,
        "linux-boot: Linux 6.1 (PVH vmlinux), tinit32 initramfs, {smp} vCPU(s), 128 MiB, \
         -cpu {cpu} on every VMM; {pairs} boot(s) each{}",
        if sides.len() > 1 { ", interleaved" } else { "" }
    );
    putln!(
        text,
        "machines: trapline's PC with {} ACPI (--acpi {acpi}){}",
        if acpi == "reduced" {
            "hardware-reduced"
        } else {
            "full"
        },
        if sides.len() > 1 {
            "; QEMU microvm (hardware-reduced ACPI, no PCI)"
        } else {
            ""
        }
    );
    putln!(
        text,
        "host: {}; load average at the end {:.1} {:.1} {:.1} (wall times stretch with load; CPU \
         times and counts much less)",
        crate::host::this_cpu_model(),
        load[0],
        load[1],
        load[2]
    );
}

/// Wall and CPU times and console sizes, median (min–max) per VMM.
fn time_table(text: &mut String, boots: &[Boot], sides: &[Vmm]) {
    putln!(text, "\nmedian (min–max)");
    put!(text, "{:<26}", "");
    for v in sides {
        put!(text, " {:>24}", v.name());
    }
    putln!(text);
    type Pick = fn(&Boot) -> Option<f64>;
    let rows: [(&str, Pick); 3] = [
        ("to init, wall (s)", |b| b.to_init.map(|d| d.as_secs_f64())),
        ("to power-off, wall (s)", |b| {
            b.powered_off.then_some(b.to_power_off.as_secs_f64())
        }),
        ("CPU time, user+sys (s)", |b| {
            b.powered_off
                .then_some(b.cpu)
                .flatten()
                .map(|d| d.as_secs_f64())
        }),
    ];
    for (name, f) in rows {
        put!(text, "{name:<26}");
        for v in sides {
            put!(text, " {:>24}", show(spread(&values(boots, *v, f))));
        }
        putln!(text);
    }
    let sizes: [(&str, Pick); 2] = [
        ("console output (bytes)", |b| Some(b.console.0 as f64)),
        ("console output (lines)", |b| Some(b.console.1 as f64)),
    ];
    for (name, f) in sizes {
        put!(text, "{name:<26}");
        for v in sides {
            let s = spread(&values(boots, *v, f));
            put!(
                text,
                " {:>24}",
                s.map_or("-".into(), |(m, lo, hi)| format!(
                    "{m:.0} ({lo:.0}–{hi:.0})"
                ))
            );
        }
        putln!(text);
    }
    for b in boots.iter().filter(|b| !b.powered_off) {
        putln!(
            text,
            "  ({} boot did not power off: left out)",
            b.vmm.name()
        );
    }
}

/// trapline / QEMU, pair by pair, wall and CPU time.
fn pair_ratios(text: &mut String, boots: &[Boot]) {
    let t = Vmm::Trapline;
    let q = Vmm::QemuMicrovm;
    let ts: Vec<&Boot> = boots.iter().filter(|b| b.vmm == t).collect();
    let qs: Vec<&Boot> = boots.iter().filter(|b| b.vmm == q).collect();
    let mut per_pair = Vec::new();
    let mut per_pair_cpu = Vec::new();
    for (a, b) in ts.iter().zip(&qs) {
        if a.powered_off && b.powered_off {
            per_pair.push(a.to_power_off.as_secs_f64() / b.to_power_off.as_secs_f64());
            if let (Some(x), Some(y)) = (a.cpu, b.cpu) {
                per_pair_cpu.push(x.as_secs_f64() / y.as_secs_f64());
            }
        }
    }
    let list = |v: &[f64]| {
        v.iter()
            .map(|r| format!("{r:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    putln!(
        text,
        "trapline / QEMU to power-off, wall: median {} (pairs: {})",
        spread(&per_pair).map_or("-".into(), |s| format!("{:.2}", s.0)),
        list(&per_pair)
    );
    putln!(
        text,
        "trapline / QEMU CPU time: median {} (pairs: {})",
        spread(&per_pair_cpu).map_or("-".into(), |s| format!("{:.2}", s.0)),
        list(&per_pair_cpu)
    );
}

/// The guest's own phases, median seconds per VMM, and their ratio.
fn phase_table(text: &mut String, boots: &[Boot], sides: &[Vmm]) {
    putln!(
        text,
        "\nthe guest's phases, median seconds on its own clock (printk timestamps):"
    );
    put!(text, "{:<56}", "phase (ends at)");
    for v in sides {
        put!(text, " {:>13}", v.name());
    }
    if sides.len() > 1 {
        put!(text, " {:>7}", "ratio");
    }
    putln!(text);
    let durations: Vec<(Vmm, Vec<Option<f64>>)> = boots
        .iter()
        .map(|b| (b.vmm, phases::durations(&b.phase_ends)))
        .collect();
    for (i, p) in phases::PHASES.iter().enumerate() {
        put!(text, "{:<56}", p.name);
        let mut medians = Vec::new();
        for v in sides {
            let d: Vec<f64> = durations
                .iter()
                .filter(|(w, _)| w == v)
                .filter_map(|(_, d)| d[i])
                .collect();
            let m = spread(&d).map(|s| s.0);
            medians.push(m);
            put!(text, " {:>13}", m.map_or("-".into(), |m| format!("{m:.2}")));
        }
        if let [Some(a), Some(b)] = medians[..] {
            put!(text, " {:>7.2}", a / b.max(1e-9));
        }
        putln!(text);
    }
}

/// KVM's counters per boot, median per VMM, and trapline's user exits.
fn counter_table(text: &mut String, boots: &[Boot], sides: &[Vmm]) {
    let t = Vmm::Trapline;
    putln!(
        text,
        "\nKVM's counters per boot, median (trapline: --stat; QEMU: QMP query-stats):"
    );
    put!(text, "{:<18}", "counter");
    for v in sides {
        put!(text, " {:>14}", v.name());
    }
    putln!(text, "  what");
    for (name, what) in COUNTERS {
        put!(text, "{name:<18}");
        for v in sides {
            let n = values(boots, *v, |b| {
                b.kvm.as_ref().ok()?.get(name).map(|&n| n as f64)
            });
            put!(
                text,
                " {:>14}",
                spread(&n).map_or("-".into(), |s| format!("{:.0}", s.0))
            );
        }
        putln!(text, "  {what}");
    }
    let user = values(boots, t, |b| b.user_exits.map(|n| n as f64));
    if let Some(s) = spread(&user) {
        putln!(
            text,
            "{:<18} {:>14}  exits that reached trapline's user space",
            "user exits",
            format!("{:.0}", s.0)
        );
    }
    for v in sides {
        if let Some(Err(why)) = boots.iter().rev().find(|b| b.vmm == *v).map(|b| &b.kvm) {
            putln!(text, "{}: KVM's counters not readable: {why}", v.name());
        }
    }
}

/// Runs the experiment; returns the process status.
pub fn main(
    smp: u32,
    repeat: u32,
    cpu: &str,
    acpi: &str,
    peer: Option<&crate::qemu::Qemu>,
    timeout: Duration,
    columns: Option<usize>,
) -> i32 {
    let Some(src) = linux_dir() else {
        eprintln!(
            "trapline linux-boot: error: the linux-boot experiment needs an x86 Linux with a PVH entry: \
             set TRAPLINE_LINUX_DIR to a folder holding its vmlinux.xz and an \
             initramfs-tinit32.cpio.gz (docs/linux.md says what they hold)"
        );
        return 2;
    };
    let dir = std::env::temp_dir().join(format!("trapline-linux-boot-{}", std::process::id()));
    let kernel = match vmlinux(&src, &dir) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("trapline linux-boot: error: {e}");
            return 3;
        }
    };
    let initrd = src.join("initramfs-tinit32.cpio.gz");
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("trapline linux-boot: error: {e}");
            return 3;
        }
    };
    let setup = Setup {
        exe: &exe,
        kernel: &kernel,
        initrd: &initrd,
        smp,
        cpu,
        acpi,
        dir: &dir,
        timeout,
    };
    let mut sides = vec![Vmm::Trapline];
    if peer.is_some() {
        sides.push(Vmm::QemuMicrovm);
    }
    let mut boots = Vec::new();
    let mut ok = true;
    let planned = repeat as usize * sides.len();
    'boots: for i in 0..repeat {
        // Alternate which VMM goes first, so a drift in the host's load
        // does not always favour the same one.
        let order: Vec<Vmm> = if i % 2 == 0 {
            sides.clone()
        } else {
            sides.iter().rev().copied().collect()
        };
        for vmm in order {
            eprintln!(
                "trapline linux-boot: boot {}/{repeat} on {}",
                i + 1,
                vmm.name()
            );
            let r = match (vmm, peer) {
                (Vmm::QemuMicrovm, Some(q)) => boot_qemu(&setup, q, i),
                _ => boot_trapline(&setup, i),
            };
            // The boot a stop signal cut short measured nothing.
            if trapline_machine::signals::received().is_some() {
                break 'boots;
            }
            match r {
                Ok(b) => {
                    ok &= b.powered_off && b.to_init.is_some();
                    boots.push(b);
                }
                Err(e) => {
                    ok = false;
                    eprintln!("trapline linux-boot: {} boot {}: {e}", vmm.name(), i + 1);
                }
            }
        }
    }
    report(&boots, &sides, cpu, acpi, smp, columns);
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(sig) = trapline_machine::signals::received() {
        eprintln!(
            "trapline linux-boot: partial run: stopped by {} after {} of {planned} boots (the one it cut short is left out)",
            trapline_machine::signals::name(sig),
            boots.len()
        );
        return trapline_machine::signals::exit_status(sig);
    }
    if ok && !boots.is_empty() {
        0
    } else {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A boot with every field filled, as a run beside QEMU has them.
    fn boot(vmm: Vmm, secs: f64) -> Boot {
        Boot {
            vmm,
            to_init: Some(Duration::from_secs_f64(secs)),
            to_power_off: Duration::from_secs_f64(secs + 0.8),
            powered_off: true,
            cpu: Some(Duration::from_secs_f64(secs)),
            phase_ends: phases::PHASES
                .iter()
                .enumerate()
                .map(|(i, _)| Some(i as f64 + 0.5))
                .collect(),
            console: (11_049, 160),
            kvm: Ok(BTreeMap::from([
                ("exits".to_string(), 41_123),
                ("instructions_emulated".to_string(), 18_330_000),
            ])),
            user_exits: (vmm == Vmm::Trapline).then_some(1_234),
        }
    }

    #[test]
    fn the_report_fits_the_terminal_and_a_pipe_keeps_every_line_whole() {
        let boots = [boot(Vmm::Trapline, 18.2), boot(Vmm::QemuMicrovm, 20.6)];
        let sides = [Vmm::Trapline, Vmm::QemuMicrovm];
        let text = report_text(&boots, &sides, "qemu64,-cx16", "reduced", 1);
        assert!(text.lines().any(|l| l.chars().count() > 100), "{text}");
        for width in [80, 100] {
            let fitted = trapline_report::fit_text(&text, Some(width));
            for line in fitted.lines() {
                assert!(line.chars().count() <= width, "{width}: {line:?}");
            }
            assert!(fitted.contains("to init, wall (s)"), "{fitted}");
        }
        assert_eq!(trapline_report::fit_text(&text, None), text);
    }

    #[test]
    fn spread_is_median_min_max() {
        assert_eq!(spread(&[3.0, 1.0, 2.0]), Some((2.0, 1.0, 3.0)));
        assert_eq!(spread(&[4.0, 1.0, 2.0, 3.0]), Some((2.5, 1.0, 4.0)));
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[f64::NAN, 1.0]), Some((1.0, 1.0, 1.0)));
    }

    #[test]
    fn trapline_counters_come_from_the_stat_json() {
        let dir = std::env::temp_dir().join(format!("tl-lb-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.json");
        std::fs::write(
            &f,
            r#"{"total": {"exits": 7, "kvm": {"exits": 40, "insn_emulation": 9}},
                "kvm_vm": {"mmu_pte_write": 5}}"#,
        )
        .unwrap();
        let (kvm, user) = trapline_counters(&f);
        let kvm = kvm.unwrap();
        assert_eq!(kvm["exits"], 40);
        assert_eq!(kvm["mmu_pte_write"], 5);
        assert_eq!(user, Some(7));
        std::fs::write(
            &f,
            r#"{"total": {"exits": 1, "kvm": {"unavailable": "old kernel"}}}"#,
        )
        .unwrap();
        assert_eq!(trapline_counters(&f).0, Err("old kernel".into()));
        assert!(trapline_counters(&dir.join("none")).0.is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
