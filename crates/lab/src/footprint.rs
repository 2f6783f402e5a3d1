//! trapline's own footprint, measured the way a user meets it: a fresh
//! `trapline run` process booting the hello payload. Each child reports
//! (with TRAPLINE_FOOTPRINT=1) the process CPU time from exec to its first
//! KVM_RUN and its resident memory outside guest RAM, and that CPU time
//! split at start-up's marks (see trapline_report::derive::startup).
//!
//! Interleaved with those runs, the start-up floor (`trapline-start-floor`,
//! beside the trapline executable) prints the same lines at four of the
//! same marks; trapline's start is reported as a multiple of it, span by
//! span (see trapline_report::derive::startfloor).

use std::path::{Path, PathBuf};
use std::process::Command;

use trapline_report::derive::{startfloor, startup};
use trapline_report::unit::Unit;
use trapline_report::Derived;

/// One child's numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    /// CPU time (all threads) from exec to vCPU 0's first KVM_RUN, in ms.
    pub cpu_ms_to_first_run: f64,
    /// Resident memory outside guest RAM after the run, in MiB.
    pub rss_beyond_guest_mib: f64,
    /// Start-up's phases in the order the child printed them (none from a
    /// binary older than the marks).
    pub phases: Vec<PhaseSpent>,
}

/// What one phase of start-up cost: from the previous mark to `mark`.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseSpent {
    /// The mark that ends it, as printed (`until="…"`).
    pub mark: String,
    /// Process CPU time in it, µs.
    pub cpu_us: f64,
    /// Minor page faults in it.
    pub faults: u64,
}

/// Parse one `trapline-footprint-phase cpu_ns=… faults=… until="…"` line.
fn parse_phase(line: &str) -> Option<PhaseSpent> {
    let rest = line.strip_prefix("trapline-footprint-phase ")?;
    let (fields, mark) = rest.split_once(" until=")?;
    let mark = mark.trim().strip_prefix('"')?.strip_suffix('"')?;
    let field = |k: &str| -> Option<u64> {
        fields
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse::<u64>().ok())
    };
    Some(PhaseSpent {
        mark: mark.to_string(),
        cpu_us: field("cpu_ns")? as f64 / 1e3,
        faults: field("faults")?,
    })
}

/// Parse a child's `trapline-footprint …` stderr line.
pub fn parse(stderr: &str) -> Option<Footprint> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("trapline-footprint "))?;
    let field = |k: &str| -> Option<f64> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse::<f64>().ok())
    };
    Some(Footprint {
        cpu_ms_to_first_run: field("cpu_ns_to_first_kvm_run")? / 1e6,
        rss_beyond_guest_mib: field("rss_beyond_guest_bytes")? / (1024.0 * 1024.0),
        phases: stderr.lines().filter_map(parse_phase).collect(),
    })
}

/// Each mark's median CPU time (µs) and median page faults over `runs`,
/// in the order the marks first appear. A mark missing from some runs is
/// taken over the runs that have it.
pub fn phase_medians(runs: &[Footprint]) -> Vec<(String, f64, f64)> {
    let mut marks: Vec<&str> = Vec::new();
    for p in runs.iter().flat_map(|f| &f.phases) {
        if !marks.contains(&p.mark.as_str()) {
            marks.push(&p.mark);
        }
    }
    marks
        .into_iter()
        .map(|m| {
            let of = |get: fn(&PhaseSpent) -> f64| {
                median(
                    runs.iter()
                        .flat_map(|f| f.phases.iter().filter(|p| p.mark == m))
                        .map(get)
                        .collect(),
                )
            };
            (m.to_string(), of(|p| p.cpu_us), of(|p| p.faults as f64))
        })
        .collect()
}

/// The median (the upper one of an even count); NaN for none.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median absolute deviation from `median`; NaN for none.
pub fn mad(v: &[f64], median_of_v: f64) -> f64 {
    median(v.iter().map(|x| (x - median_of_v).abs()).collect())
}

/// What [`measure`] collected: trapline's runs, and the floor's or why it
/// was not measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Each `trapline run` child's footprint.
    pub trapline: Vec<Footprint>,
    /// Each start-up floor child's, or why there are none.
    pub floor: Result<Vec<Footprint>, String>,
}

