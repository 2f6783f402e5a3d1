//! Outputs that behave like a Unix tool's, through real processes: a
//! closed pipe on stdout ends every subcommand quietly with status 141
//! (128 + SIGPIPE, what the shell shows for a C tool cut off the same way),
//! never a panic; `trapline run` says once that the guest's output was cut;
//! a console sink that fails (`--serial file:/dev/full`) is reported once
//! and makes the status non-zero.

mod common;
use common::*;

#[path = "../../report/tests/common/mod.rs"]
mod sample;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

use trapline_report::Format;

const CLOSED_PIPE: i32 = 141;

/// `cmd` with stdout a pipe whose reader is already gone, so its first
/// write to stdout fails whatever the pipe's buffer holds.
fn into_closed_pipe(mut cmd: Command) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    cmd.stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn trapline");
    drop(cmd);
    child.wait_with_output().unwrap()
}

/// A pipe that holds one page, so any output longer than that meets the
/// closed pipe once the reader is gone.
fn small_pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
    use std::os::fd::AsRawFd;
    let (reader, writer) = std::io::pipe().unwrap();
    // SAFETY: F_SETPIPE_SZ on a pipe this function owns; no memory passed.
    let r = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    assert!(r >= 4096, "F_SETPIPE_SZ");
    (reader, writer)
}

/// `cmd` with stdout a one-page pipe read up to its first line, then
/// closed (what `| head -1` does). Returns that line.
fn read_one_line_then_close(mut cmd: Command) -> (String, Output) {
    let (reader, writer) = small_pipe();
    cmd.stdout(writer).stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn trapline");
    // The parent's copy of the write end, or the reader never sees EOF.
    drop(cmd);
    // A byte at a time: nothing past the line leaves the pipe.
    let mut line = String::new();
    BufReader::with_capacity(1, reader)
        .read_line(&mut line)
        .unwrap();
    (line, child.wait_with_output().unwrap())
}

/// Ended quietly by the closed pipe: status 141, nothing on stderr.
fn assert_quiet_end(what: &str, o: &Output) {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_eq!(o.status.code(), Some(CLOSED_PIPE), "{what}: {err}");
    assert_eq!(err, "", "{what}: a closed pipe is not an error to report");
}

fn report_cmd(args: &[&str]) -> Command {
    let mut c = trapline();
    c.env("TRAPLINE_KVM", "/nonexistent/kvm")
        .arg("report")
        .args(args);
    c
}

fn cmd(args: &[&str]) -> Command {
    let mut c = trapline();
    c.args(args);
    c
}

#[test]
fn every_subcommand_and_format_ends_quietly_on_a_closed_pipe() {
    let path = tmp("pipe-report.json");
    std::fs::write(&path, sample::full_report().to_json()).unwrap();
    let p = path.to_str().unwrap();
    for format in Format::ALL {
        for view in ["all", "paper", "vmm"] {
            let what = format!("report --format {} --view {view}", format.name());
            let o = into_closed_pipe(report_cmd(&[p, "--format", format.name(), "--view", view]));
            assert_quiet_end(&what, &o);
        }
    }
    assert_quiet_end(
        "report --compare",
        &into_closed_pipe(report_cmd(&[p, "--compare", p])),
    );
    assert_quiet_end(
        "report --compare --format json",
        &into_closed_pipe(report_cmd(&[p, "--compare", p, "--format", "json"])),
    );
    for args in [
        &["bench", "--list"][..],
        &["bench", "--list", "--format", "json"],
        &["bench", "--help"],
        &["--help"],
        &["-h"],
        &["-version"],
        &["--version"],
        &["-V"],
        &["-device", "help"],
        &["run", "--help"],
    ] {
        assert_quiet_end(&args.join(" "), &into_closed_pipe(cmd(args)));
    }
}

#[test]
fn head_dash_1_of_a_long_output_ends_quietly() {
    let path = tmp("pipe-head.json");
    std::fs::write(&path, sample::full_report().to_json()).unwrap();
    let p = path.to_str().unwrap();
    for args in [
        &["--format", "json"][..],
        &["--view", "seeds"],
        &["--verbose"],
        &["--format", "html"],
        &["--compare", p],
    ] {
        let what = format!("report {} | head -1", args.join(" "));
        let mut all = vec![p];
        all.extend_from_slice(args);
        let (first, o) = read_one_line_then_close(report_cmd(&all));
        assert!(!first.is_empty(), "{what}: {}", stderr(&o));
        // Longer than the pipe's page and the line, so the rest meets the
        // closed pipe.
        let whole = report_cmd(&all).output().unwrap();
        assert!(
            whole.stdout.len() > 4096 + 2 * first.len(),
            "{what}: {}",
            whole.stdout.len()
        );
        assert_quiet_end(&what, &o);
    }
    // x86's list is longer than a pipe's page; arm64's is not.
    if cfg!(target_arch = "aarch64") {
        return;
    }
    let (first, o) = read_one_line_then_close(cmd(&["bench", "--list"]));
    assert!(first.contains("noop"), "{first}");
    let whole = cmd(&["bench", "--list"]).output().unwrap();
    assert!(whole.stdout.len() > 8192, "{}", whole.stdout.len());
    assert_quiet_end("bench --list | head -1", &o);
}

