//! QEMU's value syntax, shared by every option: comma lists (`,,` is a
//! literal comma), `help`/`?`, integers and sizes.

pub(super) fn is_help(v: &str) -> bool {
    matches!(v, "?" | "help")
}

pub(super) fn only(opt: &str, v: &str, allowed: &str, why: &str) -> Result<(), String> {
    if v == allowed {
        Ok(())
    } else {
        Err(format!(
            "unsupported {opt} '{v}': {why} (only {opt} {allowed})"
        ))
    }
}

/// Split a QEMU option list on commas; `,,` is a literal comma.
pub(super) fn split_opts(v: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ',' {
            if chars.peek() == Some(&',') {
                chars.next();
                items.last_mut().unwrap().push(',');
            } else {
                items.push(String::new());
            }
        } else {
            items.last_mut().unwrap().push(c);
        }
    }
    items
}

/// A QEMU integer property: `0x` hex, leading-0 octal, or decimal.
pub(super) fn parse_uint(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// A size in bytes: digits with an optional fraction, then an optional
/// B/K/M/G/T suffix (no suffix: `default_unit`). Exact; `None` when the
/// result is not a whole number of bytes or the text is not a size.
pub(crate) fn parse_size(s: &str, default_unit: u128) -> Option<u128> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let unit: u128 = match suffix.to_ascii_lowercase().as_str() {
        "" => default_unit,
        "b" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = format!("{int}{frac}");
    if digits.is_empty() || digits.len() > 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scaled = digits.parse::<u128>().ok()? * unit;
    let den = 10u128.pow(frac.len() as u32);
    scaled.is_multiple_of(den).then_some(scaled / den)
}
