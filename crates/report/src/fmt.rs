//! Number and text formatting shared by the renderers.

use crate::unit::Unit;

/// Rounds to an integer and groups thousands with commas: `12,345`.
pub fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let r = v.round();
    let digits = format!("{:.0}", r.abs());
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if r < 0.0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Cycles for display: grouped integers from 100 up, one decimal below.
pub fn cycles(v: f64) -> String {
    if v.is_finite() && v.abs() < 100.0 {
        format!("{v:.1}")
    } else {
        grouped(v)
    }
}

/// Cycles in at most seven columns: exact up to 100k (`64,756`), then
/// three significant digits (`763k`, `18.4M`): beyond that the spread is
/// far wider than the digits dropped.
pub fn compact_cycles(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        return "-".to_string();
    }
    if a < 1e5 {
        return cycles(v);
    }
    let (x, unit) = if a < 1e6 {
        (v / 1e3, "k")
    } else if a < 1e9 {
        (v / 1e6, "M")
    } else {
        (v / 1e9, "G")
    };
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$}{unit}")
}

/// An optional value, `–` when absent.
pub fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "–".to_string())
}

/// Nanoseconds as cycles are shown: grouped integers from 100 up
/// (`140,073`), one decimal below (`87.3`).
pub fn ns(v: f64) -> String {
    cycles(v)
}

