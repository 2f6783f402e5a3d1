//! The anatomy's HTML chart: one stacked bar per path and VMM (exit,
//! handling, entry), trapline's above the floor's, drawn as plain inline
//! SVG on one scale.

use std::fmt::Write as _;

use super::AnatomyView;
use crate::fmt;
use crate::model::AnatomyPath;
use crate::render::Chart;

/// The legs' colours, in order: exit, handling, entry.
const COLOURS: [&str; 3] = ["#4e79a7", "#f28e2b", "#59a14f"];
const LEGS: [&str; 3] = [
    "exit (guest → VMM)",
    "handling (VMM)",
    "entry (VMM → guest)",
];
const WIDTH: f64 = 960.0;
const LABEL: f64 = 300.0;
const BAR: f64 = 16.0;
const GAP: f64 = 10.0;
const TOP: f64 = 34.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The medians of a row's three legs.
fn legs(p: &AnatomyPath) -> Option<[f64; 3]> {
    Some([
        p.exit?.p50 as f64,
        p.handling?.p50 as f64,
        p.entry?.p50 as f64,
    ])
}

/// The chart: every path with legs, trapline's bar above the floor's.
pub(super) fn chart(v: &AnatomyView<'_>) -> Chart {
    let mut rows: Vec<(&AnatomyPath, [f64; 3])> = v
        .paths()
        .iter()
        .filter_map(|p| Some((p, legs(p)?)))
        .collect();
    // Each path's bars together, trapline's above the floor's.
    let order: Vec<&str> = v.paths().iter().map(|p| p.name.as_str()).collect();
    let rank = |p: &AnatomyPath| order.iter().position(|n| *n == p.name).unwrap_or(0);
    rows.sort_by_key(|(p, _)| (rank(p), !p.is_trapline()));
    let svg = if rows.is_empty() {
        Err("no path was split into legs (see the notes)".to_string())
    } else {
        Ok(svg(&rows))
    };
    let callout = rows
        .iter()
        .filter(|(p, _)| p.is_trapline())
        .filter_map(|(p, l)| {
            let f = legs(v.floor_of(p)?)?;
            let d = l.iter().sum::<f64>() - f.iter().sum::<f64>();
            Some(format!(
                "{}: trapline {} cycles above the floor",
                p.name,
                fmt::cycles(d)
            ))
        })
        .collect();
    Chart {
        title: "Where a user exit's time goes".into(),
        caption: "Each bar is one path's median exit, handling and entry, stacked: trapline \
                  above the raw-KVM floor (a bare VM and a bare KVM_RUN loop). The legs' \
                  medians, so a bar's length is their sum, not the median round trip."
            .into(),
        svg,
        callout,
    }
}

fn svg(rows: &[(&AnatomyPath, [f64; 3])]) -> String {
    let max = rows
        .iter()
        .map(|(_, l)| l.iter().sum::<f64>())
        .fold(1.0, f64::max);
    let scale = (WIDTH - LABEL - 90.0) / max;
    let mut last = "";
    let mut body = String::new();
    let mut y = TOP;
    for (p, l) in rows {
        if p.name != last && !last.is_empty() {
            y += GAP;
        }
        last = &p.name;
        let _ = write!(
            body,
            "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\">{} · {}</text>",
            LABEL - 6.0,
            y + BAR - 4.0,
            esc(&p.name),
            esc(&p.vmm)
        );
        let mut x = LABEL;
        for (i, w) in l.iter().enumerate() {
            let w = w * scale;
            let _ = write!(
                body,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{BAR}\" fill=\"{}\"><title>{} {}: {} cycles</title></rect>",
                COLOURS[i],
                esc(&p.name),
                LEGS[i],
                fmt::cycles(l[i])
            );
            x += w;
        }
        let _ = write!(
            body,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            x + 4.0,
            y + BAR - 4.0,
            fmt::cycles(l.iter().sum())
        );
        y += BAR + 3.0;
    }
    let height = y + 8.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {WIDTH:.0} {height:.0}\" font-family=\"sans-serif\">"
    );
    let mut lx = LABEL;
    for (i, name) in LEGS.iter().enumerate() {
        let _ = write!(
            out,
            "<rect x=\"{lx:.0}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0}\" y=\"18\" font-size=\"12\">{}</text>",
            COLOURS[i],
            lx + 16.0,
            esc(name)
        );
        lx += 170.0;
    }
    out.push_str(&body);
    out.push_str("</svg>");
    out
}
