//! clap's usage errors, reworded for people: trapline's one prefix
//! (`trapline: error:`), flags named as typed (`--smp`, not
//! `'--smp <SMP>'`), and ranges and number errors in words instead of
//! Rust's (`1..=64`, "invalid digit found in string").

/// The first line of a clap error, reworded; the rest (tips, usage) kept.
pub fn in_words(rendered: &str) -> String {
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let mut out = format!("trapline: error: {}\n", reword(first));
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// One error line in words.
fn reword(line: &str) -> String {
    let mut line = unquote_flag(line);
    for (rust, words) in [
        ("invalid digit found in string", "expected a whole number"),
        (
            "cannot parse integer from empty string",
            "expected a whole number",
        ),
        (
            "number too large to fit in target type",
            "the number is too large",
        ),
        (
            "number too small to fit in target type",
            "expected a whole number",
        ),
    ] {
        line = line.replace(rust, words);
    }
    range_in_words(&line)
}

/// `'--smp <SMP>'` → `--smp`.
fn unquote_flag(line: &str) -> String {
    let Some(start) = line.find("'--") else {
        return line.to_string();
    };
    let rest = &line[start + 1..];
    let Some(end) = rest.find('\'') else {
        return line.to_string();
    };
    let flag = rest[..end].split(' ').next().unwrap_or_default();
    format!("{}{flag}{}", &line[..start], &rest[end + 1..])
}

/// `: 0 is not in 1..=64` → `: expected a whole number from 1 to 64`
/// (and `1..` → `of at least 1`).
fn range_in_words(line: &str) -> String {
    let Some(at) = line.find(" is not in ") else {
        return line.to_string();
    };
    let Some(colon) = line[..at].rfind(": ") else {
        return line.to_string();
    };
    let range = &line[at + " is not in ".len()..];
    let words = if let Some((lo, hi)) = range.split_once("..=") {
        format!("expected a whole number from {lo} to {hi}")
    } else if let Some((lo, hi)) = range.split_once("..") {
        // An open range prints as `1..`, or up to the type's maximum.
        match hi.parse::<u128>() {
            Ok(h) if h < u128::from(u32::MAX) => {
                format!(
                    "expected a whole number from {lo} to {}",
                    h.saturating_sub(1)
                )
            }
            _ => format!("expected a whole number of at least {lo}"),
        }
    } else {
        return line.to_string();
    };
    format!("{}: {words}", &line[..colon])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_number_errors_read_as_words() {
        assert_eq!(
            in_words("error: invalid value '0' for '--smp <SMP>': 0 is not in 1..=64\n\nFor more information, try '--help'.\n"),
            "trapline: error: invalid value '0' for --smp: expected a whole number from 1 to 64\n\nFor more information, try '--help'.\n"
        );
        assert_eq!(
            reword("invalid value 'abc' for '--repeat <REPEAT>': invalid digit found in string"),
            "invalid value 'abc' for --repeat: expected a whole number"
        );
        assert_eq!(
            reword("invalid value '5' for '--goal <CYCLES>': 5 is not in 1000.."),
            "invalid value '5' for --goal: expected a whole number of at least 1000"
        );
        assert_eq!(
            reword(
                "invalid value '5' for '--goal <CYCLES>': 5 is not in 1000..18446744073709551615"
            ),
            "invalid value '5' for --goal: expected a whole number of at least 1000"
        );
        assert_eq!(
            reword("unexpected argument '--bogus' found"),
            "unexpected argument --bogus found"
        );
    }
}