#[test]
fn run_to_a_closed_pipe_stops_the_guest_and_says_so_once() {
    if !kvm_present("run_to_a_closed_pipe_stops_the_guest_and_says_so_once") {
        return;
    }
    let stat = tmp("pipe.stat");
    let o = into_closed_pipe(cmd(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--timeout",
        "60",
        &format!("--stat={}", stat.display()),
    ]));
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(CLOSED_PIPE), "{err}");
    assert_eq!(
        err,
        "trapline: error: stdout: the guest's console output could not be written \
         (broken pipe): the run was stopped\n"
    );
    // The profile of the run so far is still written.
    let profile = std::fs::read_to_string(&stat).unwrap();
    assert!(profile.contains("exits reached trapline"), "{profile}");

    // With stderr on the closed pipe too (`2>&1 | head`): the same status,
    // no panic.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = cmd(&["run", "--kernel", "builtin:hello", "--timeout", "60"])
        .stdin(Stdio::null())
        .stderr(writer.try_clone().unwrap())
        .stdout(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(CLOSED_PIPE));
}

/// `| head -1` on a guest that goes on printing: the echo guest (x86)
/// prints "ready", then, once the pipe is closed, the line it is sent.
#[cfg(target_arch = "x86_64")]
#[test]
fn head_dash_1_of_a_guest_that_goes_on_printing_stops_it() {
    if !kvm_present("head_dash_1_of_a_guest_that_goes_on_printing_stops_it") {
        return;
    }
    use std::io::Write as _;
    let mut c = cmd(&["run", "--kernel", "builtin:echo", "--timeout", "60"]);
    c.stdin(Stdio::piped());
    let (reader, writer) = small_pipe();
    c.stdout(writer).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    drop(c);
    let mut reader = BufReader::with_capacity(1, reader);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), "echo: ready");
    drop(reader);
    child.stdin.take().unwrap().write_all(b"more\n").unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(CLOSED_PIPE), "{err}");
    assert_eq!(err.matches("broken pipe").count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_full_serial_file_is_reported_once_with_a_non_zero_status() {
    if !kvm_present("a_full_serial_file_is_reported_once_with_a_non_zero_status") {
        return;
    }
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--serial",
        "file:/dev/full",
        "--timeout",
        "60",
    ]);
    assert_eq!(code(&o), 8, "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "trapline: error: --serial file:/dev/full: the guest's console output could not be \
         written (no space left on device): the run was stopped\n"
    );
    // The QEMU spelling goes the same way (x86's: arm64's needs -machine).
    if cfg!(target_arch = "aarch64") {
        return;
    }
    let o = run(&["-kernel", "builtin:hello", "-serial", "file:/dev/full"]);
    assert_eq!(code(&o), 8, "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("no space left on device").count(), 1);
}

#[test]
fn a_full_stdout_is_one_error_line_and_status_8() {
    let path = tmp("full-report.json");
    std::fs::write(&path, sample::full_report().to_json()).unwrap();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = report_cmd(&[path.to_str().unwrap(), "--format", "json"])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(8), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "trapline: error: cannot write to standard output: No space left on device\n"
    );
}

#[test]
fn with_stderr_on_the_closed_pipe_too_the_status_still_says_what_happened() {
    // `trapline … 2>&1 | head -1`: nowhere is left to write, and the
    // status is the one the run would have had.
    let both_closed = |args: &[&str]| {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut c = cmd(args);
        c.env("TRAPLINE_KVM", "/nonexistent/kvm")
            .stdin(Stdio::null())
            .stderr(writer.try_clone().unwrap())
            .stdout(writer);
        let status = c.status().unwrap();
        drop(c);
        status.code()
    };
    assert_eq!(both_closed(&["bench", "--list"]), Some(CLOSED_PIPE));
    assert_eq!(both_closed(&["report", "/nonexistent/r.json"]), Some(2));
    assert_eq!(both_closed(&["run", "--kernel", "/nonexistent/k"]), Some(4));
    assert_eq!(both_closed(&["run", "--smp", "0"]), Some(2));
    assert_eq!(both_closed(&["-kernel", "/nonexistent/k"]), Some(6));
}
