//! Console input: what is written to `trapline run`'s stdin reaches the
//! guest's COM1 receiver (with seccomp on, the default).
#![cfg(target_arch = "x86_64")]

mod common;

use std::io::Write;
use std::process::Stdio;

use common::{code, kvm_present, stderr, stdout, trapline};

#[test]
fn stdin_bytes_reach_the_guest_uart() {
    if !kvm_present("stdin_bytes_reach_the_guest_uart") {
        return;
    }
    let mut child = trapline()
        .args(["run", "--kernel", "builtin:echo", "--timeout", "120"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trapline");
    // More than the 64-byte FIFO holds: the console waits for the guest.
    let line = "hello from the host ".repeat(5);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let out = stdout(&o);
    // The payload keeps 127 bytes of a line.
    assert!(
        out.contains(&format!("echo: {}", &line[..100])),
        "{out}\n{}",
        stderr(&o)
    );
    assert_eq!(code(&o), 1, "exit(0) is status 1: {out}\n{}", stderr(&o));
}

#[test]
fn a_closed_stdin_leaves_the_guest_running() {
    if !kvm_present("a_closed_stdin_leaves_the_guest_running") {
        return;
    }
    let o = trapline()
        .args(["run", "--kernel", "builtin:hello", "--append", "exit=3"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), (3 << 1) | 1, "{}", stderr(&o));
    assert!(stdout(&o).contains("hello from trapline guest"));
}
