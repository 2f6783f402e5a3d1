//! trapline driven with QEMU's spellings, the way kvm-unit-tests'
//! run_tests.sh drives QEMU (spec §5.3): the real binary, its real output
//! and exit statuses. Tests that need /dev/kvm say so loudly and skip when it
//! is absent.
#![cfg(target_arch = "x86_64")]

use std::process::Output;

mod common;
use common::*;

/// The command line run_tests.sh builds for a test (spec §5.3), without
/// the `timeout` wrapper: `--no-reboot … -kernel K -smp N [-append A]
/// [extra…] -initrd ENV`.
fn run_tests_line(kernel: &str, smp: &str, append: Option<&str>, extra: &[&str]) -> Vec<String> {
    // One file per call: tests run in parallel, and a file another test is
    // rewriting (truncated, then written) could be read empty.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let env = tmp(&format!("env-{n}"));
    std::fs::write(&env, "NR_CPUS=1\nMEMSIZE=128\n").unwrap();
    let mut v: Vec<String> = [
        "--no-reboot",
        "-nodefaults",
        "-global",
        "kvm-pit.lost_tick_policy=discard",
        "-device",
        "pc-testdev",
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x4",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-device",
        "pci-testdev",
        "-machine",
        "accel=kvm",
        "-kernel",
        kernel,
        "-smp",
        smp,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(a) = append {
        v.extend(["-append".to_string(), a.to_string()]);
    }
    v.extend(extra.iter().map(|s| s.to_string()));
    v.extend(["-initrd".to_string(), env.display().to_string()]);
    v
}

/// run_tests.sh turns status 1 into a pass only when every stderr line
/// mentions "warning".
fn stderr_is_harmless(o: &Output) -> bool {
    stderr(o).lines().all(|l| l.contains("warning"))
}

#[test]
fn the_run_tests_command_line_boots_a_guest_and_keeps_qemus_exit_status() {
    if !kvm_present("run_tests command line") {
        return;
    }
    let k = payload_file("hello");
    let line = run_tests_line(k.to_str().unwrap(), "1", Some("exit=3"), &[]);
    let o = trapline().args(&line).output().unwrap();
    assert!(
        stdout(&o).contains("hello from trapline guest"),
        "status: {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("exit=3"),
        "argv reaches the guest: {}",
        stdout(&o)
    );
    assert_eq!(code(&o), (3 << 1) | 1, "stderr: {}", stderr(&o));
    assert!(stderr(&o).is_empty(), "nothing on stderr: {}", stderr(&o));
}

#[test]
fn a_passing_guest_with_a_cpu_model_runs_without_a_warning() {
    if !kvm_present("-cpu model") {
        return;
    }
    let k = payload_file("hello");
    let line = run_tests_line(
        k.to_str().unwrap(),
        "1",
        None,
        &["-cpu", "qemu64,+x2apic,+tsc-deadline", "-m", "256M"],
    );
    let o = trapline().args(&line).output().unwrap();
    assert_eq!(code(&o), 1, "exit(0) is status 1: {}", stderr(&o));
    let e = stderr(&o);
    assert!(
        !e.contains("-cpu"),
        "the model is honoured, not warned about: {e}"
    );
    assert!(
        stderr_is_harmless(&o),
        "run_tests would call this a failure: {e}"
    );
}

#[test]
fn smp_guests_bring_up_every_vcpu() {
    if !kvm_present("-smp 2") {
        return;
    }
    let o = run(&["-smp", "2", "-kernel", "builtin:smp", "-append", "cpus=2"]);
    assert_eq!(code(&o), 1, "stdout {} stderr {}", stdout(&o), stderr(&o));
    let o = run(&[
        "-smp",
        "cpus=3,sockets=1,cores=3,threads=1",
        "-kernel",
        "builtin:smp",
        "-append",
        "cpus=3",
    ]);
    assert_eq!(code(&o), 1, "stdout {} stderr {}", stdout(&o), stderr(&o));
    assert!(stderr_is_harmless(&o), "{}", stderr(&o));
}

#[test]
fn the_premature_failure_probe_sees_could_not_load_kernel() {
    if !kvm_present("_NO_FILE_4Uhere_ probe") {
        return;
    }
    let line = run_tests_line("_NO_FILE_4Uhere_", "1", None, &["-cpu", "max"]);
    let o = trapline().args(&line).output().unwrap();
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    // runtime.bash: grep "_NO_FILE_4Uhere_" | grep -q "could not load kernel"
    assert!(
        all.lines()
            .any(|l| l.contains("_NO_FILE_4Uhere_") && l.contains("could not load kernel")),
        "{all}"
    );
    assert!(!all.contains("panicked"), "{all}");

    // A kernel that exists but is not an image is trapline run's status 4 too.
    let not_elf = tmp("not-elf");
    std::fs::write(&not_elf, b"this is not an ELF file").unwrap();
    let o = run(&["-kernel", not_elf.to_str().unwrap()]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let dir = std::env::temp_dir();
    let o = run(&["-kernel", dir.to_str().unwrap()]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("could not load kernel"),
        "{}",
        stderr(&o)
    );
}

/// kvm-unit-tests' `run_tests.sh --probe-maxsmp` runs the no-file probe
/// with `-smp $MAX_SMP`, greps the output for "SMP CPUs" and takes that
/// line's last word (parentheses stripped) as the machine's limit.
#[test]
fn probe_maxsmp_reads_the_limit_from_the_smp_cpus_line() {
    let line = run_tests_line("_NO_FILE_4Uhere_", "500", None, &[]);
    let o = trapline().args(&line).output().unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    let hit = all
        .lines()
        .find(|l| l.contains("SMP CPUs"))
        .unwrap_or_else(|| panic!("no 'SMP CPUs' line: {all}"));
    let last = hit.rsplit(' ').next().unwrap().replace(['(', ')'], "");
    assert_eq!(last, "64", "{hit}");
    assert!(hit.contains("Invalid SMP CPUs 500"), "{hit}");
}

#[test]
fn without_kvm_the_probe_fails_before_the_kernel_as_qemu_does() {
    // QEMU sets up its accelerator before loading the kernel, so on a host
    // without KVM the probe does not see "could not load kernel" and
    // run_tests.sh reports the test as skipped, with this reason.
    let line = run_tests_line("_NO_FILE_4Uhere_", "1", None, &[]);
    let o = trapline()
        .env("TRAPLINE_KVM", "/nonexistent/kvm")
        .args(&line)
        .output()
        .unwrap();
    assert_eq!(code(&o), 6, "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("could not load kernel"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("no KVM"), "{}", stderr(&o));
}

#[test]
fn device_help_lists_the_test_devices_as_x86_run_greps_for_them() {
    for q in ["?", "help"] {
        let o = run(&["-device", q]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = stdout(&o);
        // x86/run: grep -F -e '"testdev"' -e '"pc-testdev"'; grep -F pci-testdev
        assert!(out.contains("\"pc-testdev\""), "{out}");
        assert!(out.contains("pci-testdev"), "{out}");
        assert!(out.contains("\"isa-debug-exit\""), "{out}");
    }
    let o = run(&["-device", "isa-debug-exit,help"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("iobase"), "{}", stdout(&o));
}

#[test]
fn help_and_version_look_like_qemus() {
    for h in ["--help", "-h", "-help"] {
        let o = run(&[h]);
        assert_eq!(code(&o), 0, "{h}: {}", stderr(&o));
        let out = stdout(&o);
        // arch-run.bash: `$QEMU --help | grep QEMU`; trapline's own help
        // leads (under QEMU's version line for `-h`, `-help`: see below),
        // and QEMU's version line introduces the QEMU spellings.
        assert!(out.contains("QEMU"), "{h}: {out}");
        let native = if h == "--help" {
            out.as_str()
        } else {
            out.split_once('\n').unwrap().1
        };
        assert!(native.starts_with("trapline "), "{h}: {out}");
        assert!(
            out.lines().any(|l| l.starts_with("QEMU emulator version ")),
            "{h}: {out}"
        );
        assert!(
            out.contains("trapline run"),
            "{h}: the native commands too: {out}"
        );
    }
    let qemu_line = format!(
        "QEMU emulator version 7.2.0 (trapline {})",
        env!("CARGO_PKG_VERSION")
    );
    // QEMU's own spellings answer as QEMU: its version line first.
    for v in ["-version", "-h", "-help"] {
        let o = run(&[v]);
        assert_eq!(code(&o), 0);
        let first = stdout(&o).lines().next().unwrap_or("").to_string();
        assert_eq!(first, qemu_line, "{v}");
    }
    // `--version`, as people type it, names trapline first, QEMU's line next.
    let o = run(&["--version"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!("trapline {}", env!("CARGO_PKG_VERSION")),
        "{out}"
    );
    assert_eq!(lines[1], qemu_line, "{out}");
    // trapline's own spellings are unchanged.
    let o = run(&["-V"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).starts_with("trapline "), "{}", stdout(&o));
    assert_eq!(code(&run(&["run", "--help"])), 0);
}

/// kvm-unit-tests' scripts/arch-run.bash reads the QEMU version into the
/// tests' environment from `$QEMU -h | head -1`, split at spaces and dots,
/// the fourth to sixth fields being major, minor and micro. The same read,
/// by bash, of trapline's `-h`.
#[test]
fn kvm_unit_tests_reads_the_qemu_version_from_the_first_line_of_dash_h() {
    let script = r#"IFS='[ .]' read -r _ _ _ major minor micro rest <<<"$("$T" -h | head -1)"; echo "$major.$minor.$micro""#;
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("T", env!("CARGO_BIN_EXE_trapline"))
        .output();
    let Ok(o) = o else {
        eprintln!("SKIPPED: no bash to read the version line with — this check did NOT run");
        return;
    };
    assert_eq!(stdout(&o), "7.2.0\n", "{}", stderr(&o));
}

#[test]
fn refusals_name_the_option_and_exit_2() {
    for (args, needle) in [
        (
            &["-kernel", "builtin:hello", "-foo"][..],
            "unsupported QEMU option '-foo'",
        ),
        (
            &["-foo"],
            "unsupported QEMU option '-foo' (trapline accepts: ",
        ),
        (&["-kernel", "builtin:hello", "-hda", "disk.img"], "'-hda'"),
        (&["-kernel", "builtin:hello", "disk.img"], "'disk.img'"),
        (
            &["-kernel", "builtin:hello", "-device", "virtio-net-pci"],
            "'virtio-net-pci'",
        ),
        (
            &[
                "-kernel",
                "builtin:hello",
                "-device",
                "isa-debug-exit,iobase=0x501,iosize=0x2",
            ],
            "iobase=0x501",
        ),
        (
            &["-kernel", "builtin:hello", "-machine", "accel=tcg"],
            "accel=tcg",
        ),
        (&["-kernel", "builtin:hello", "-accel", "tcg"], "-accel tcg"),
        (&["-kernel", "builtin:hello", "-smp", "0"], "-smp '0'"),
        (
            &["-kernel", "builtin:hello", "-smp", "65"],
            "Invalid SMP CPUs 65",
        ),
        (&["-kernel", "builtin:hello", "-m", "4G"], "-m '4G'"),
        (&["-kernel", "builtin:hello", "-m", "1000K"], "whole MiB"),
        (
            &["-kernel", "builtin:hello", "-serial", "tcp::4444"],
            "'tcp::4444'",
        ),
        (&["-kernel", "builtin:hello", "-display", "gtk"], "'gtk'"),
        (&["-kernel"], "'-kernel' needs a value"),
        (&["-smp", "2"], "-kernel"),
    ] {
        let o = trapline()
            .env("TRAPLINE_KVM", "/nonexistent/kvm")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.starts_with("trapline: "), "{args:?}: {e}");
        assert!(e.contains(needle), "{args:?}: expected {needle:?} in {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
}

#[test]
fn serial_to_a_file_and_nodefaults_without_serial() {
    if !kvm_present("-serial file:") {
        return;
    }
    let s = tmp("serial.txt");
    let arg = format!("file:{}", s.display());
    let o = run(&["-nodefaults", "-kernel", "builtin:hello", "-serial", &arg]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(std::fs::read_to_string(&s)
        .unwrap()
        .contains("hello from trapline guest"));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    // -nodefaults and no -serial: COM1 goes nowhere, as under QEMU.
    let o = run(&["-nodefaults", "-kernel", "builtin:hello"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    // -nographic: stdio.
    let o = run(&["-nodefaults", "-nographic", "-kernel", "builtin:hello"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stdout(&o).contains("hello from trapline guest"));
}