/// The start-up floor program beside `exe` (`cargo build` builds both into
/// the same folder), or why it cannot be run.
pub fn floor_beside(exe: &Path) -> Result<PathBuf, String> {
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no folder", exe.display()))?;
    let floor = dir.join(startfloor::PROGRAM);
    if floor.is_file() {
        Ok(floor)
    } else {
        Err(format!(
            "no {} beside {} (`cargo build --release` builds it with trapline)",
            startfloor::PROGRAM,
            exe.display()
        ))
    }
}

/// Run one child with TRAPLINE_FOOTPRINT=1 and parse its lines.
fn one_child(exe: &Path, args: &[&str]) -> Result<Footprint, String> {
    let o = Command::new(exe)
        .args(args)
        .env("TRAPLINE_FOOTPRINT", "1")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    parse(&stderr).ok_or_else(|| format!("no footprint line from {}: {stderr}", exe.display()))
}

/// Run `exe run --kernel builtin:hello` `runs` times and the start-up
/// floor beside it as many times, alternating (which goes first swaps
/// every run), so a drift of the host's load hits both alike. A floor that
/// is absent or fails leaves trapline's runs measured and says why.
pub fn measure(exe: &Path, runs: u32) -> Result<Measured, String> {
    const HELLO: [&str; 7] = [
        "run",
        "--kernel",
        "builtin:hello",
        "--serial",
        "none",
        "--timeout",
        "30",
    ];
    let mut trapline = Vec::new();
    let mut floor = floor_beside(exe).map(|f| (f, Vec::new()));
    for i in 0..runs {
        let floor_first = i % 2 == 1;
        let mut run_floor = || {
            if let Ok((exe, runs)) = &mut floor {
                match one_child(exe, &[]) {
                    Ok(f) => runs.push(f),
                    Err(e) => floor = Err(e),
                }
            }
        };
        if floor_first {
            run_floor();
        }
        trapline.push(one_child(exe, &HELLO)?);
        if !floor_first {
            run_floor();
        }
    }
    Ok(Measured {
        trapline,
        floor: floor.map(|(_, runs)| runs),
    })
}

/// One span of start-up: from one of the floor's marks to the next.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The mark that ends it.
    pub mark: String,
    /// Median over trapline's runs of its phases' CPU time in the span, µs.
    pub trapline_us: f64,
    /// The floor's median CPU time in it, µs.
    pub floor_us: f64,
    /// The floor's median page faults in it.
    pub floor_faults: f64,
}

/// A run's CPU µs summed over its phases up to each of `marks` in turn
/// (the phases after the previous one); `None` when the run lacks one of
/// them or has them in another order.
fn sums_up_to(run: &Footprint, marks: &[String]) -> Option<Vec<f64>> {
    let mut out = Vec::with_capacity(marks.len());
    let mut acc = 0.0;
    for p in &run.phases {
        acc += p.cpu_us;
        if marks.get(out.len()) == Some(&p.mark) {
            out.push(acc);
            acc = 0.0;
        }
    }
    (out.len() == marks.len()).then_some(out)
}

/// The floor's marks (as its first run printed them) with, per span, the
/// floor's medians and the median of trapline's sums over the same span
/// (taken per process: trapline's phases come in its own order, which
/// differs between the architectures). Empty when the floor has no run.
pub fn spans(trapline: &[Footprint], floor: &[Footprint]) -> Vec<Span> {
    let Some(first) = floor.first() else {
        return Vec::new();
    };
    let marks: Vec<String> = first.phases.iter().map(|p| p.mark.clone()).collect();
    let ours: Vec<Vec<f64>> = trapline
        .iter()
        .filter_map(|r| sums_up_to(r, &marks))
        .collect();
    let floors = phase_medians(floor);
    marks
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (floor_us, floor_faults) = floors
                .iter()
                .find(|(name, _, _)| name == m)
                .map_or((f64::NAN, f64::NAN), |&(_, us, f)| (us, f));
            Span {
                mark: m.clone(),
                trapline_us: median(ours.iter().map(|s| s[i]).collect()),
                floor_us,
                floor_faults,
            }
        })
        .collect()
}

