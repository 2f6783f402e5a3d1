//! Comparing two reports scenario by scenario.

use serde::{Deserialize, Serialize};

use crate::describe::host_line;
use crate::model::{Report, ScenarioResult};

/// How many MADs a change must exceed to count as significant.
pub const SIGNIFICANCE_MADS: f64 = 3.0;

/// One scenario measured in both reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareEntry {
    /// Report key (`name` or `vmm:name`).
    pub scenario: String,
    /// Old median cycles per iteration.
    pub old_median: f64,
    /// New median cycles per iteration.
    pub new_median: f64,
    /// `new / old`; `None` when old is not positive.
    pub ratio: Option<f64>,
    /// `new − old`.
    pub delta: f64,
    /// Old MAD.
    pub old_mad: f64,
    /// New MAD.
    pub new_mad: f64,
    /// `|new − old| > 3·max(MAD_old, MAD_new)` and the `[min, max]` ranges
    /// do not overlap.
    pub significant: bool,
}

/// A scenario in both reports but not measured in at least one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unmeasured {
    /// Report key.
    pub scenario: String,
    /// Status in the old report.
    pub old_status: String,
    /// Status in the new report.
    pub new_status: String,
}

/// The result of [`compare`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The new report's host and start time.
    pub new_label: String,
    /// The old report's host and start time.
    pub old_label: String,
    /// Scenarios measured in both, in the new report's order.
    pub entries: Vec<CompareEntry>,
    /// Present in both, not measured in one or both.
    pub unmeasured: Vec<Unmeasured>,
    /// Keys only in the new report.
    pub only_new: Vec<String>,
    /// Keys only in the old report.
    pub only_old: Vec<String>,
    /// How the two runs' settings and hosts differ, one phrase each
    /// (`--quick: new yes, old no`); empty when they match.
    #[serde(default)]
    pub differences: Vec<String>,
}

/// The rule [`CompareEntry::significant`] applies, in words.
pub const SIGNIFICANCE_RULE: &str = "a change is significant when |new − old| exceeds 3 × the \
     larger MAD and the two runs' min–max ranges do not overlap";

/// What a comparison concludes, as criterion's "regressed / improved / no
/// change": over the scenarios measured in both runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompareVerdict {
    /// At least one scenario is significantly slower (the keys), and maybe
    /// some faster.
    Regressed {
        /// Significantly slower.
        slower: Vec<String>,
        /// Significantly faster.
        faster: Vec<String>,
    },
    /// Some scenarios significantly faster, none slower.
    Improved {
        /// Significantly faster.
        faster: Vec<String>,
    },
    /// No scenario changed beyond its spread (of this many compared).
    NoChange {
        /// Scenarios measured in both runs.
        compared: usize,
    },
}

impl std::fmt::Display for CompareVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn names(keys: &[String]) -> String {
            keys.join(", ")
        }
        match self {
            CompareVerdict::Regressed { slower, faster } => {
                write!(
                    f,
                    "verdict: regressed ({} significantly slower: {}",
                    slower.len(),
                    names(slower)
                )?;
                if !faster.is_empty() {
                    write!(f, "; {} faster: {}", faster.len(), names(faster))?;
                }
                f.write_str(")")
            }
            CompareVerdict::Improved { faster } => write!(
                f,
                "verdict: improved ({} significantly faster: {})",
                faster.len(),
                names(faster)
            ),
            CompareVerdict::NoChange { compared } => write!(
                f,
                "verdict: no change ({compared} scenarios compared, none changed beyond its spread)"
            ),
        }
    }
}

impl Comparison {
    /// The entry for `key`.
    pub fn entry(&self, key: &str) -> Option<&CompareEntry> {
        self.entries.iter().find(|e| e.scenario == key)
    }

    /// The verdict over every scenario measured in both runs.
    pub fn verdict(&self) -> CompareVerdict {
        let keys = |slower: bool| -> Vec<String> {
            self.entries
                .iter()
                .filter(|e| e.significant && (e.delta > 0.0) == slower)
                .map(|e| e.scenario.clone())
                .collect()
        };
        let (slower, faster) = (keys(true), keys(false));
        if !slower.is_empty() {
            CompareVerdict::Regressed { slower, faster }
        } else if !faster.is_empty() {
            CompareVerdict::Improved { faster }
        } else {
            CompareVerdict::NoChange {
                compared: self.entries.len(),
            }
        }
    }
}

