//! SIGINT, SIGTERM and SIGHUP end a run cleanly and keep what it measured:
//! `trapline run --stat` writes its profile and last metrics line and exits
//! 128 + N; `trapline bench` keeps a partial report that `trapline report`
//! reads; a second signal ends either at once. Real processes, real
//! signals (kill(2)), sent once the run is provably under way.
#![cfg(target_arch = "x86_64")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

mod common;
use common::*;

/// Far more than anything here takes; only a hang gets near it.
const HANG_GUARD: Duration = Duration::from_secs(300);

fn send(child: &Child, sig: i32) {
    // SAFETY: kill(2) on our own, not yet reaped child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Whether the process has a thread named `name` (its vCPU 0 is `vcpu0`).
fn has_thread(pid: u32, name: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
}

/// Waits until the guest runs (vCPU 0's thread exists).
fn wait_for_vcpu(child: &mut Child) {
    let give_up = Instant::now() + HANG_GUARD;
    while !has_thread(child.id(), "vcpu0") {
        assert!(
            child.try_wait().unwrap().is_none(),
            "trapline ended before its guest ran"
        );
        assert!(Instant::now() < give_up, "no vCPU thread appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the child's end (killed at the hang guard); its status as a
/// shell reports it (128 + N when a signal killed it).
fn status_of(child: &mut Child) -> i32 {
    let give_up = Instant::now() + HANG_GUARD;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            use std::os::unix::process::ExitStatusExt as _;
            return st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0));
        }
        if Instant::now() > give_up {
            let _ = child.kill();
            panic!("hung after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The stderr lines as they come, on a channel, and all of them at the end.
fn stderr_lines(child: &mut Child) -> (Receiver<String>, std::thread::JoinHandle<String>) {
    let err = child.stderr.take().unwrap();
    let (tx, rx) = channel();
    let all = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    (rx, all)
}

/// Waits for a stderr line containing `what`.
fn wait_for_line(rx: &Receiver<String>, what: &str) {
    let give_up = Instant::now() + HANG_GUARD;
    loop {
        let left = give_up.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) if l.contains(what) => return,
            Ok(_) => {}
            Err(e) => panic!("no stderr line with {what:?}: {e}"),
        }
    }
}

/// `trapline run` of a guest that spins forever with the profile (in
/// `format`) and metrics going to files, sent `sigs` back to back once it
/// runs: its status, the profile, the metrics and its stderr.
fn run_signalled(sigs: &[i32], format: &str, name: &str) -> (i32, String, String, String) {
    let stat = tmp(&format!("{name}.stat"));
    let metrics = tmp(&format!("{name}.metrics"));
    let mut child = trapline()
        .args(["run", "--kernel", "builtin:spin", "--serial", "none"])
        .args(["--timeout", "600", "--stat-format", format])
        .arg(format!("--stat={}", stat.display()))
        .arg("--metrics-path")
        .arg(&metrics)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_, all) = stderr_lines(&mut child);
    wait_for_vcpu(&mut child);
    for &sig in sigs {
        send(&child, sig);
    }
    let status = status_of(&mut child);
    (
        status,
        std::fs::read_to_string(&stat).unwrap_or_default(),
        std::fs::read_to_string(&metrics).unwrap_or_default(),
        all.join().unwrap(),
    )
}

#[test]
fn run_writes_its_stat_profile_and_last_metrics_line_on_each_stop_signal() {
    if !kvm_present("run --stat on signals") {
        return;
    }
    for (sig, name, status) in [
        (libc::SIGTERM, "SIGTERM", 143),
        (libc::SIGINT, "SIGINT", 130),
        (libc::SIGHUP, "SIGHUP", 129),
    ] {
        let (code, json, metrics, err) = run_signalled(&[sig], "json", &format!("json-{name}"));
        assert_eq!(code, status, "{name}: {err}");
        assert!(err.contains(&format!("stopped by {name}")), "{name}: {err}");
        let v: serde_json::Value = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("{name}: the profile is not JSON ({e}): {json:?}"));
        assert_eq!(v["schema"], "trapline-stat/1", "{name}: {json}");
        let last = metrics.lines().last().unwrap_or_default();
        let last: serde_json::Value = serde_json::from_str(last)
            .unwrap_or_else(|e| panic!("{name}: metrics' last line ({e}): {metrics:?}"));
        assert_eq!(last["final"], true, "{name}: {metrics}");
    }
    // The table format too.
    let (code, table, _, err) = run_signalled(&[libc::SIGTERM], "table", "table");
    assert_eq!(code, 143, "{err}");
    assert!(!table.is_empty() && table.contains("exits"), "{table:?}");
}

