//! One scenario's recorded distribution as an inline SVG histogram: the
//! histogram's own buckets as bars on a log-scale value axis, counts on a
//! log scale (a tail of single iterations stays visible beside a peak of
//! thousands), and lines at p50, p99 and p99.9.

use std::fmt::Write as _;

use crate::fmt::compact_cycles;
use crate::model::Tails;

const W: f64 = 720.0;
const H: f64 = 230.0;
const LEFT: f64 = 52.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 18.0;
const BOTTOM: f64 = 38.0;

/// The SVG, or why there is none (nothing recorded).
pub(crate) fn histogram(t: &Tails) -> Result<String, String> {
    let (Some(first), Some(last)) = (t.buckets.first(), t.buckets.last()) else {
        return Err("nothing recorded".into());
    };
    let lo = (first[0].max(1) as f64).log10();
    let hi = ((last[1].saturating_add(1)).max(2) as f64).log10();
    // A narrow distribution still gets a readable axis: at least ±10 %.
    let (lo, hi) = if hi - lo < 0.09 {
        (lo - 0.045, hi + 0.045)
    } else {
        (lo, hi)
    };
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let x = |v: f64| LEFT + (v.max(1.0).log10() - lo) / (hi - lo) * plot_w;
    let top_count = t.buckets.iter().map(|b| b[2]).max().unwrap_or(1).max(1);
    let y_max = ((top_count + 1) as f64).log10();
    let y = |c: f64| TOP + plot_h - ((c + 1.0).log10() / y_max) * plot_h;

    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="sans-serif" font-size="11"><rect x="0" y="0" width="{W}" height="{H}" fill="#fff"/>"##
    );
    // Count axis: powers of ten.
    let mut c = 1u64;
    while c <= top_count {
        let yy = y(c as f64);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="#e4e4e4"/><text x="{}" y="{:.1}" text-anchor="end" fill="#555">{c}</text>"##,
            W - RIGHT,
            LEFT - 4.0,
            yy + 4.0
        );
        c = c.saturating_mul(10);
    }
    for v in value_ticks(lo, hi) {
        let xx = x(v);
        let _ = write!(
            s,
            r##"<line x1="{xx:.1}" x2="{xx:.1}" y1="{TOP}" y2="{:.1}" stroke="#eee"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 14.0,
            compact_cycles(v)
        );
    }
    for [low, high, n] in &t.buckets {
        let (x0, x1) = (x(*low as f64), x(high.saturating_add(1) as f64));
        let yy = y(*n as f64);
        let _ = write!(
            s,
            r##"<rect x="{x0:.2}" y="{yy:.2}" width="{:.2}" height="{:.2}" fill="#4e79a7"><title>{}–{} cycles: {n}</title></rect>"##,
            (x1 - x0).max(1.0),
            TOP + plot_h - yy,
            low,
            high
        );
    }
    for (name, v, color) in [
        ("p50", t.p50, "#59a14f"),
        ("p99", t.p99, "#f28e2b"),
        ("p99.9", t.p999, "#e15759"),
    ] {
        let xx = x(v as f64);
        // Near the right edge the label goes left of its line.
        let (tx, anchor) = if xx > W - RIGHT - 40.0 {
            (xx - 3.0, "end")
        } else {
            (xx + 3.0, "start")
        };
        let _ = write!(
            s,
            r##"<line x1="{xx:.1}" x2="{xx:.1}" y1="{TOP}" y2="{:.1}" stroke="{color}" stroke-dasharray="4 3"/><text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" fill="{color}">{name}</text>"##,
            TOP + plot_h,
            TOP + 10.0
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{LEFT}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#333">cycles per iteration (log scale)</text><text x="12" y="{:.1}" transform="rotate(-90 12 {:.1})" text-anchor="middle" fill="#333">iterations (log)</text></svg>"##,
        W - RIGHT,
        TOP + plot_h,
        TOP + plot_h,
        LEFT + plot_w / 2.0,
        H - 6.0,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    Ok(s)
}

/// The value axis's ticks: 1, 2, 5 × powers of ten whose log10 lies in
/// `lo..=hi`, in order.
fn value_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    for e in (lo.floor() as i32)..=(hi.ceil() as i32) {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(e);
            let l = v.log10();
            if l >= lo && l <= hi {
                ticks.push(v);
            }
        }
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_draws_its_buckets_and_percentiles() {
        let t = Tails {
            count: 12,
            p50: 1000,
            p99: 5000,
            p999: 5000,
            max: 5000,
            buckets: vec![[992, 999, 10], [4992, 5055, 2]],
            ..Default::default()
        };
        let svg = histogram(&t).unwrap();
        assert_eq!(svg.matches("<rect").count(), 3, "background and two bars");
        assert!(svg.contains(">p99.9<") && svg.contains("992–999 cycles: 10"));
        assert!(histogram(&Tails::default()).is_err());
    }
}
