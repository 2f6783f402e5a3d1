//! kvm-unit-tests `vmexit` style: `name cycles` per measured line,
//! `name (skipped)` otherwise.

use crate::fmt::kut_name;

/// One kut line before formatting.
#[derive(Clone, Debug, PartialEq)]
pub struct KutLine {
    /// Scenario or row name (sanitized when printed).
    pub name: String,
    /// Cycles per iteration, `None` when not measured.
    pub cycles: Option<f64>,
}

/// Formats lines: cycles rounded to an integer, negatives clamped to 0.
pub fn lines(lines: &[KutLine]) -> String {
    let mut out = String::new();
    for l in lines {
        let name = kut_name(&l.name);
        match l.cycles.filter(|c| c.is_finite()) {
            Some(c) => out.push_str(&format!("{name} {:.0}\n", c.round().max(0.0))),
            None => out.push_str(&format!("{name} (skipped)\n")),
        }
    }
    out
}
