//! Every thread of a running `trapline run` is under a seccomp filter, as
//! the kernel reports it (`Seccomp: 2` in /proc/<pid>/task/*/status): the
//! main thread, each vCPU, the console's stdin reader, the RTC's timer
//! thread and the virtio notify worker. On x86_64 and arm64 alike (the
//! emulated ARM64 host of scripts/arm64/test.sh runs it there); skips
//! loudly without /dev/kvm.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{kvm_present, tmp, trapline};

/// The RTC's timer thread, by the name the machine gives it.
#[cfg(target_arch = "x86_64")]
const RTC_THREAD: &str = "rtc-timer";
#[cfg(target_arch = "aarch64")]
const RTC_THREAD: &str = "pl031-timer";

/// (name, seccomp mode) of every thread of process `pid`.
fn thread_modes(pid: u32) -> Vec<(String, Option<u32>)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| {
            let dir = t.ok()?.path();
            let name = std::fs::read_to_string(dir.join("comm")).ok()?;
            let status = std::fs::read_to_string(dir.join("status")).ok()?;
            let mode = status
                .lines()
                .find_map(|l| l.strip_prefix("Seccomp:"))
                .and_then(|v| v.trim().parse().ok());
            Some((name.trim().to_owned(), mode))
        })
        .collect()
}

/// Kills the child it holds when dropped, so a failed assertion leaves no VM.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn every_thread_of_a_running_vm_is_in_seccomp_filter_mode() {
    if !kvm_present("every_thread_of_a_running_vm_is_in_seccomp_filter_mode") {
        return;
    }
    let disk = tmp("seccomp-threads-disk.img");
    std::fs::write(&disk, vec![0u8; 64 * 1024]).unwrap();
    // A guest that keeps running (a billion hostile accesses) on two
    // vCPUs, with a disk served by the notify worker and stdin read by the
    // console thread.
    let child = trapline()
        .args(["run", "--kernel", "builtin:hostile", "--smp", "2"])
        .args(["--serial", "stdio", "--timeout", "600"])
        .args(["--append", "n=1000000000 seed=3"])
        .arg("--disk")
        .arg(&disk)
        .args(["--virtio-notify", "ioeventfd"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn trapline");
    let mut running = Running(child);
    let pid = running.0.id();
    // Once the guest prints, every thread has been started. The console
    // is drained to the end, so a full pipe never blocks a vCPU.
    let stdout = running.0.stdout.take().unwrap();
    let (first_tx, first_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).split(b'\n');
        if let Some(Ok(line)) = lines.next() {
            let _ = first_tx.send(String::from_utf8_lossy(&line).into_owned());
        }
        lines.for_each(drop);
    });
    let first = first_rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the guest printed nothing in 120 s");
    assert!(
        first.contains("hostile: n="),
        "the guest did not start: {first:?}"
    );

    let want = ["vcpu0", "vcpu1", "console-in", RTC_THREAD, "virtio-worker"];
    // The filters are installed as each thread starts: look until all are
    // there (bounded; the emulated host is slow), then check every thread.
    let deadline = Instant::now() + Duration::from_secs(60);
    let modes = loop {
        let modes = thread_modes(pid);
        let all_in = want.iter().all(|w| modes.iter().any(|(n, _)| n == w))
            && modes.iter().all(|(_, m)| *m == Some(2));
        if all_in || Instant::now() > deadline {
            break modes;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(running);
    let _ = std::fs::remove_file(&disk);
    eprintln!("threads of trapline (name, Seccomp mode): {modes:?}");
    for w in want {
        assert!(
            modes.iter().any(|(n, _)| n == w),
            "no {w} thread: {modes:?}"
        );
    }
    // The main thread (named after the binary) and every other one.
    assert!(modes.len() > want.len(), "{modes:?}");
    for (name, mode) in &modes {
        assert_eq!(
            *mode,
            Some(2),
            "thread {name} is not in seccomp filter mode: {modes:?}"
        );
    }
}
