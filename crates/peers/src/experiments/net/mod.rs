//! `trapline net-paths`: seed 002 on a whole data path. `builtin:vnet`
//! (trapline's own virtio-net driver) sends UDP request/response pairs and
//! bursts through each notify × irq path and back end, timed from inside
//! the guest, with every frame checked; the rows sit beside the doorbell's
//! (the probe's `doorbell-*` scenarios), so the user-space hop can be read
//! per doorbell and per packet.
//!
//! Each row is a fresh child (`trapline run --net …`, QEMU for the peer);
//! the TAP rows run inside a network namespace with a UDP echo
//! ([`netns`]). Rows that cannot run here say why instead of a number.

pub mod endpoints;
pub mod exits;
pub mod guest;
pub mod netns;
pub mod peer;
pub mod render;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use trapline_abi::Histogram;

use self::guest::VnetRun;
use self::netns::NetLab;
use super::virtio::{parse_stat, stat_counts, ExitCounts};

/// The notify × irq paths, as virtio-paths has them (fast ones last).
pub const PATHS: [(&str, &str); 4] = super::virtio::PATHS;

/// Bytes an Ethernet frame adds to a UDP payload (Ethernet II, IPv4, UDP headers).
pub const FRAME_OVERHEAD: u64 = 14 + 20 + 8;

/// Where the frames go after the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// trapline's echo back end: each sent frame comes back (no host network stack).
    Echo,
    /// A TAP in a namespace, and a UDP echo on the host's side of it.
    Tap,
    /// The kernel's vhost-net worker moves the frames (user space leaves the data path).
    VhostNet,
}

impl Backend {
    /// Its name in the rows.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Echo => "echo",
            Backend::Tap => "tap",
            Backend::VhostNet => "vhost-net",
        }
    }
}

/// A row's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Round trips (send to the receive interrupt), in nanoseconds, every run merged.
    pub rtt_ns: Histogram,
    /// Frames echoed per second in the bursts (median of the runs).
    pub pps: f64,
    /// Ethernet bytes echoed per second in the bursts (one direction).
    pub bytes_per_s: f64,
    /// Frames lost, reordered, wrong (summed over the runs): all must be 0.
    pub lost: u64,
    /// Frames that came back after a later one.
    pub reordered: u64,
    /// Frames with wrong bytes (or a duplicate).
    pub bad: u64,
    /// Times the guest's clock read behind an earlier reading (summed).
    pub clock_back: u64,
    /// Receive interrupts per round trip.
    pub irqs_per_packet: f64,
    /// Doorbells the guest rang per round trip.
    pub notifies_per_packet: f64,
    /// Exits per round trip (trapline only: its exit profile and KVM's counters).
    pub exits_per_packet: Option<PacketExits>,
    /// Runs merged.
    pub runs: u32,
}

/// A trapline row's exits per round trip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketExits {
    /// Exits at the card's data-path registers (QueueNotify,
    /// InterruptStatus, InterruptACK), by their `--stat` keys: the data
    /// path's own, without the payload's console, ucalls or the card's
    /// set-up ([`exits`]).
    pub card: f64,
    /// The whole run's counts over its round trips: every exit that reached
    /// trapline, and KVM's counters, which have no keys to pick by (boot,
    /// set-up and the console included; at small amounts mostly those).
    pub whole_run: ExitCounts,
}

/// What a row holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Measured.
    Measured(Box<Measured>),
    /// Not run here, and why (no CAP_NET_ADMIN, no /dev/vhost-net, no lkvm…).
    NotAvailable(String),
    /// Run, and it went wrong (the child's words).
    Failed(String),
}

