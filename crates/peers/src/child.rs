//! Waiting for a child process the lab started (a peer VMM, usually under
//! `timeout`) in a way a stop signal can cut short: a SIGTERM sent to
//! trapline alone does not reach its children, so the wait passes it on.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// How often the wait looks at the child and at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// Runs `cmd` (stdin from /dev/null) to its end and returns its stdout and
/// status, as `Command::output` does; on a stop signal the child gets
/// SIGTERM (which `timeout` passes on to the command it runs) and the wait
/// goes on until it has ended.
pub fn stdout_and_status(cmd: &mut Command) -> std::io::Result<(String, ExitStatus)> {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).spawn()?;
    let mut pipe = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(p) = pipe.as_mut() {
            let _ = p.read_to_end(&mut s);
        }
        String::from_utf8_lossy(&s).into_owned()
    });
    let mut passed_on = false;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if !passed_on && trapline_machine::signals::received().is_some() {
            if let Ok(pid) = libc::pid_t::try_from(child.id()) {
                // SAFETY: kill(2) on our own child's pid, not yet reaped
                // (try_wait returned None), so the pid is still its.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            passed_on = true;
        }
        std::thread::sleep(POLL);
    };
    Ok((reader.join().unwrap_or_default(), status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_returns_the_childs_output_and_status() {
        let (out, st) =
            stdout_and_status(Command::new("sh").args(["-c", "echo hi; exit 3"])).unwrap();
        assert_eq!((out.as_str(), st.code()), ("hi\n", Some(3)));
    }
}
