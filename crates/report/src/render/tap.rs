//! TAP version 13, as kvm-unit-tests' `run_tests.sh -t` writes it: a plan,
//! then one test point per scenario of the run (whatever the view, like
//! BMF): `ok N - key # 1234 cycles` when measured, `not ok N - key` with
//! a YAML block giving the reason when it failed, `ok N - key # SKIP
//! reason` when unsupported.

use std::fmt::Write as _;

use crate::compare::Comparison;
use crate::model::{Report, Status};

/// Escapes a test point description: `#` would start a directive and `\`
/// is the escape itself; a line break would end the point.
fn description(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '#' => out.push_str("\\#"),
            '\r' | '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A directive's or comment's text on one line.
fn one_line(s: &str) -> String {
    s.split(['\r', '\n'])
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One test point before numbering.
enum Point {
    /// Passed, with an optional comment after `#`.
    Ok(String, Option<String>),
    /// Failed, with the message for the YAML block.
    NotOk(String, String),
    /// Skipped, with the reason.
    Skip(String, String),
}

/// The TAP stream: header, plan, points.
fn stream(points: &[Point], empty_reason: &str) -> String {
    let mut out = String::from("TAP version 13\n");
    if points.is_empty() {
        let _ = writeln!(out, "1..0 # SKIP {empty_reason}");
        return out;
    }
    let _ = writeln!(out, "1..{}", points.len());
    for (i, p) in points.iter().enumerate() {
        let n = i + 1;
        match p {
            Point::Ok(name, comment) => {
                let comment = comment.as_deref().map(|c| format!(" # {}", one_line(c)));
                let _ = writeln!(
                    out,
                    "ok {n} - {}{}",
                    description(name),
                    comment.unwrap_or_default()
                );
            }
            Point::Skip(name, reason) => {
                let _ = writeln!(
                    out,
                    "ok {n} - {} # SKIP {}",
                    description(name),
                    one_line(reason)
                );
            }
            Point::NotOk(name, message) => {
                // A JSON string is a valid YAML double-quoted scalar: quotes,
                // colons and line breaks in the reason stay inside it.
                let quoted = serde_json::to_string(message)
                    .unwrap_or_else(|_| "\"unprintable reason\"".to_string());
                let _ = writeln!(
                    out,
                    "not ok {n} - {}\n  ---\n  message: {quoted}\n  severity: fail\n  ...",
                    description(name)
                );
            }
        }
    }
    out
}

/// Median cycles as the point's comment: an integer, as kut prints it.
fn cycles(median: Option<f64>) -> Option<String> {
    median
        .filter(|c| c.is_finite())
        .map(|c| format!("{:.0} cycles", c.round().max(0.0)))
}

/// The report as TAP: one point per scenario.
pub fn render(report: &Report) -> String {
    let points: Vec<Point> = report
        .scenarios
        .iter()
        .map(|s| {
            let reason = || s.reason.clone().unwrap_or_else(|| s.status.to_string());
            match s.status {
                Status::Ok => Point::Ok(s.key(), cycles(s.median())),
                Status::Unsupported => Point::Skip(s.key(), reason()),
                Status::Failed => Point::NotOk(s.key(), reason()),
            }
        })
        .collect();
    stream(&points, "no scenarios in this report")
}

/// A comparison as TAP, a regression gate: a scenario significantly slower
/// than in the old run is `not ok`; one not measured in both, or in only
/// one run, is skipped.
pub fn comparison(c: &Comparison) -> String {
    let mut points: Vec<Point> = c
        .entries
        .iter()
        .map(|e| {
            let ratio = e
                .ratio
                .map_or_else(|| "–".to_string(), |r| format!("{r:.2}x"));
            if e.significant && e.delta > 0.0 {
                Point::NotOk(
                    e.scenario.clone(),
                    format!(
                        "slower: {:.0} cycles, was {:.0} ({ratio}), beyond the spread",
                        e.new_median, e.old_median
                    ),
                )
            } else {
                Point::Ok(e.scenario.clone(), Some(format!("new/old {ratio}")))
            }
        })
        .collect();
    points.extend(c.unmeasured.iter().map(|u| {
        Point::Skip(
            u.scenario.clone(),
            format!("not comparable: old {}, new {}", u.old_status, u.new_status),
        )
    }));
    points.extend(
        c.only_new
            .iter()
            .map(|k| Point::Skip(k.clone(), "only in the new run".into())),
    );
    points.extend(
        c.only_old
            .iter()
            .map(|k| Point::Skip(k.clone(), "only in the old run".into())),
    );
    stream(&points, "no scenarios to compare")
}