/// One row: a VMM, its path, the back end.
#[derive(Clone, Debug, PartialEq)]
pub struct NetRow {
    /// `trapline`, `qemu`, `kvmtool`.
    pub vmm: &'static str,
    /// trapline: `exit + line` …; QEMU: its options (`ioeventfd=on vhost=off`).
    pub path: String,
    /// The back end.
    pub backend: Backend,
    /// The figures, or why there are none.
    pub outcome: Outcome,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct NetOptions {
    /// The trapline binary.
    pub exe: PathBuf,
    /// Request/response pairs per run.
    pub pairs: u64,
    /// Bursts per run.
    pub bursts: u64,
    /// Frames in flight per burst.
    pub depth: u64,
    /// UDP payload bytes of the pairs' frames.
    pub size: u64,
    /// UDP payload bytes of the bursts' frames.
    pub burst_size: u64,
    /// Runs per row (their histograms merged, the median rate kept).
    pub repeat: u32,
    /// Longest one child may run.
    pub timeout: Duration,
    /// Longest the guest waits for a frame to come back before it counts
    /// it lost, in ms (`wait_ms=`; an emulated host needs more than 1 s).
    pub wait_ms: u64,
    /// Seccomp filters on.
    pub seccomp: bool,
    /// Use this network namespace instead of making one.
    pub netns: Option<String>,
    /// Run the QEMU peer's rows.
    pub peer_qemu: bool,
}

impl NetOptions {
    /// The guest's words for the amounts.
    fn amounts(&self) -> String {
        format!(
            "pairs={} bursts={} depth={} size={} bsize={} wait_ms={}",
            self.pairs, self.bursts, self.depth, self.size, self.burst_size, self.wait_ms
        )
    }

    /// Round trips one run makes (its warm-up's 16 included), for per-packet counts.
    #[allow(clippy::cast_precision_loss)]
    fn packets(&self) -> f64 {
        (self.pairs + 16 + self.bursts * self.depth) as f64
    }
}

/// One child's output, read.
struct Child {
    run: VnetRun,
    /// The card's data-path exits and the whole run's counts.
    counts: Option<(f64, ExitCounts)>,
    hz: f64,
}

/// `trapline run` of `builtin:vnet` on one path and back end (in the
/// namespace for TAP and vhost-net).
fn trapline_child(
    opts: &NetOptions,
    path: (&str, &str),
    backend: Backend,
    lab: Option<&NetLab>,
    stat: &Path,
) -> Result<Child, String> {
    let mut cmd = match lab {
        Some(lab) => lab.command(&opts.exe),
        None => Command::new(&opts.exe),
    };
    let net = match backend {
        Backend::Echo => "echo".to_string(),
        Backend::Tap => format!("tap:{}", netns::TAP_NAME),
        Backend::VhostNet => format!("vhost:{}", netns::TAP_NAME),
    };
    let words = format!(
        "{} {}",
        endpoints::guest_words(backend != Backend::Echo),
        opts.amounts()
    );
    cmd.args(["run", "--kernel", "builtin:vnet", "--net", &net])
        .args(["--virtio-notify", path.0, "--virtio-irq", path.1])
        .args(["--append", &words])
        .args(["--timeout", &format!("{}", opts.timeout.as_secs_f64())])
        .arg(format!("--stat={}", stat.display()))
        .args(["--stat-format", "json"]);
    if !opts.seccomp {
        cmd.arg("--no-seccomp");
    }
    let o = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", opts.exe.display()))?;
    let out = String::from_utf8_lossy(&o.stdout);
    let fail = |why: String| {
        format!(
            "builtin:vnet on --net {net} --virtio-notify {} --virtio-irq {}: {why} ({}):\n{}{}",
            path.0,
            path.1,
            o.status,
            tail(&out),
            tail(&String::from_utf8_lossy(&o.stderr))
        )
    };
    let run = guest::parse(&out).map_err(fail)?;
    // One read and one parse of the report, for both its readers.
    let report: Option<serde_json::Value> = std::fs::read_to_string(stat)
        .ok()
        .and_then(|j| serde_json::from_str(&j).ok());
    let stat = report.as_ref().and_then(stat_counts);
    let card = report.as_ref().and_then(exits::card_exits);
    let hz = match (run.clock_hz, &stat) {
        (hz, _) if hz > 0 => hz as f64,
        (_, Some((_, khz))) if *khz > 0.0 => khz * 1e3,
        _ => return Err(fail("the guest's clock rate is unknown".into())),
    };
    Ok(Child {
        run,
        counts: card.zip(stat.map(|(c, _)| c)),
        hz,
    })
}

/// The last lines of a child's output (a failure's context, not its whole console).
fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.contains("hist rtt")).collect();
    let from = lines.len().saturating_sub(12);
    lines[from..].iter().map(|l| format!("{l}\n")).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The runs of one row merged: histograms in ns, rates' medians, counts summed.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn merge(children: &[Child], packets: f64) -> Measured {
    let mut rtt_ns = Histogram::new();
    for c in children {
        // Each value at its bucket's midpoint, scaled: within the bucket's 0.78 %.
        let ns_per_tick = 1e9 / c.hz;
        for (lo, hi, n) in c.run.rtt.buckets() {
            let mid = lo + (hi - lo) / 2;
            let v = ((mid as f64) * ns_per_tick).round() as u64;
            for _ in 0..n {
                rtt_ns.record(v);
            }
        }
    }
    let rate = |c: &Child| {
        let secs = c.run.burst_ticks as f64 / c.hz;
        if secs > 0.0 {
            (c.run.bursts_whole * c.run.depth) as f64 / secs
        } else {
            0.0
        }
    };
    let pps = median(children.iter().map(rate).collect());
    let frame = children
        .first()
        .map_or(0, |c| c.run.burst_size + FRAME_OVERHEAD);
    let sum = |f: fn(&VnetRun) -> u64| children.iter().map(|c| f(&c.run)).sum::<u64>();
    let per = |f: fn(&VnetRun) -> u64| {
        median(
            children
                .iter()
                .map(|c| f(&c.run) as f64 / packets)
                .collect(),
        )
    };
    let exits = children
        .iter()
        .map(|c| c.counts)
        .collect::<Option<Vec<_>>>()
        .map(|v| {
            let m =
                |f: fn(&ExitCounts) -> f64| median(v.iter().map(|(_, c)| f(c) / packets).collect());
            PacketExits {
                card: median(v.iter().map(|(card, _)| card / packets).collect()),
                whole_run: ExitCounts {
                    trapline: m(|c| c.trapline),
                    kvm: m(|c| c.kvm),
                    kvm_mmio: m(|c| c.kvm_mmio),
                    kvm_irq_injections: m(|c| c.kvm_irq_injections),
                },
            }
        });
    Measured {
        rtt_ns,
        pps,
        bytes_per_s: pps * frame as f64,
        lost: sum(|r| r.lost),
        reordered: sum(|r| r.reordered),
        bad: sum(|r| r.bad + r.dup),
        clock_back: sum(|r| r.clock_back),
        irqs_per_packet: per(|r| r.irqs),
        notifies_per_packet: per(|r| r.notifies),
        exits_per_packet: exits,
        runs: children.len() as u32,
    }
}

