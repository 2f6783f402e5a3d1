//! Bencher Metric Format: one JSON object keyed by benchmark name (the
//! report key: `name` on trapline, `vmm:name` for a peer), each holding a
//! `latency` measure whose value is the median cycles per iteration and
//! whose bounds are the min and max over the repeats.
//!
//! Bencher's built-in `latency` measure is labelled in nanoseconds; these
//! values are TSC cycles, as everywhere else in the report, so a Bencher
//! project should name the measure's unit accordingly.
//!
//! It covers every scenario of the run, whatever the view: the views pick
//! rows for people, a tracker wants every benchmark under a stable name.
//! Scenarios without statistics (unsupported, failed) are left out, since
//! BMF has no way to say "not measured".

use serde_json::{json, Map, Value};

use crate::compare::Comparison;
use crate::model::Report;

/// The measure every benchmark reports.
pub const MEASURE: &str = "latency";

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

/// The report's measured scenarios as BMF. The first scenario under a key
/// wins should a key repeat.
pub fn render(report: &Report) -> String {
    let mut map = Map::new();
    for s in &report.scenarios {
        let Some(stats) = s.stats.as_ref().filter(|_| s.is_measured()) else {
            continue;
        };
        let Some(value) = num(stats.median) else {
            continue;
        };
        let mut measure = Map::new();
        measure.insert("value".into(), value);
        if let Some(lo) = num(stats.min) {
            measure.insert("lower_value".into(), lo);
        }
        if let Some(hi) = num(stats.max) {
            measure.insert("upper_value".into(), hi);
        }
        map.entry(s.key())
            .or_insert_with(|| json!({ MEASURE: measure }));
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
