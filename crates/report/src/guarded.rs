//! Arithmetic on values that may be missing or not finite: the answer is
//! `None` rather than NaN or infinity, so no view shows either.

/// `v` when finite.
pub fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// `num / den` when both are finite, `den` is positive and the quotient is
/// finite; never NaN or infinite.
pub fn ratio(num: Option<f64>, den: Option<f64>) -> Option<f64> {
    let (n, d) = (num?, den?);
    if !n.is_finite() || !d.is_finite() || d <= 0.0 {
        return None;
    }
    finite(n / d)
}

/// `a − b` when both are finite.
pub fn difference(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    finite(a? - b?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_guarded() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), Some(1.5));
        assert_eq!(ratio(Some(3.0), Some(0.0)), None);
        assert_eq!(ratio(Some(3.0), Some(-1.0)), None);
        assert_eq!(ratio(None, Some(2.0)), None);
        assert_eq!(ratio(Some(f64::NAN), Some(2.0)), None);
        assert_eq!(ratio(Some(1e308), Some(1e-308)), None);
        assert_eq!(difference(Some(5.0), Some(7.0)), Some(-2.0));
        assert_eq!(difference(Some(5.0), None), None);
    }
}
