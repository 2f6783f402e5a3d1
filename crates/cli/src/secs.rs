//! A number of seconds on the command line (`--timeout SECS` of `bench`
//! and the experiments).

use std::time::Duration;

/// `s` as a duration: more than 0 and at most 86400 seconds (a day).
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(v > 0.0 && v <= 86_400.0) {
        return Err(format!("'{s}': must be more than 0 and at most 86400"));
    }
    Ok(Duration::from_secs_f64(v))
}
