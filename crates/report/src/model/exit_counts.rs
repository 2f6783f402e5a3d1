//! [`Sample::exits`](super::Sample::exits) as JSON: a map of the non-zero
//! kinds' names ([`ExitKind::name`]) to their counts, sorted by name. That
//! is exactly what the `BTreeMap<String, u64>` this field used to be wrote,
//! so reports stay byte-identical while the model keeps the counts typed.
//!
//! Reading back, a zero count is accepted (and, being zero, not written
//! again); a name listed twice is an error. A name this build does not know
//! is an error too, not skipped: its counts would silently vanish from
//! `exits_per_iter`, the views and `compare`, so a report from a newer
//! trapline with a new kind says so when loaded (as a
//! [`ReportError::Json`](crate::ReportError::Json), with line and column)
//! rather than rendering a partial picture.

use std::fmt;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserializer, Serializer};
use trapline_bus::{ExitKind, ExitSnapshot};

/// Writes the non-zero counts by name, in name order.
pub fn serialize<S: Serializer>(exits: &ExitSnapshot, serializer: S) -> Result<S::Ok, S::Error> {
    let mut named = exits.nonzero();
    named.sort_unstable_by_key(|&(name, _)| name);
    serializer.collect_map(named)
}

/// Reads a name-to-count map back into a snapshot.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ExitSnapshot, D::Error> {
    deserializer.deserialize_map(CountsVisitor)
}

struct CountsVisitor;

impl<'de> Visitor<'de> for CountsVisitor {
    type Value = ExitSnapshot;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of exit kind names to counts")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ExitSnapshot, A::Error> {
        let mut exits = ExitSnapshot::default();
        let mut seen = [false; ExitKind::ALL.len()];
        while let Some(name) = map.next_key::<String>()? {
            let kind = ExitKind::from_name(&name).ok_or_else(|| {
                A::Error::custom(format_args!(
                    "unknown exit kind {name:?} in a sample's exits (this build knows {}); \
                     was the report written by a newer trapline?",
                    known_names()
                ))
            })?;
            if std::mem::replace(&mut seen[kind as usize], true) {
                return Err(A::Error::custom(format_args!(
                    "exit kind {name:?} is listed twice in a sample's exits"
                )));
            }
            exits = exits.with_count(kind, map.next_value()?);
        }
        Ok(exits)
    }
}

/// Every kind's name, for the unknown-kind message.
fn known_names() -> String {
    ExitKind::ALL.map(ExitKind::name).join(", ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Holder(#[serde(with = "super")] ExitSnapshot);

    fn snapshot(counts: &[(ExitKind, u64)]) -> ExitSnapshot {
        counts
            .iter()
            .fold(ExitSnapshot::default(), |s, &(k, n)| s.with_count(k, n))
    }

    #[test]
    fn writes_what_the_name_map_wrote() {
        // Index order (pio-write, hlt, coalesced-entries, other) is not name
        // order: the output must follow the names, as the BTreeMap did.
        let s = snapshot(&[
            (ExitKind::Other, 4),
            (ExitKind::CoalescedEntries, 7),
            (ExitKind::Hlt, 1),
            (ExitKind::PioWrite, 1000),
            (ExitKind::MmioRead, 0),
        ]);
        let names: BTreeMap<String, u64> = s
            .nonzero()
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect();
        assert_eq!(
            serde_json::to_string_pretty(&Holder(s)).unwrap(),
            serde_json::to_string_pretty(&names).unwrap()
        );
        assert_eq!(
            serde_json::to_string(&Holder(s)).unwrap(),
            r#"{"coalesced-entries":7,"hlt":1,"other":4,"pio-write":1000}"#
        );
        assert_eq!(
            serde_json::to_string(&Holder(ExitSnapshot::default())).unwrap(),
            "{}"
        );
    }

    #[test]
    fn reads_back_what_it_wrote() {
        let s = snapshot(&[(ExitKind::UnmappedMmio, 2), (ExitKind::FastPort, 9)]);
        let text = serde_json::to_string(&Holder(s)).unwrap();
        assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), Holder(s));
    }

    #[test]
    fn a_zero_count_reads_as_absent() {
        let h: Holder = serde_json::from_str(r#"{"hlt": 0, "pio-read": 3}"#).unwrap();
        assert_eq!(h, Holder(snapshot(&[(ExitKind::PioRead, 3)])));
    }

    #[test]
    fn an_unknown_kind_is_an_error_naming_it() {
        let err = serde_json::from_str::<Holder>(r#"{"pio-write": 1, "warp-drive": 2}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown exit kind \"warp-drive\""), "{err}");
        assert!(err.contains("knows pio-read, pio-write, "), "{err}");
        assert!(err.contains("newer trapline"), "{err}");
    }

    #[test]
    fn a_kind_listed_twice_is_an_error() {
        let err = serde_json::from_str::<Holder>(r#"{"hlt": 1, "hlt": 2}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"hlt\" is listed twice"), "{err}");
    }

    #[test]
    fn counts_must_be_unsigned_integers() {
        assert!(serde_json::from_str::<Holder>(r#"{"hlt": -1}"#).is_err());
        assert!(serde_json::from_str::<Holder>(r#"{"hlt": "1"}"#).is_err());
        assert!(serde_json::from_str::<Holder>(r#"["hlt"]"#).is_err());
    }
}
