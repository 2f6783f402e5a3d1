//! Calendar arithmetic and the RTC's number encodings (BCD/binary, 12/24 h).
//!
//! The RTC keeps the guest's time as nanoseconds since 1970-01-01 00:00 (the
//! host's UTC at start, then whatever the guest sets); the calendar fields are
//! derived from it on every read, so there is no ticking state to keep.

/// Nanoseconds in a second.
pub const NS_PER_SEC: u64 = 1_000_000_000;
/// Seconds in a day.
pub const SECS_PER_DAY: u64 = 86_400;

/// A broken-down date and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime {
    /// Full year (e.g. 2026).
    pub year: u32,
    /// 1..=12.
    pub month: u8,
    /// 1..=31.
    pub day: u8,
    /// 0..=23.
    pub hour: u8,
    /// 0..=59.
    pub minute: u8,
    /// 0..=59.
    pub second: u8,
    /// 1 = Sunday .. 7 = Saturday, the MC146818's convention.
    pub weekday: u8,
}

/// Days since 1970-01-01 to (year, month, day) (proleptic Gregorian;
/// H. Hinnant's `civil_from_days`, restricted to dates from 1970 on).
fn civil_from_days(days: u64) -> (u32, u8, u8) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = (yoe + era * 400 + u64::from(month <= 2)) as u32;
    (year, month, day)
}

/// (year, month, day) to days since 1970-01-01. Out-of-range days roll
/// over into the next month (Feb 31 is Mar 3), like `mktime`; dates
/// before 1970 clamp to 1970-01-01.
fn days_from_civil(year: u32, month: u8, day: u8) -> u64 {
    let month = u64::from(month.clamp(1, 12));
    let y = u64::from(year) - u64::from(month <= 2);
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + u64::from(day.max(1)) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).saturating_sub(719_468)
}

impl DateTime {
    /// The calendar time `secs` seconds after the epoch.
    pub fn from_secs(secs: u64) -> DateTime {
        let days = secs / SECS_PER_DAY;
        let rem = secs % SECS_PER_DAY;
        let (year, month, day) = civil_from_days(days);
        DateTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u8,
            minute: (rem / 60 % 60) as u8,
            second: (rem % 60) as u8,
            // 1970-01-01 was a Thursday (5 with Sunday = 1).
            weekday: ((days + 4) % 7 + 1) as u8,
        }
    }

    /// Seconds after the epoch (the weekday is ignored: it follows from
    /// the date).
    pub fn to_secs(&self) -> u64 {
        days_from_civil(self.year, self.month, self.day) * SECS_PER_DAY
            + u64::from(self.hour.min(23)) * 3600
            + u64::from(self.minute.min(59)) * 60
            + u64::from(self.second.min(59))
    }
}

/// Encode a 0..=99 value as register B's DM bit says: BCD or binary.
pub fn encode(value: u8, binary: bool) -> u8 {
    if binary {
        value
    } else {
        (value / 10) << 4 | (value % 10)
    }
}

/// Decode a register value; `None` for a BCD byte with a digit above 9.
pub fn decode(raw: u8, binary: bool) -> Option<u8> {
    if binary {
        return Some(raw);
    }
    let (hi, lo) = (raw >> 4, raw & 0xf);
    (hi <= 9 && lo <= 9).then_some(hi * 10 + lo)
}

/// The hours register for a 0..=23 hour: 24 h, or 1..=12 with bit 7 = PM.
pub fn encode_hour(hour: u8, binary: bool, h24: bool) -> u8 {
    if h24 {
        return encode(hour, binary);
    }
    let pm = if hour >= 12 { 0x80 } else { 0 };
    let h12 = match hour % 12 {
        0 => 12,
        h => h,
    };
    encode(h12, binary) | pm
}

/// Decode an hours register to 0..=23; `None` when it is not a valid hour
/// in the current mode.
pub fn decode_hour(raw: u8, binary: bool, h24: bool) -> Option<u8> {
    if h24 {
        return decode(raw, binary).filter(|h| *h < 24);
    }
    let h12 = decode(raw & 0x7f, binary).filter(|h| (1..=12).contains(h))?;
    let pm = raw & 0x80 != 0;
    Some(h12 % 12 + if pm { 12 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_known_dates_round_trip() {
        let t = DateTime::from_secs(0);
        assert_eq!((t.year, t.month, t.day, t.weekday), (1970, 1, 1, 5));
        // 2026-11-25 03:04:05 UTC, a Wednesday.
        let secs = 1_795_575_845;
        let t = DateTime::from_secs(secs);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second, t.weekday),
            (2026, 11, 25, 3, 4, 5, 4)
        );
        assert_eq!(t.to_secs(), secs);
        // A leap day.
        let leap = DateTime {
            year: 2024,
            month: 2,
            day: 29,
            hour: 23,
            minute: 59,
            second: 59,
            weekday: 0,
        };
        let back = DateTime::from_secs(leap.to_secs());
        assert_eq!((back.month, back.day, back.weekday), (2, 29, 5));
    }

    #[test]
    fn invalid_days_roll_over() {
        let t = DateTime {
            year: 2023,
            month: 2,
            day: 31,
            hour: 0,
            minute: 0,
            second: 0,
            weekday: 0,
        };
        let r = DateTime::from_secs(t.to_secs());
        assert_eq!((r.month, r.day), (3, 3));
    }

    #[test]
    fn bcd_binary_and_12_hour_encodings() {
        assert_eq!(encode(59, false), 0x59);
        assert_eq!(encode(59, true), 59);
        assert_eq!(decode(0x59, false), Some(59));
        assert_eq!(decode(0x5a, false), None);
        assert_eq!(encode_hour(0, false, false), 0x12);
        assert_eq!(encode_hour(12, false, false), 0x92);
        assert_eq!(encode_hour(13, true, false), 0x81);
        assert_eq!(encode_hour(23, false, true), 0x23);
        assert_eq!(decode_hour(0x12, false, false), Some(0));
        assert_eq!(decode_hour(0x92, false, false), Some(12));
        assert_eq!(decode_hour(0x81, true, false), Some(13));
        assert_eq!(decode_hour(0x13, false, false), None);
        assert_eq!(decode_hour(0x24, false, true), None);
    }
}