/// A row from its runs: the first failure ends it.
fn row_from(
    vmm: &'static str,
    path: String,
    backend: Backend,
    runs: impl Iterator<Item = Result<Child, String>>,
    packets: f64,
) -> NetRow {
    let outcome = match runs.collect::<Result<Vec<_>, _>>() {
        Ok(children) => Outcome::Measured(Box::new(merge(&children, packets))),
        Err(e) => Outcome::Failed(e),
    };
    NetRow {
        vmm,
        path,
        backend,
        outcome,
    }
}

/// The one path vhost-net runs on: the kernel's worker waits on KVM's
/// ioeventfd for the guest's kick and signals KVM's irqfd itself.
pub const VHOST_PATH: (&str, &str) = ("ioeventfd", "irqfd");

/// Why vhost-net has no row on `path` (`None`: it runs there, where the host
/// has /dev/vhost-net).
pub fn vhost_not_on(path: (&str, &str)) -> Option<String> {
    let (notify, irq) = path;
    let mut why = Vec::new();
    if notify != VHOST_PATH.0 {
        why.push(format!(
            "the kernel's worker takes the guest's kick from KVM's ioeventfd (--virtio-notify {notify} would send it to trapline)"
        ));
    }
    if irq != VHOST_PATH.1 {
        why.push(format!(
            "it signals the guest through KVM's irqfd (--virtio-irq {irq} would need trapline to raise the line)"
        ));
    }
    (!why.is_empty()).then(|| format!("a kernel back end cannot use this path: {}", why.join("; ")))
}