/// timeout(1) sends its signal to the process, then to its process group:
/// the same SIGTERM twice in a row is one request, and the profile is kept
/// (what run_tests.sh's and a user's `timeout` do to a guest that runs too
/// long).
#[test]
fn run_under_timeout_keeps_its_profile() {
    if !kvm_present("run under timeout(1)") {
        return;
    }
    let stat = tmp("under-timeout.stat");
    let _ = std::fs::remove_file(&stat);
    let o = std::process::Command::new("timeout")
        .arg("2")
        .arg(env!("CARGO_BIN_EXE_trapline"))
        .args(["run", "--kernel", "builtin:spin", "--serial", "none"])
        .args(["--timeout", "600", "--stat-format", "json"])
        .arg(format!("--stat={}", stat.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    // 124: timeout's own status when it had to stop the command.
    assert_eq!(o.status.code(), Some(124), "{err}");
    assert!(err.contains("stopped by SIGTERM"), "{err}");
    assert!(!err.contains("second stop signal"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stat).unwrap()).unwrap();
    assert_eq!(v["schema"], "trapline-stat/1");
    // The same signal twice back to back, sent by hand: one request too.
    let (code, json, _, err) = run_signalled(&[libc::SIGTERM, libc::SIGTERM], "json", "twice");
    assert_eq!(code, 143, "{err}");
    assert!(
        json.contains("trapline-stat/1"),
        "{err}
{json:?}"
    );
}

#[test]
fn a_second_signal_ends_run_at_once() {
    if !kvm_present("run, second signal") {
        return;
    }
    // Two different signals, back to back (two of the same could merge
    // into one while pending): whichever is handled second ends it.
    let (code, _, _, err) = run_signalled(&[libc::SIGTERM, libc::SIGINT], "table", "second");
    assert!(code == 130 || code == 143, "{code}: {err}");
    assert!(
        err.contains("a second stop signal: ending at once"),
        "{err}"
    );
    assert!(!err.contains("stopped by"), "no clean end: {err}");
}

/// A small lab run, one repeat, with its results under `parent` and a
/// line per step on stderr (stderr is a pipe).
fn small_bench(parent: &Path) -> Child {
    trapline()
        .args([
            "bench",
            "--repeat",
            "1",
            "--goal",
            "300000",
            "--min-iters",
            "8",
            "--warmup",
            "4",
            "--only",
            "cpuid,pio-user-out,hlt,ipi,raw-kvm:noop",
            "--results-dir",
        ])
        .arg(parent)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The run folders under `parent` (not `latest`).
fn run_folders(parent: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name() != "latest")
        .map(|e| e.path())
        .collect()
}

#[test]
fn bench_stopped_after_its_first_vm_run_keeps_a_partial_report() {
    if !kvm_present("bench on signals") {
        return;
    }
    for (sig, name, status) in [
        (libc::SIGINT, "SIGINT", 130),
        (libc::SIGTERM, "SIGTERM", 143),
    ] {
        let parent = tmp(&format!("partial-{name}"));
        let _ = std::fs::remove_dir_all(&parent);
        let mut child = small_bench(&parent);
        let mut out = child.stdout.take().unwrap();
        let out_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut s);
            s
        });
        let (rx, all) = stderr_lines(&mut child);
        // Step 2 starting: the first VM run (the main machine's scenarios)
        // has finished.
        wait_for_line(&rx, "step 2/");
        send(&child, sig);
        let code = status_of(&mut child);
        let err = all.join().unwrap();
        let out = out_reader.join().unwrap();
        assert_eq!(code, status, "{name}: {err}");
        // Where the report is, on stderr.
        let folders = run_folders(&parent);
        assert_eq!(folders.len(), 1, "{name}: {folders:?}\n{err}");
        let json = folders[0].join("report.json");
        assert!(
            err.contains(&format!("partial run: stopped by {name}"))
                && err.contains(&json.display().to_string()),
            "{name}: {err}"
        );
        assert!(out.contains("partial run"), "{name}: {out}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let p = &v["partial"];
        assert_eq!(p["stopped_by"], name, "{v}");
        let (done, planned) = (
            p["runs_done"].as_u64().unwrap(),
            p["runs_planned"].as_u64().unwrap(),
        );
        assert!(done >= 1 && done < planned, "{p}");
        // Every selected scenario is either in the report or named as not
        // run, never both; the first VM's are in.
        let kept: Vec<String> = v["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| match s["vmm"].as_str() {
                Some("trapline") | None => s["name"].as_str().unwrap().to_string(),
                Some(vmm) => format!("{vmm}:{}", s["name"].as_str().unwrap()),
            })
            .collect();
        let not_run: Vec<String> = p["not_run"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        for s in ["cpuid", "pio-user-out", "noop"] {
            assert!(kept.contains(&s.to_string()), "{name}: {s}: {kept:?}");
        }
        for s in ["hlt", "ipi", "raw-kvm:noop"] {
            assert!(
                kept.contains(&s.to_string()) != not_run.contains(&s.to_string()),
                "{name}: {s}: kept {kept:?}, not run {not_run:?}"
            );
        }
        // `latest` follows it, and `trapline report` reads it and says so.
        let o = run(&["report", parent.join("latest").to_str().unwrap()]);
        assert_eq!(code_of(&o), 0, "{}", stderr(&o));
        assert!(
            stdout(&o).contains(&format!("partial run: stopped by {name}")),
            "{}",
            stdout(&o)
        );
        // A format with no place for it says so on stderr.
        let o = run(&[
            "report",
            parent.join("latest").to_str().unwrap(),
            "--format",
            "csv",
        ]);
        assert_eq!(code_of(&o), 0, "{}", stderr(&o));
        assert!(stderr(&o).contains("note: partial run"), "{}", stderr(&o));
        let _ = std::fs::remove_dir_all(&parent);
    }
}

