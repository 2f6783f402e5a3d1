//! Every file or stream trapline reads into memory has a limit, and
//! endless or huge inputs fail with a clear error before the host's memory
//! is at risk: /dev/zero and an endless FIFO as kernel, initrd or saved
//! report, an oversized --append, an oversized report. Each case is a real
//! process, watched with a hang guard, its peak memory taken from wait4.
//! None needs /dev/kvm: every check comes before it is opened.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

/// Far more than any case may take; only a hang gets near it.
const HANG_GUARD: Duration = Duration::from_secs(120);
/// The most any case may use: guest RAM is 128 MiB by default, and a
/// stream is read no further than the limit.
const MAX_RSS_KIB: i64 = 400 * 1024;

/// What one run did.
struct Ended {
    status: i32,
    stderr: String,
    max_rss_kib: i64,
}

/// Runs `cmd` to its end (killed at [`HANG_GUARD`]), with its exit status
/// and its peak resident memory (wait4's rusage: this child alone).
fn run_measured(cmd: &mut Command) -> Ended {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let pid = child.id() as libc::pid_t;
    let give_up = Instant::now() + HANG_GUARD;
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: rusage is plain data that wait4 fills.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: our own child; valid pointers to a status and a rusage.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        assert!(r == 0, "wait4: {}", std::io::Error::last_os_error());
        if Instant::now() > give_up {
            let _ = child.kill();
            panic!("{cmd:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The child is reaped; keep std from waiting for it again.
    std::mem::forget(child);
    Ended {
        status: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        },
        stderr: reader.join().unwrap(),
        max_rss_kib: usage.ru_maxrss,
    }
}

/// A FIFO at a fresh path, with a writer thread that fills it for as long
/// as a reader keeps it open (and blocks, harmlessly, if none ever does).
fn endless_fifo(name: &str) -> PathBuf {
    let path = tmp(name);
    let _ = std::fs::remove_file(&path);
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let p = path.clone();
    std::thread::spawn(move || {
        use std::io::Write as _;
        // Blocks until the reader opens it; writes until it is closed
        // (EPIPE: Rust ignores SIGPIPE).
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&p) {
            let chunk = vec![0x5au8; 1 << 16];
            while f.write_all(&chunk).is_ok() {}
        }
    });
    path
}

fn assert_refused(e: &Ended, status: i32, words: &[&str], what: &str) {
    assert_eq!(e.status, status, "{what}: {}", e.stderr);
    for w in words {
        assert!(e.stderr.contains(w), "{what}: no {w:?} in: {}", e.stderr);
    }
    assert_eq!(
        e.stderr.lines().count(),
        1,
        "{what}: one line: {}",
        e.stderr
    );
    assert!(
        !e.stderr.contains("os error") && !e.stderr.contains("panicked"),
        "{what}: {}",
        e.stderr
    );
    assert!(
        e.max_rss_kib < MAX_RSS_KIB,
        "{what}: peak RSS {} KiB",
        e.max_rss_kib
    );
}

fn trapline_run(args: &[&str]) -> Command {
    let mut cmd = trapline();
    cmd.args(["run", "--serial", "none", "--timeout", "30"])
        .args(args);
    cmd
}

#[test]
fn character_devices_are_refused_by_name_as_kernel_and_initrd() {
    for dev in ["/dev/zero", "/dev/urandom"] {
        let e = run_measured(&mut trapline_run(&["--kernel", dev]));
        assert_refused(
            &e,
            4,
            &["cannot read guest image", dev, "character device"],
            dev,
        );
        let e = run_measured(&mut trapline_run(&[
            "--kernel",
            "builtin:hello",
            "--initrd",
            dev,
        ]));
        assert_refused(&e, 4, &["cannot read initrd", dev, "character device"], dev);
    }
}

#[test]
fn an_endless_fifo_is_read_to_the_guest_ram_and_no_further() {
    // 32 MiB of RAM: a light test, also on an emulated host.
    let k = endless_fifo("endless-kernel");
    let e = run_measured(&mut trapline_run(&[
        "--kernel",
        k.to_str().unwrap(),
        "--mem",
        "32",
    ]));
    assert_refused(
        &e,
        4,
        &[
            "cannot read guest image",
            "32 MiB",
            "read no further",
            "--mem",
        ],
        "kernel FIFO",
    );
    // The initrd shares the RAM with the kernel: less is left for it.
    let i = endless_fifo("endless-initrd");
    let e = run_measured(&mut trapline_run(&[
        "--kernel",
        "builtin:hello",
        "--mem",
        "32",
        "--initrd",
        i.to_str().unwrap(),
    ]));
    assert_refused(
        &e,
        4,
        &[
            "cannot read initrd",
            "MiB of guest RAM left for it",
            "read no further",
        ],
        "initrd FIFO",
    );
}

#[test]
fn a_file_larger_than_guest_ram_is_refused_from_its_length() {
    // Sparse: 200 MiB long, nothing written.
    let big = tmp("sparse-200m.elf");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let e = run_measured(&mut trapline_run(&["--kernel", big.to_str().unwrap()]));
    assert_refused(
        &e,
        4,
        &["200 MiB", "128 MiB of guest RAM", "--mem"],
        "200 MiB kernel",
    );
    let _ = std::fs::remove_file(&big);
}

// arm64 puts the command line in the device tree, whose own limit the
// loader checks.
#[cfg(target_arch = "x86_64")]
#[test]
fn an_oversized_append_is_a_usage_error_naming_the_limit() {
    let long = "a".repeat(100_000);
    let e = run_measured(&mut trapline_run(&[
        "--kernel",
        "builtin:hello",
        "--append",
        &long,
    ]));
    assert_refused(&e, 2, &["--append is 100000 bytes", "8191"], "--append");
    // QEMU's spelling goes the same way (after opening KVM, as QEMU).
    if !kvm_present("-append in QEMU's spelling") {
        return;
    }
    let e = run_measured(trapline().args([
        "-kernel",
        "builtin:hello",
        "-append",
        &long,
        "-display",
        "none",
    ]));
    assert_eq!(e.status, 2, "{}", e.stderr);
    assert!(e.stderr.contains("8191"), "{}", e.stderr);
}

#[test]
fn oversized_or_endless_saved_reports_are_refused() {
    let big = tmp("sparse-report.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let fifo = endless_fifo("endless-report.json");
    let cases: [(&str, &Path); 3] = [
        ("a 200 MiB file", &big),
        ("/dev/zero", Path::new("/dev/zero")),
        ("an endless FIFO", &fifo),
    ];
    for (what, path) in cases {
        let e = run_measured(trapline().arg("report").arg(path));
        assert_refused(
            &e,
            2,
            &["larger than 128 MiB", &path.display().to_string()],
            what,
        );
    }
    // As the old run of `bench --compare` too, before anything is measured.
    let fifo = endless_fifo("endless-old.json");
    let e = run_measured(
        trapline()
            .args(["bench", "--no-results", "--compare"])
            .arg(&fifo),
    );
    assert_refused(
        &e,
        2,
        &["--compare", "larger than 128 MiB"],
        "bench --compare FIFO",
    );
    let _ = std::fs::remove_file(&big);
}