/// Why the vhost-net row cannot run on this host (`None`: it can).
fn vhost_absent() -> Option<String> {
    (!Path::new(VHOST_NET_PATH).exists()).then(|| {
        format!("{VHOST_NET_PATH} is absent on this host (load it as root: `modprobe vhost_net`)")
    })
}

/// Where the host offers vhost-net.
const VHOST_NET_PATH: &str = "/dev/vhost-net";

/// The vhost-net rows: measured on [`VHOST_PATH`] in the namespace (where
/// the host has /dev/vhost-net), the other paths with the reason.
fn vhost_rows(
    opts: &NetOptions,
    lab: &Result<NetLab, String>,
    stat: &Path,
    progress: &dyn Fn(&str),
) -> Vec<NetRow> {
    PATHS
        .iter()
        .map(|&path| {
            let label = format!("{} + {}", path.0, path.1);
            let why = vhost_not_on(path)
                .or_else(vhost_absent)
                .or_else(|| lab.as_ref().err().cloned());
            if let Some(why) = why {
                return NetRow {
                    vmm: "trapline",
                    path: label,
                    backend: Backend::VhostNet,
                    outcome: Outcome::NotAvailable(why),
                };
            }
            progress(&format!("trapline {label}, vhost-net"));
            let runs = (0..opts.repeat.max(1))
                .map(|_| trapline_child(opts, path, Backend::VhostNet, lab.as_ref().ok(), stat));
            row_from("trapline", label, Backend::VhostNet, runs, opts.packets())
        })
        .collect()
}

/// The guest TSC's rate the trapline rows saw (for a peer's guest, which
/// cannot ask), else the one a `builtin:hello` run reports.
fn tsc_khz_seen(opts: &NetOptions, stat: &Path) -> Option<f64> {
    let read = || {
        let j = std::fs::read_to_string(stat).ok()?;
        parse_stat(&j).map(|(_, khz)| khz).filter(|k| *k > 0.0)
    };
    read().or_else(|| {
        Command::new(&opts.exe)
            .args(["run", "--kernel", "builtin:hello", "--serial", "none"])
            .arg(format!("--stat={}", stat.display()))
            .args(["--stat-format", "json", "--timeout", "30"])
            .output()
            .ok()?;
        read()
    })
}

/// One row of a back end trapline serves itself (echo, TAP in the namespace).
fn user_space_row(
    opts: &NetOptions,
    path: (&str, &str),
    backend: Backend,
    lab: &Result<NetLab, String>,
    stat: &Path,
    progress: &dyn Fn(&str),
) -> NetRow {
    let label = format!("{} + {}", path.0, path.1);
    let lab = match (backend, lab) {
        (Backend::Echo, _) => None,
        (_, Ok(lab)) => Some(lab),
        (_, Err(e)) => {
            return NetRow {
                vmm: "trapline",
                path: label,
                backend,
                outcome: Outcome::NotAvailable(e.clone()),
            }
        }
    };
    progress(&format!("trapline {label}, {}", backend.name()));
    let runs = (0..opts.repeat.max(1)).map(|_| trapline_child(opts, path, backend, lab, stat));
    row_from("trapline", label, backend, runs, opts.packets())
}

/// Adds `new` to `rows`, except, when the run was stopped meanwhile, the
/// ones that failed: a child the stop signal ended (Ctrl-C reaches the
/// whole process group) is a row not run, not a failure.
fn keep_unless_cut_short(
    rows: &mut Vec<NetRow>,
    new: impl IntoIterator<Item = NetRow>,
    stopped: &dyn Fn() -> bool,
) {
    let cut_short = stopped();
    rows.extend(
        new.into_iter()
            .filter(|r| !(cut_short && matches!(r.outcome, Outcome::Failed(_)))),
    );
}