/// The start-up floor's derived values: per span its CPU µs, faults and
/// trapline's multiple; its totals; and trapline's multiple of its CPU
/// time to the first KVM_RUN with the range the MADs allow.
pub fn floor_derived(trapline: &[Footprint], floor: &[Footprint]) -> Vec<Derived> {
    let n = floor.len();
    let of = |f: &str| format!("median over {n} `{}` processes: {f}", startfloor::PROGRAM);
    let value = |name: String, value: f64, unit: Unit, formula: String| Derived {
        name,
        value,
        unit: unit.as_str().into(),
        formula,
        note: None,
        range: None,
        goal: None,
    };
    let mut out = Vec::new();
    for s in spans(trapline, floor) {
        let slug = startup::slug(&s.mark);
        let up_to = format!("CPU time up to the mark \"{}\"", s.mark);
        out.push(value(
            format!("{}{slug}", startfloor::CPU_PREFIX),
            s.floor_us,
            Unit::Micros,
            of(&up_to),
        ));
        out.push(value(
            format!("{}{slug}", startfloor::FAULTS_PREFIX),
            s.floor_faults,
            Unit::Count,
            of(&format!("minor page faults up to the mark \"{}\"", s.mark)),
        ));
        if let Some((x, _)) = startfloor::multiple((s.trapline_us, 0.0), (s.floor_us, 0.0)) {
            out.push(value(
                format!("{}{slug}", startfloor::MULTIPLE_PREFIX),
                x,
                Unit::Ratio,
                format!(
                    "trapline's phases since the previous mark, summed per process, median                      ({:.0} µs) / the floor's ({:.0} µs)",
                    s.trapline_us, s.floor_us
                ),
            ));
        }
    }
    let cpu = |runs: &[Footprint]| {
        let v: Vec<f64> = runs.iter().map(|f| f.cpu_ms_to_first_run).collect();
        let m = median(v.clone());
        (m, mad(&v, m))
    };
    let (floor_cpu, ours) = (cpu(floor), cpu(trapline));
    out.push(value(
        startfloor::FLOOR_CPU.into(),
        floor_cpu.0,
        Unit::Millis,
        of("CPU time from exec to its KVM_RUN"),
    ));
    out.push(value(
        startfloor::FLOOR_RSS.into(),
        median(floor.iter().map(|f| f.rss_beyond_guest_mib).collect()),
        Unit::MiB,
        of("resident memory outside guest RAM"),
    ));
    if let Some((x, range)) = startfloor::multiple(ours, floor_cpu) {
        out.push(Derived {
            range,
            ..value(
                startfloor::MULTIPLE.into(),
                x,
                Unit::Ratio,
                format!(
                    "{} / {} (medians over processes run alternately; the range from their MADs)",
                    trapline_report::derive::VMM_CPU_TO_FIRST_KVM_RUN,
                    startfloor::FLOOR_CPU
                ),
            )
        });
    }
    out.retain(|d| d.value.is_finite());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_child_line() {
        let f = parse("x\ntrapline-footprint cpu_ns_to_first_kvm_run=3500000 rss_beyond_guest_bytes=4194304 wall_ns=1\n").unwrap();
        assert_eq!(f.cpu_ms_to_first_run, 3.5);
        assert_eq!(f.rss_beyond_guest_mib, 4.0);
        assert!(parse("nothing").is_none());
        assert!(parse("trapline-footprint cpu_ns_to_first_kvm_run=x").is_none());
        assert!(f.phases.is_empty());
    }

    /// Lines as `trapline run` prints them with TRAPLINE_FOOTPRINT=1.
    fn child(main_ns: u64, vm_faults: u64) -> String {
        format!(
            "trapline-footprint cpu_ns_to_first_kvm_run=1500000 rss_beyond_guest_bytes=1 wall_ns=1\n\
             trapline-footprint-phase cpu_ns={main_ns} faults=37 until=\"main\"\n\
             trapline-footprint-phase cpu_ns=420000 faults={vm_faults} until=\"vm created\"\n\
             trapline-footprint-phase cpu_ns=100000 faults=5 until=\"first KVM_RUN\"\n"
        )
    }

    #[test]
    fn parses_the_phase_lines_in_order() {
        let f = parse(&child(450_000, 1)).unwrap();
        let marks: Vec<&str> = f.phases.iter().map(|p| p.mark.as_str()).collect();
        assert_eq!(marks, ["main", "vm created", "first KVM_RUN"]);
        assert_eq!(f.phases[0].cpu_us, 450.0);
        assert_eq!(f.phases[0].faults, 37);
        assert_eq!(f.phases[2].faults, 5);
        // Broken phase lines are skipped, not fatal.
        assert!(parse_phase("trapline-footprint-phase cpu_ns=1 until=\"x\"").is_none());
        assert!(parse_phase("trapline-footprint-phase cpu_ns=1 faults=2 until=x").is_none());
    }

    /// Lines as the start-up floor prints them.
    fn floor_child(cpu_ns: u64) -> Footprint {
        parse(&format!(
            "trapline-footprint cpu_ns_to_first_kvm_run={cpu_ns} rss_beyond_guest_bytes=1048576 wall_ns=1\n\
             trapline-footprint-phase cpu_ns=300000 faults=25 until=\"main\"\n\
             trapline-footprint-phase cpu_ns=400000 faults=3 until=\"vm created\"\n\
             trapline-footprint-phase cpu_ns=100000 faults=1 until=\"first KVM_RUN\"\n"
        ))
        .unwrap()
    }

    #[test]
    fn spans_sum_trapline_phases_between_the_floors_marks() {
        // trapline: main 450, vm created 420, first KVM_RUN 100 (+ an
        // extra mark between that belongs to the last span).
        let mut t = parse(&child(450_000, 1)).unwrap();
        t.phases.insert(
            2,
            PhaseSpent {
                mark: "image loaded".into(),
                cpu_us: 50.0,
                faults: 9,
            },
        );
        let floor = [floor_child(800_000), floor_child(900_000)];
        let s = spans(std::slice::from_ref(&t), &floor);
        let got: Vec<(&str, f64, f64)> = s
            .iter()
            .map(|s| (s.mark.as_str(), s.trapline_us, s.floor_us))
            .collect();
        assert_eq!(
            got,
            [
                ("main", 450.0, 300.0),
                ("vm created", 420.0, 400.0),
                ("first KVM_RUN", 150.0, 100.0)
            ]
        );
        assert_eq!(s[0].floor_faults, 25.0);
        assert!(spans(&[t.clone()], &[]).is_empty());
        // A trapline run without one of the marks is left out of the sums.
        let mut short = t.clone();
        short.phases.retain(|p| p.mark != "vm created");
        assert!(spans(&[short], &floor)[0].trapline_us.is_nan());

        let d = floor_derived(&[t], &floor);
        let get = |n: &str| {
            d.iter()
                .find(|x| x.name == n)
                .unwrap_or_else(|| panic!("{n}"))
        };
        assert_eq!(get("vmm-startfloor:vm").value, 400.0);
        assert_eq!(get("vmm-startfloor-faults:exec-to-main").value, 25.0);
        assert_eq!(get("vmm-startup-multiple:vcpu-thread").value, 1.5);
        assert_eq!(get("vmm-startfloor-cpu-to-first-kvm-run").value, 0.9);
        assert_eq!(get("vmm-startfloor-rss-beyond-guest").value, 1.0);
        let m = get("vmm-startup-multiple");
        assert!((m.value - 1.5 / 0.9).abs() < 1e-12, "{}", m.value);
        assert!(m.range.is_some());
    }

    #[test]
    fn the_floor_is_looked_for_beside_trapline() {
        let dir = std::env::temp_dir().join(format!("startfloor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("trapline");
        let e = floor_beside(&exe).unwrap_err();
        assert!(
            e.contains("trapline-start-floor") && e.contains("cargo build"),
            "{e}"
        );
        std::fs::write(dir.join("trapline-start-floor"), b"").unwrap();
        assert_eq!(
            floor_beside(&exe).unwrap(),
            dir.join("trapline-start-floor")
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(mad(&[1.0, 2.0, 4.0], 2.0), 1.0);
    }

    #[test]
    fn phase_medians_per_mark() {
        let runs: Vec<Footprint> = [(400_000, 1), (500_000, 3), (450_000, 2)]
            .iter()
            .map(|&(m, v)| parse(&child(m, v)).unwrap())
            .collect();
        let med = phase_medians(&runs);
        assert_eq!(med[0], ("main".to_string(), 450.0, 37.0));
        assert_eq!(med[1], ("vm created".to_string(), 420.0, 2.0));
        assert_eq!(med.len(), 3);
        assert!(phase_medians(&[]).is_empty());
        assert!(median(Vec::new()).is_nan());
    }
}
