//! Standard output for everything trapline prints there (reports, lists,
//! tables, help): a reader that went away (`trapline report … | head`) ends
//! the program quietly with [`status::CLOSED_PIPE`]; any other failure to
//! write (a full disk, `> /dev/full`) is one line on stderr and
//! [`status::VMM_ERROR`]. Never a panic, which is what `print!` does.
//!
//! [`outln!`](crate::outln) and [`out!`](crate::out!) are `println!` and
//! `print!` through [`write_fmt`].
//!
//! Standard error too: [`error_line`] is what each crate's `eprintln!`
//! stands for. It prints the line with every "(os error N)" taken out
//! (errors in words, see [`crate::words`]), and a closed stderr is not a
//! panic.

use std::io::{self, Write};

use crate::status;

/// Writes to stdout, or ends the program as the module says.
pub fn write_fmt(args: std::fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        drop(out);
        end_on(&e);
    }
}

/// Writes `text` to stdout and flushes it, or ends the program as the
/// module says.
pub fn write_all(text: &str) {
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        drop(out);
        end_on(&e);
    }
}

/// One line on stderr, in words; a failed write is ignored (there is
/// nowhere left to say it): [`crate::words::to_stderr`].
pub fn error_line(args: std::fmt::Arguments<'_>) {
    crate::words::to_stderr(format_args!("{args}\n"));
}

/// Ends the program after a failed write to stdout.
fn end_on(e: &io::Error) -> ! {
    let code = failure_status(e);
    if code != status::CLOSED_PIPE {
        error_line(format_args!(
            "trapline: error: cannot write to standard output: {}",
            crate::words::io(e)
        ));
    }
    std::process::exit(code)
}

/// The status for a failed write to stdout: a closed pipe is the reader's
/// choice, not trapline's failure, so it is quiet (see [`status::CLOSED_PIPE`]).
pub fn failure_status(e: &io::Error) -> i32 {
    if e.kind() == io::ErrorKind::BrokenPipe {
        status::CLOSED_PIPE
    } else {
        status::VMM_ERROR
    }
}

/// `println!` that ends the program quietly on a closed pipe (see
/// [the `out` module](mod@crate::out)).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::out::write_fmt(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that ends the program quietly on a closed pipe (see
/// [the `out` module](mod@crate::out)).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write_fmt(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_141_and_anything_else_a_host_failure() {
        let pipe = io::Error::from_raw_os_error(libc::EPIPE);
        assert_eq!(failure_status(&pipe), 141);
        let full = io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(failure_status(&full), status::VMM_ERROR);
    }
}
