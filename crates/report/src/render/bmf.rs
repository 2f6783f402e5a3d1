//! Bencher Metric Format: one JSON object keyed by benchmark name (the
//! report key: `name` on trapline, `vmm:name` for a peer), each holding two
//! measures whose value is the median per iteration and whose bounds are
//! the min and max over the repeats:
//!
//! - `latency`, Bencher's built-in measure, in nanoseconds as Bencher
//!   reads it (the cycles converted at the host's TSC frequency; left out
//!   when the report does not know that frequency);
//! - `cycles`, a custom measure (create it in the Bencher project with the
//!   slug `cycles` and the unit "TSC cycles"), the raw figure every other
//!   format reports.
//!
//! It covers every scenario of the run, whatever the view: the views pick
//! rows for people, a tracker wants every benchmark under a stable name.
//! Scenarios without statistics (unsupported, failed) are left out, since
//! BMF has no way to say "not measured".

use serde_json::{json, Map, Value};

use crate::compare::Comparison;
use crate::model::{cycles_to_ns, Report};

/// Bencher's built-in measure, read as nanoseconds.
pub const LATENCY: &str = "latency";
/// The custom measure for TSC cycles.
pub const CYCLES: &str = "cycles";

/// A finite number as JSON; `None` for NaN and infinities, which JSON
/// cannot hold.
fn num(v: f64) -> Option<Value> {
    v.is_finite().then(|| json!(v))
}

fn finish(map: Map<String, Value>) -> String {
    let mut out = serde_json::to_string_pretty(&Value::Object(map))
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    out.push('\n');
    out
}

/// One measure: `value` the median, the bounds the min and max, each
/// mapped through `scale`; `None` when the median is not a finite number.
fn measure(stats: &crate::stats::Stats, scale: impl Fn(f64) -> Option<f64>) -> Option<Value> {
    let mut m = Map::new();
    m.insert("value".into(), scale(stats.median).and_then(num)?);
    if let Some(lo) = scale(stats.min).and_then(num) {
        m.insert("lower_value".into(), lo);
    }
    if let Some(hi) = scale(stats.max).and_then(num) {
        m.insert("upper_value".into(), hi);
    }
    Some(Value::Object(m))
}

/// The report's measured scenarios as BMF. The first scenario under a key
/// wins should a key repeat.
pub fn render(report: &Report) -> String {
    let tsc_khz = report.host.tsc_khz;
    let mut map = Map::new();
    for s in &report.scenarios {
        let Some(stats) = s.stats.as_ref().filter(|_| s.is_measured()) else {
            continue;
        };
        let Some(cycles) = measure(stats, Some) else {
            continue;
        };
        let mut measures = Map::new();
        if let Some(ns) = measure(stats, |c| cycles_to_ns(c, tsc_khz)) {
            measures.insert(LATENCY.into(), ns);
        }
        measures.insert(CYCLES.into(), cycles);
        map.entry(s.key()).or_insert(Value::Object(measures));
    }
    finish(map)
}

/// A comparison as BMF: each scenario measured in both runs with a
/// `ratio` measure (new median / old median). Scenarios without a ratio
/// are left out.
pub fn comparison(c: &Comparison) -> String {
    let mut map = Map::new();
    for e in &c.entries {
        if let Some(r) = e.ratio.and_then(num) {
            map.entry(e.scenario.clone())
                .or_insert_with(|| json!({ "ratio": { "value": r } }));
        }
    }
    finish(map)
}