/// A raw number for machine-readable output: shortest round-trip form.
pub fn raw(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

/// Exits per iteration as `kind=1.00 kind=0.02`, skipping zeros.
pub fn exits(map: &std::collections::BTreeMap<String, f64>) -> String {
    map.iter()
        .filter(|(_, v)| **v != 0.0)
        .map(|(k, v)| format!("{k}={v:.2}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A count: grouped when whole (`33`, `1,234`), two significant digits at
/// least otherwise (`33.5`, a median between two counts).
fn count(v: f64) -> String {
    if v.fract() == 0.0 {
        grouped(v)
    } else {
        significant(v)
    }
}

/// A derived value's number without its unit (see [`unit_suffix`]).
fn derived_number(v: f64, unit: Option<Unit>) -> String {
    match unit {
        Some(Unit::Ratio) => significant(v),
        Some(Unit::Cycles) => cycles(v),
        Some(Unit::Count) => count(v),
        Some(Unit::Micros | Unit::PerSecond) => significant(v),
        _ => format!("{v:.2}"),
    }
}

/// How a unit follows a number as people write it: `x` and `/s` close up,
/// cycles are `cyc` as in the tables' headers, microseconds `µs`, a count
/// has none.
fn unit_suffix(unit: Option<Unit>, text: &str) -> String {
    match unit {
        Some(Unit::Ratio) => "x".to_string(),
        Some(Unit::PerSecond) => "/s".to_string(),
        Some(Unit::Cycles) => " cyc".to_string(),
        Some(Unit::Micros) => " µs".to_string(),
        Some(Unit::Count) => String::new(),
        Some(u) => format!(" {u}"),
        None => format!(" {text}"),
    }
}

/// A derived value with its unit as people write it: `6,000 cyc`, `1.50x`,
/// `458 µs`, `33` (a count), `4.60 MiB`.
pub fn derived_value(value: f64, unit: &str) -> String {
    let u = Unit::parse(unit);
    match u {
        Some(Unit::Ratio) => format!("{value:.2}x"),
        _ => format!("{}{}", derived_number(value, u), unit_suffix(u, unit)),
    }
}

/// A derived value's range with its unit once: `5,400..6,600 cyc`,
/// `0.61..1.58x`, `0.61x..` (open at the top).
pub fn range(low: f64, high: Option<f64>, unit: &str) -> String {
    let u = Unit::parse(unit);
    let bare = |v: f64| derived_number(v, u);
    let suffix = unit_suffix(u, unit);
    match high {
        Some(h) => format!("{}..{}{suffix}", bare(low), bare(h)),
        None => format!("{}{suffix}..", bare(low)),
    }
}

/// A value with its unit, as a finding states it: `1.50x`, `9.09us`,
/// `6,000 cycles`, `2.25 ms`.
pub fn with_unit(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Ratio => ratio_x(v),
        Unit::Micros => format!("{}us", micros(v)),
        Unit::Cycles => format!("{} cycles", cycles(v)),
        u => format!("{v:.2} {u}"),
    }
}

/// A value in a table cell, its unit in the column header: `1,234`,
/// `1.50x`, `12.809`, `9.09`.
pub fn cell(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Cycles | Unit::Nanos => cycles(v),
        Unit::Ratio => ratio_x(v),
        Unit::Seconds => seconds(v),
        Unit::Micros => micros(v),
        Unit::PerSecond => format!("{v:.0}"),
        Unit::Count => grouped(v),
        u => format!("{v:.2} {u}"),
    }
}

/// A unitless ratio: `0.0014x`, `0.33x`, `1.93x`, `12.5x`, `1,281x`;
/// `–` when not finite.
pub fn ratio_x(v: f64) -> String {
    if v.is_finite() {
        format!("{}x", significant(v))
    } else {
        "–".to_string()
    }
}

/// Two significant digits at least: `0.0014`, `0.33`, `12.5`, `1,281`.
pub fn significant(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        grouped(v)
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.01 || a == 0.0 {
        format!("{v:.2}")
    } else {
        let decimals = (1.0 - a.log10().floor()).clamp(2.0, 12.0) as usize;
        format!("{v:.decimals$}")
    }
}

/// Seconds with at least three decimals and three significant digits:
/// `12.809`, `0.0100`, `0.000123`; `–` when not finite.
pub fn seconds(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    if v == 0.0 {
        return "0.000".to_string();
    }
    let magnitude = v.abs().log10().floor();
    let decimals = (2.0 - magnitude).clamp(3.0, 12.0) as usize;
    format!("{v:.decimals$}")
}

/// A time given in nanoseconds, in the unit that suits it, with three
/// significant digits: `95.3 ns`, `3.52 µs`, `458 µs`, `1.39 ms`.
pub fn time_ns(ns: f64) -> String {
    let a = ns.abs();
    let (v, unit) = if a < 1e3 {
        (ns, "ns")
    } else if a < 1e6 {
        (ns / 1e3, "µs")
    } else if a < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", significant(v))
}

/// Microseconds with two decimals, no unit: `9.09`.
pub fn micros(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "–".to_string()
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A name usable in a kut line: lowercase `[a-z0-9-:]`, anything else `-`.
pub fn kut_name(s: &str) -> String {
    let name: String = s
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == ':' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        "unnamed".to_string()
    } else {
        name
    }
}

/// Shortens `s` to at most `max` characters, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping() {
        assert_eq!(grouped(0.0), "0");
        assert_eq!(grouped(999.4), "999");
        assert_eq!(grouped(1263.0), "1,263");
        assert_eq!(grouped(-1234567.0), "-1,234,567");
        assert_eq!(cycles(12.34), "12.3");
        assert_eq!(cycles(16649.0), "16,649");
    }

    #[test]
    fn units() {
        assert_eq!(ratio_x(1.5039), "1.50x");
        assert_eq!(ratio_x(851.7), "852x");
        assert_eq!(ratio_x(1280.9), "1,281x");
        assert_eq!(ratio_x(12.34), "12.3x");
        assert_eq!(ratio_x(f64::NAN), "–");
        assert_eq!(ratio_x(8.0 / 5602.0), "0.0014x");
        assert_eq!(ratio_x(0.0293), "0.03x");
        assert_eq!(ratio_x(0.0), "0.00x");
        assert_eq!(seconds(12.809), "12.809");
        assert_eq!(seconds(8.517), "8.517");
        assert_eq!(seconds(0.010), "0.0100");
        assert_eq!(seconds(0.000_123_4), "0.000123");
        assert_eq!(seconds(0.0), "0.000");
        assert_eq!(seconds(f64::INFINITY), "–");
        assert_eq!(micros(9.0909), "9.09");
        assert_eq!(time_ns(95.3), "95.3 ns");
        assert_eq!(time_ns(-3520.1), "-3.52 µs");
        assert_eq!(time_ns(458_070.0), "458 µs");
        assert_eq!(time_ns(1_390_000.0), "1.39 ms");
    }

    #[test]
    fn derived_values_as_people_write_them() {
        assert_eq!(derived_value(33.0, "count"), "33");
        assert_eq!(derived_value(1234.0, "count"), "1,234");
        assert_eq!(derived_value(33.5, "count"), "33.5");
        assert_eq!(derived_value(458.07, "us"), "458 µs");
        assert_eq!(derived_value(9.0909, "us"), "9.09 µs");
        assert_eq!(derived_value(6000.0, "cycles"), "6,000 cyc");
        assert_eq!(derived_value(1.5039, "x"), "1.50x");
        assert_eq!(derived_value(4.6, "MiB"), "4.60 MiB");
        assert_eq!(derived_value(2.4, "CPU-ms"), "2.40 CPU-ms");
        assert_eq!(derived_value(12345.0, "/s"), "12,345/s");
        assert_eq!(derived_value(2.0, "furlongs"), "2.00 furlongs");
        assert_eq!(range(5880.0, Some(6120.0), "cycles"), "5,880..6,120 cyc");
        assert_eq!(range(0.61, Some(1.58), "x"), "0.61..1.58x");
        assert_eq!(range(0.61, None, "x"), "0.61x..");
        assert_eq!(range(30.0, Some(36.0), "count"), "30..36");
        assert_eq!(range(440.2, Some(470.9), "us"), "440..471 µs");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            html_escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(kut_name("Qemu:PIO_out x"), "qemu:pio-out-x");
        assert_eq!(truncate("abcdef", 4), "abc…");
    }
}