fn code_of(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

#[test]
fn bench_stopped_during_its_first_vm_run_leaves_no_empty_folder() {
    if !kvm_present("bench stopped early") {
        return;
    }
    let parent = tmp("stopped-early");
    let _ = std::fs::remove_dir_all(&parent);
    let mut child = small_bench(&parent);
    let (rx, all) = stderr_lines(&mut child);
    wait_for_line(&rx, "step 1/");
    send(&child, libc::SIGTERM);
    let code = status_of(&mut child);
    let err = all.join().unwrap();
    assert_eq!(code, 143, "{err}");
    // The first VM run is seconds long: the signal almost always lands in
    // it, and then nothing is kept. Should the run have finished first, a
    // readable partial report is the other correct answer.
    match run_folders(&parent).as_slice() {
        [] => assert!(err.contains("before any scenario finished"), "{err}"),
        [one] => {
            let o = run(&["report", one.to_str().unwrap()]);
            assert_eq!(code_of(&o), 0, "{}", stderr(&o));
            assert!(stdout(&o).contains("partial run"), "{}", stdout(&o));
        }
        more => panic!("{more:?}"),
    }
    // A second signal ends it at once: no report, and still no empty
    // folder (the folder is made only when a report is written).
    let parent = tmp("second-signal");
    let _ = std::fs::remove_dir_all(&parent);
    let mut child = small_bench(&parent);
    let (rx, all) = stderr_lines(&mut child);
    wait_for_line(&rx, "step 1/");
    send(&child, libc::SIGINT);
    send(&child, libc::SIGTERM);
    let code = status_of(&mut child);
    let err = all.join().unwrap();
    assert!(code == 130 || code == 143, "{code}: {err}");
    assert!(
        err.contains("a second stop signal: ending at once"),
        "{err}"
    );
    assert!(run_folders(&parent).is_empty(), "{err}");
    let _ = std::fs::remove_dir_all(&parent);
}

#[test]
fn a_guest_asleep_in_s3_is_stopped_by_a_signal_too() {
    if !kvm_present("S3 sleep on signals") {
        return;
    }
    // The guest never enables a wake event: it sleeps until the timeout,
    // or until the signal.
    let mut child = trapline()
        .args(["run", "--kernel", "builtin:s3", "--append", "rtc-wake=0"])
        .args(["--timeout", "600", "--stat=-"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let (_, all) = stderr_lines(&mut child);
    wait_for_line(&rx, "s3: entering S3");
    // Entering is printed just before the PM1 write: give it a moment to
    // be asleep (either way the signal must end the run the same).
    std::thread::sleep(Duration::from_millis(300));
    send(&child, libc::SIGTERM);
    let code = status_of(&mut child);
    let err = all.join().unwrap();
    assert_eq!(code, 143, "{err}");
    assert!(err.contains("stopped by SIGTERM"), "{err}");
}

/// `trapline virtio-paths` runs children, not VMs of its own: a stop
/// signal ends it between them, keeping the notify x irq paths measured
/// whole.
#[cfg(target_arch = "x86_64")]
#[test]
fn virtio_paths_stopped_between_paths_keeps_the_paths_it_measured() {
    if !kvm_present("virtio-paths on signals") {
        return;
    }
    let mut child = trapline()
        .args(["virtio-paths", "--quick"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let (rx, all) = stderr_lines(&mut child);
    // The second path starting: the first one is measured whole.
    wait_for_line(&rx, "virtio-paths: path 2/4");
    send(&child, libc::SIGTERM);
    let code = status_of(&mut child);
    let err = all.join().unwrap();
    let out = out_reader.join().unwrap();
    assert_eq!(code, 143, "{err}");
    assert!(
        err.contains("partial run: stopped by SIGTERM after 1 of 4 notify x irq paths"),
        "{err}"
    );
    // The first path's rows are printed, no other path's.
    assert!(out.contains("exit + line"), "{out}");
    assert!(!out.contains("ioeventfd + irqfd"), "{out}");
}