fn entry(new: &ScenarioResult, old: &ScenarioResult) -> Option<CompareEntry> {
    let (n, o) = (new.stats.as_ref()?, old.stats.as_ref()?);
    if !new.is_measured() || !old.is_measured() {
        return None;
    }
    let delta = n.median - o.median;
    let spread = SIGNIFICANCE_MADS * o.mad.max(n.mad);
    Some(CompareEntry {
        scenario: new.key(),
        old_median: o.median,
        new_median: n.median,
        ratio: (o.median > 0.0).then(|| n.median / o.median),
        delta,
        old_mad: o.mad,
        new_mad: n.mad,
        significant: delta.abs() > spread && !n.overlaps(o),
    })
}

fn label(r: &Report) -> String {
    if r.started_at.is_empty() {
        host_line(r)
    } else {
        format!("{} — {}", r.started_at, host_line(r))
    }
}

/// How `new` and `old` were run differently: the settings that change
/// what a scenario measures (`--quick`, repeats, the loop's goal and
/// bounds, the selection, the peer) and the host (CPU model, kernel, CPU
/// count, architecture), one phrase each, new value first.
pub fn differences(new: &Report, old: &Report) -> Vec<String> {
    fn yes(b: bool) -> String {
        if b { "yes" } else { "no" }.to_string()
    }
    fn or_all(s: &Option<String>) -> String {
        s.clone().unwrap_or_else(|| "all".to_string())
    }
    fn or_none(s: &Option<String>) -> String {
        s.clone().unwrap_or_else(|| "none".to_string())
    }
    let (n, o) = (&new.config, &old.config);
    let (nh, oh) = (&new.host, &old.host);
    let pairs: [(&str, String, String); 11] = [
        ("--quick", yes(n.quick), yes(o.quick)),
        ("repeats", n.repeat.to_string(), o.repeat.to_string()),
        (
            "--goal",
            n.goal_cycles.to_string(),
            o.goal_cycles.to_string(),
        ),
        (
            "--min-iters",
            n.min_iters.to_string(),
            o.min_iters.to_string(),
        ),
        (
            "--max-iters",
            n.max_iters.to_string(),
            o.max_iters.to_string(),
        ),
        ("selection (--only)", or_all(&n.only), or_all(&o.only)),
        ("peer", or_none(&n.peer), or_none(&o.peer)),
        ("CPU", nh.cpu_model.clone(), oh.cpu_model.clone()),
        ("kernel", nh.kernel.clone(), oh.kernel.clone()),
        ("CPUs", nh.nproc.to_string(), oh.nproc.to_string()),
        (
            "architecture",
            nh.arch.clone().unwrap_or_else(|| "x86_64".to_string()),
            oh.arch.clone().unwrap_or_else(|| "x86_64".to_string()),
        ),
    ];
    pairs
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(what, a, b)| format!("{what}: new {a}, old {b}"))
        .collect()
}

/// Compares gross medians of every scenario present in both reports
/// (matched by VMM and name).
pub fn compare(new: &Report, old: &Report) -> Comparison {
    let mut c = Comparison {
        new_label: label(new),
        old_label: label(old),
        differences: differences(new, old),
        ..Comparison::default()
    };
    for n in &new.scenarios {
        match old.scenario(&n.vmm, &n.name) {
            None => c.only_new.push(n.key()),
            Some(o) => match entry(n, o) {
                Some(e) => c.entries.push(e),
                None => c.unmeasured.push(Unmeasured {
                    scenario: n.key(),
                    old_status: o.status.to_string(),
                    new_status: n.status.to_string(),
                }),
            },
        }
    }
    c.only_old = old
        .scenarios
        .iter()
        .filter(|o| new.scenario(&o.vmm, &o.name).is_none())
        .map(ScenarioResult::key)
        .collect();
    c
}
