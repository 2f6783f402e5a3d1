//! `trapline run` end to end, as a user runs it: the real binary, real
//! images, real exit statuses. Tests that need /dev/kvm say so loudly and
//! skip when it is absent.

mod common;
use common::*;

#[test]
fn hello_prints_on_com1_and_exits_through_debug_exit() {
    if !kvm_present("hello") {
        return;
    }
    let k = payload_file("hello");
    let o = run(&[
        "run",
        "--kernel",
        k.to_str().unwrap(),
        "--append",
        "exit=5 greeting",
        "--timeout",
        "60",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("hello from trapline guest"),
        "stdout: {out}\nstderr: {}",
        stderr(&o)
    );
    assert!(out.contains("greeting"), "argv reaches the guest: {out}");
    assert_eq!(code(&o), (5 << 1) | 1, "stderr: {}", stderr(&o));
}

#[test]
fn builtin_payloads_run_by_name_and_unknown_names_are_listed() {
    if !kvm_present("builtin") {
        return;
    }
    let o = run(&["run", "--kernel", "builtin:hello", "--timeout", "60"]);
    assert_eq!(code(&o), 1, "stderr: {}", stderr(&o));
    let o = run(&["run", "--kernel", "builtin:nope"]);
    assert_eq!(code(&o), 4);
    assert!(stderr(&o).contains("built-ins are: "), "{}", stderr(&o));
}

#[test]
fn elf64_images_start_in_long_mode() {
    if !kvm_present("hello64") {
        return;
    }
    let o = run(&["run", "--kernel", "builtin:hello64", "--timeout", "60"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("hello from a 64-bit ELF"));
    assert_eq!(code(&o), (0x2a << 1) | 1, "stderr: {}", stderr(&o));
}

#[test]
fn serial_output_goes_to_a_file() {
    if !kvm_present("serial file") {
        return;
    }
    let s = tmp("serial.txt");
    let arg = format!("file:{}", s.display());
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--serial",
        &arg,
        "--timeout",
        "60",
    ]);
    assert_eq!(code(&o), 1, "stderr: {}", stderr(&o));
    assert!(std::fs::read_to_string(&s)
        .unwrap()
        .contains("hello from trapline guest"));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("hello from trapline guest"));
}

#[test]
fn a_triple_fault_is_reported_with_its_own_status() {
    if !kvm_present("triple fault") {
        return;
    }
    let o = run(&["run", "--kernel", "builtin:triple", "--timeout", "60"]);
    assert_eq!(code(&o), 10, "stderr: {}", stderr(&o));
    assert!(stderr(&o).contains("triple-faulted"), "{}", stderr(&o));
}

/// KVM cannot emulate an x87 load from MMIO on any host: the run ends
/// with status 12, and stderr says which instruction failed, as QEMU does.
#[test]
fn an_emulation_failure_shows_the_suberror_registers_and_code() {
    if !kvm_present("emulation failure") {
        return;
    }
    let o = run(&["run", "--kernel", "builtin:emufail", "--timeout", "60"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 12, "stderr: {err}");
    assert!(
        err.contains("vCPU 0: KVM internal error: emulation failure (suberror 1)"),
        "{err}"
    );
    for want in ["RAX=", "RIP=", "CS =0008", "CR0=", "EFER="] {
        assert!(err.contains(want), "{want} missing: {err}");
    }
    // RBX holds the MMIO address the instruction read.
    assert!(err.contains("RBX=00000000fe000000"), "{err}");
    // The faulting instruction, `fildl (%rbx)` = db 03, is marked at RIP.
    let code_line = err
        .lines()
        .find(|l| l.starts_with("Code="))
        .expect("a Code= line");
    assert!(code_line.contains("<db> 03"), "{code_line}");
}

#[test]
fn a_guest_that_never_exits_is_stopped_by_the_timeout() {
    if !kvm_present("timeout") {
        return;
    }
    for mode in ["", "spin=busy"] {
        let o = run(&[
            "run",
            "--kernel",
            "builtin:spin",
            "--append",
            mode,
            "--timeout",
            "1",
        ]);
        assert_eq!(code(&o), 124, "mode {mode:?} stderr: {}", stderr(&o));
        assert!(stderr(&o).contains("timeout"), "{}", stderr(&o));
    }
}

#[test]
fn smp_guests_bring_up_every_vcpu() {
    if !kvm_present("smp") {
        return;
    }
    for n in ["2", "3"] {
        let o = run(&[
            "run",
            "--kernel",
            "builtin:smp",
            "--smp",
            n,
            "--append",
            &format!("cpus={n}"),
            "--timeout",
            "120",
        ]);
        assert_eq!(
            code(&o),
            1,
            "smp {n}: stdout {} stderr {}",
            String::from_utf8_lossy(&o.stdout),
            stderr(&o)
        );
    }
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_images_get_a_clear_error_and_status_4() {
    if !kvm_present("bad images") {
        return;
    }
    let not_elf = tmp("not-elf");
    std::fs::write(&not_elf, b"this is not an ELF file at all").unwrap();
    let hello = trapline_guest::payload("hello").unwrap();
    let truncated = tmp("truncated.elf");
    std::fs::write(&truncated, &hello[..hello.len().min(40)]).unwrap();
    let empty = tmp("empty.elf");
    std::fs::write(&empty, b"").unwrap();
    let dir = std::env::temp_dir();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--kernel".into(), "/nonexistent/guest.elf".into()],
            "cannot read guest image",
        ),
        (
            vec!["--kernel".into(), dir.display().to_string()],
            "cannot read guest image",
        ),
        (
            vec!["--kernel".into(), not_elf.display().to_string()],
            "ELF",
        ),
        (vec!["--kernel".into(), truncated.display().to_string()], ""),
        (vec!["--kernel".into(), empty.display().to_string()], ""),
        // hello loads at 4 MiB: 2 MiB of RAM cannot hold it.
        (
            vec![
                "--kernel".into(),
                "builtin:hello".into(),
                "--mem".into(),
                "2".into(),
            ],
            "--mem",
        ),
        (
            vec![
                "--kernel".into(),
                "builtin:hello".into(),
                "--initrd".into(),
                "/nonexistent/initrd".into(),
            ],
            "initrd",
        ),
    ];
    for (args, needle) in cases {
        let mut full = vec!["run".to_string()];
        full.extend(args.clone());
        let o = trapline().args(&full).output().unwrap();
        assert_eq!(code(&o), 4, "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.starts_with("trapline: error: "), "{args:?}: {e}");
        assert!(e.contains(needle), "{args:?}: expected {needle:?} in {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["run", "--kernel", "builtin:hello", "--smp", "0"][..],
        &["run", "--kernel", "builtin:hello", "--smp", "65"],
        &["run", "--kernel", "builtin:hello", "--mem", "0"],
        &["run", "--kernel", "builtin:hello", "--frobnicate"],
        &["run"],
        &["launch"],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

#[test]
fn an_unwritable_serial_file_is_a_usage_error() {
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--serial",
        "file:/nonexistent-dir/serial.txt",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot open it for writing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn missing_kvm_is_explained() {
    let o = trapline()
        .env("TRAPLINE_KVM", "/nonexistent/kvm")
        .args(["run", "--kernel", "builtin:hello"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 6, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not exist: this host has no KVM"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn help_and_version_succeed() {
    assert_eq!(code(&run(&["--help"])), 0);
    assert_eq!(code(&run(&["--version"])), 0);
    assert_eq!(code(&run(&["run", "--help"])), 0);
}