/// Measures every row. `progress` is told each row as it starts; `stopped`
/// says whether to end early (rows not run, and a row the stop cut short,
/// are left out).
pub fn measure(
    opts: &NetOptions,
    progress: &dyn Fn(&str),
    stopped: &dyn Fn() -> bool,
) -> Result<Vec<NetRow>, String> {
    let dir = std::env::temp_dir().join(format!("trapline-lab-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stat = dir.join("stat.json");
    let mut rows = Vec::new();
    let lab = NetLab::new(opts.netns.as_deref());
    for backend in [Backend::Echo, Backend::Tap] {
        for path in PATHS {
            if stopped() {
                drop(lab);
                let _ = std::fs::remove_dir_all(&dir);
                return Ok(rows);
            }
            let row = user_space_row(opts, path, backend, &lab, &stat, progress);
            keep_unless_cut_short(&mut rows, [row], stopped);
        }
    }
    if !stopped() {
        let vhost = vhost_rows(opts, &lab, &stat, progress);
        keep_unless_cut_short(&mut rows, vhost, stopped);
    }
    if opts.peer_qemu && !stopped() {
        let khz = tsc_khz_seen(opts, &stat);
        let peer = peer::qemu_rows(opts, lab.as_ref().ok(), khz, &dir, progress);
        keep_unless_cut_short(&mut rows, peer, stopped);
        rows.push(peer::kvmtool_row());
    }
    drop(lab);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(ticks: &[u64], hz: f64, burst_ticks: u64) -> Child {
        let mut rtt = Histogram::new();
        for &t in ticks {
            rtt.record(t);
        }
        Child {
            run: VnetRun {
                pairs: ticks.len() as u64,
                pair_size: 64,
                rtt,
                bursts: 2,
                bursts_whole: 2,
                depth: 4,
                burst_size: 1000,
                burst_ticks,
                lost: 0,
                reordered: 0,
                bad: 0,
                dup: 0,
                irqs: 20,
                notifies: 10,
                clock_hz: 0,
                clock_back: 0,
                ok: true,
            },
            counts: Some((
                30.0,
                ExitCounts {
                    trapline: 40.0,
                    kvm: 80.0,
                    kvm_mmio: 40.0,
                    kvm_irq_injections: 20.0,
                },
            )),
            hz,
        }
    }

    #[test]
    fn merges_runs_into_nanoseconds_and_rates() {
        // 2 GHz: 2000 ticks = 1 µs; 8 frames in 8000 ticks = 4 µs → 2 Mpps.
        let m = merge(
            &[child(&[2000, 4000], 2e9, 8000), child(&[2000], 2e9, 8000)],
            10.0,
        );
        assert_eq!(m.rtt_ns.count(), 3);
        let p50 = m.rtt_ns.quantile(0.5).unwrap();
        assert!((990..=1010).contains(&p50), "{p50}");
        assert!((m.pps - 2e6).abs() < 1.0);
        assert!((m.bytes_per_s - 2e6 * 1042.0).abs() < 10.0);
        assert_eq!(m.irqs_per_packet, 2.0);
        let e = m.exits_per_packet.unwrap();
        assert_eq!((e.card, e.whole_run.trapline), (3.0, 4.0));
        assert_eq!((m.lost, m.runs), (0, 2));
    }

    #[test]
    fn a_row_the_stop_cut_short_is_left_out_and_others_kept() {
        let row = |outcome| NetRow {
            vmm: "trapline",
            path: "exit + line".into(),
            backend: Backend::Echo,
            outcome,
        };
        let mut rows = Vec::new();
        keep_unless_cut_short(&mut rows, [row(Outcome::Failed("boom".into()))], &|| false);
        assert_eq!(rows.len(), 1, "a failure without a stop is a row");
        keep_unless_cut_short(
            &mut rows,
            [
                row(Outcome::Failed("exit status: 130".into())),
                row(Outcome::NotAvailable("no".into())),
            ],
            &|| true,
        );
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[1].outcome, Outcome::NotAvailable("no".into()));
    }

    #[test]
    fn a_failed_run_fails_the_row() {
        let runs = vec![Ok(child(&[1], 1e9, 1)), Err("boom".to_string())];
        let r = row_from(
            "trapline",
            "exit + line".into(),
            Backend::Echo,
            runs.into_iter(),
            1.0,
        );
        assert_eq!(r.outcome, Outcome::Failed("boom".into()));
    }
}
