//! Errors in words: what the OS says ("No such file or directory"),
//! without the "(os error 2)" Rust appends, which means nothing to a user.
//! Every place trapline prints an error passes it through [`clean`]:
//! each crate that prints to stderr (this one, the lab, the binary) has
//! its `eprintln!` stand for [`to_stderr`].

/// Writes `args` to stderr in words ([`clean`]). A failed write is
/// ignored: with stderr gone (`trapline … 2>&1 | head -1`) there is nowhere
/// left to say anything, and std's `eprintln!` would panic and lose the
/// exit status.
pub fn to_stderr(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let text = clean(&args.to_string());
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// An I/O error in words: Rust's text without its `(os error N)` suffix.
pub fn io(e: &std::io::Error) -> String {
    clean(&e.to_string())
}

/// [`io`] starting in lower case ("no such file or directory"), for the
/// end of a sentence that names the file first.
pub fn io_lower(e: &std::io::Error) -> String {
    let text = io(e);
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_lowercase().chain(chars).collect::<String>()
    })
}

/// `text` with every ` (os error N)` taken out (an error that wraps an
/// I/O error shows it wherever the wrapped text sits).
pub fn clean(text: &str) -> String {
    const MARK: &str = " (os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_os_error_number_is_left_out_and_the_words_kept() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(io(&e), "No such file or directory");
        assert_eq!(io_lower(&e), "no such file or directory");
        assert_eq!(
            clean("cannot read guest image 'x': No such file or directory (os error 2); try --mem"),
            "cannot read guest image 'x': No such file or directory; try --mem"
        );
        assert_eq!(
            clean("a: Broken pipe (os error 32), b: Permission denied (os error 13)"),
            "a: Broken pipe, b: Permission denied"
        );
        // Text that only looks like it stays.
        assert_eq!(clean("x (os error y)"), "x (os error y)");
        assert_eq!(clean("x (os error 5"), "x (os error 5");
    }
}
