//! trapline beside a peer VMM (`bench --peer qemu`): each scenario both
//! ran, side by side, with the peer's cost as a multiple of trapline's.

use crate::fmt::{cycles, opt};
use crate::model::{Report, ScenarioResult, BASELINE_SCENARIO, TRAPLINE_VMM};
use crate::render::grid::{Align, Grid, Row};

/// The figure compared: net of each VMM's own noop when both have one
/// (gross for the noop itself), else the gross medians; and which it is.
fn figures(t: &ScenarioResult, p: &ScenarioResult) -> Option<(f64, f64, &'static str)> {
    match (&t.net, &p.net) {
        (Some(tn), Some(pn)) if t.name != BASELINE_SCENARIO => Some((tn.median, pn.median, "net")),
        _ => Some((t.median()?, p.median()?, "gross")),
    }
}

/// The side-by-side table for `peer`, or `None` when the report has no row
/// of it.
pub(crate) fn grid(report: &Report, peer: &str) -> Option<(String, Grid)> {
    use Align::{Left, Right};
    let mut g = Grid::new(&[
        ("scenario", Left),
        ("trapline cyc", Right),
        ("peer cyc", Right),
        ("peer/trapline", Right),
        ("basis", Left),
    ]);
    g.columns[2].title = format!("{peer} cyc");
    g.columns[2].csv_title = format!("{peer}_cycles");
    g.columns[3].title = format!("{peer}/trapline");
    g.columns[3].csv_title = format!("{peer}_over_trapline_ratio");
    for t in report.scenarios.iter().filter(|s| s.vmm == TRAPLINE_VMM) {
        let Some(p) = report.scenario(peer, &t.name) else {
            continue;
        };
        if !(t.is_measured() && p.is_measured()) {
            let why = [(TRAPLINE_VMM, t), (peer, p)]
                .iter()
                .filter(|(_, s)| !s.is_measured())
                .map(|(vmm, s)| {
                    format!(
                        "{vmm}: {}{}",
                        s.status,
                        s.reason
                            .as_deref()
                            .map_or_else(String::new, |r| format!(" ({r})"))
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            g.push(Row::spanned(vec![t.name.clone()], why));
            continue;
        }
        let Some((tv, pv, basis)) = figures(t, p) else {
            continue;
        };
        g.push(Row::cells(vec![
            t.name.clone(),
            cycles(tv),
            cycles(pv),
            // A ratio of a non-positive net (noise under load) means nothing.
            opt((tv > 0.0 && pv > 0.0).then(|| pv / tv), |r| {
                format!("{r:.2}x")
            }),
            basis.to_string(),
        ]));
    }
    (!g.rows.is_empty()).then(|| (format!("trapline beside {peer}"), g))
}
