//! The units values are measured and published in: one enum instead of
//! strings, so a typo is a compile error and every renderer formats a unit
//! the same way. The report file keeps the unit's text (see
//! [`Unit::as_str`]), so saved reports stay readable by older builds.

use serde::{Serialize, Serializer};

/// A unit of a measured, published or derived value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// TSC cycles.
    Cycles,
    /// A unitless ratio, written `x`.
    Ratio,
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Millis,
    /// Microseconds, written `us`.
    Micros,
    /// Nanoseconds.
    Nanos,
    /// Operations per second (IOPS).
    PerSecond,
    /// CPU milliseconds (a footprint goal's unit as shown).
    CpuMillis,
    /// Mebibytes.
    MiB,
    /// A plain count (published cycle counts shown as the source prints
    /// them: grouped integers).
    Count,
}

impl Unit {
    /// Every unit.
    pub const ALL: [Unit; 10] = [
        Unit::Cycles,
        Unit::Ratio,
        Unit::Seconds,
        Unit::Millis,
        Unit::Micros,
        Unit::Nanos,
        Unit::PerSecond,
        Unit::CpuMillis,
        Unit::MiB,
        Unit::Count,
    ];

    /// The unit's text in reports and JSON: `cycles`, `x`, `ms`, …
    pub const fn as_str(self) -> &'static str {
        match self {
            Unit::Cycles => "cycles",
            Unit::Ratio => "x",
            Unit::Seconds => "s",
            Unit::Millis => "ms",
            Unit::Micros => "us",
            Unit::Nanos => "ns",
            Unit::PerSecond => "/s",
            Unit::CpuMillis => "CPU-ms",
            Unit::MiB => "MiB",
            Unit::Count => "count",
        }
    }

    /// The unit as a CSV header's suffix (`median_cycles`, `rtt_us`);
    /// `None` for a plain count, which needs none.
    pub const fn csv_suffix(self) -> Option<&'static str> {
        match self {
            Unit::Cycles => Some("cycles"),
            Unit::Ratio => Some("ratio"),
            Unit::Seconds => Some("s"),
            Unit::Millis => Some("ms"),
            Unit::Micros => Some("us"),
            Unit::Nanos => Some("ns"),
            Unit::PerSecond => Some("per_s"),
            Unit::CpuMillis => Some("cpu_ms"),
            Unit::MiB => Some("mib"),
            Unit::Count => None,
        }
    }

    /// The unit whose text is `s`; `None` for a unit this build does not
    /// know (a report written by a newer lab).
    pub fn parse(s: &str) -> Option<Unit> {
        Unit::ALL.into_iter().find(|u| u.as_str() == s)
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Unit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl PartialEq<Unit> for String {
    fn eq(&self, u: &Unit) -> bool {
        self == u.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips() {
        for u in Unit::ALL {
            assert_eq!(Unit::parse(u.as_str()), Some(u));
        }
        assert_eq!(Unit::parse("furlongs"), None);
        assert_eq!(
            serde_json::to_string(&Unit::Ratio).expect("serializes"),
            "\"x\""
        );
    }
}
