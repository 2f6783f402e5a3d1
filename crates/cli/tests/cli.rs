//! `trapline run` end to end, as a user runs it: the real binary, real
//! images, real exit statuses. Tests that need /dev/kvm say so loudly and
//! skip when it is absent.
#![cfg(target_arch = "x86_64")]

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
    // Without `cpus=`, the payload finds the vCPUs itself (fw_cfg's count).
    let o = run(&[
        "run",
        "--kernel",
        "builtin:smp",
        "--smp",
        "4",
        "--timeout",
        "120",
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "stdout {out} stderr {}", stderr(&o));
    assert!(out.contains("smp: 4 of 4 cpus online"), "{out}");
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

/// `--stat`: the exits that reached trapline add up exactly with what
/// the guest did: one OUT to COM1 per byte it printed, one to
/// isa-debug-exit, one ucall.
#[test]
fn stat_counts_add_up_with_the_guests_own_accesses() {
    if !kvm_present("--stat") {
        return;
    }
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--append",
        "a b",
        "--stat",
        "--stat-format",
        "json",
        "--timeout",
        "60",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let printed = o.stdout.len() as u64;
    let j: serde_json::Value =
        serde_json::from_str(&stderr(&o)).expect("the JSON report on stderr");
    assert_eq!(j["schema"], "trapline-stat/1");
    let keys = j["total"]["keys"].as_array().unwrap();
    let count = |key: &str| {
        keys.iter()
            .find(|k| k["key"] == key)
            .map_or(0, |k| k["count"].as_u64().unwrap())
    };
    assert_eq!(count("0x3f8:POUT"), printed, "{j}");
    assert_eq!(count("0xf4:POUT"), 1);
    assert_eq!(count("0x700:POUT"), 1, "one ucall (DONE)");
    let com1 = keys.iter().find(|k| k["key"] == "0x3f8:POUT").unwrap();
    assert_eq!(com1["device"], "com1");
    let hist: u64 = com1["log2_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(hist, printed, "the histogram holds every exit");
    let total: u64 = keys.iter().map(|k| k["count"].as_u64().unwrap()).sum();
    assert_eq!(j["total"]["exits"].as_u64().unwrap(), total);
    assert!(j["vcpus"][0]["in_kvm_run_cycles"].as_u64().unwrap() > 0);
    // Distributions: every exit of the key in its handling and in-KVM ones,
    // quantiles ordered and within the exact min and max.
    for side in ["handling", "in_kvm"] {
        let d = &com1[side];
        assert_eq!(d["count"].as_u64(), Some(printed), "{side}: {d}");
        let q = |f: &str| d[f].as_u64().unwrap_or_else(|| panic!("{side}.{f}: {d}"));
        assert!(q("min") <= q("p50") && q("p50") <= q("p99") && q("p99") <= q("max"));
    }
    // KVM's side (its stats fd, Linux 5.14+): every exit that reached
    // trapline is one of KVM's exits too. (On this project's nested hosts
    // KVM's emulator performs the guest's I/O, so `io_exits` need not move;
    // `exits` always does.)
    match j["total"]["kvm"]["exits"].as_u64() {
        Some(kvm_exits) => assert!(kvm_exits >= total, "KVM {kvm_exits} < trapline {total}"),
        None => {
            let why = &j["vcpus"][0]["kvm"]["unavailable"];
            assert!(why.as_str().is_some_and(|w| w.contains("KVM")), "{j}");
            eprintln!("NOTE: KVM's stats fd is unavailable here: {why}");
        }
    }
}

/// `--stat`'s table prints, per key, p50/p99 beside the mean, and the
/// time inside KVM_RUN (mean, p50, p99, max).
#[test]
fn stat_table_prints_percentiles_per_key() {
    if !kvm_present("--stat table") {
        return;
    }
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--stat",
        "--timeout",
        "60",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let err = stderr(&o);
    let from = err.find("by key, all vCPUs").expect("the key table");
    let lines: Vec<&str> = err[from..]
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    for cell in [
        "p50 cyc", "p99 cyc", "max cyc", "kvm p50", "kvm p99", "kvm max",
    ] {
        assert!(lines[0].contains(cell), "{cell} missing: {err}");
    }
    let com1: Vec<&str> = lines
        .iter()
        .find(|l| l.trim_start().starts_with("0x3f8:POUT"))
        .expect("COM1's row")
        .split_whitespace()
        .collect();
    // key device samples samples% time% total us mean us p50 p99 min max, then
    // kvm mean p50 p99 max
    let num = |i: usize| {
        com1[i]
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("{com1:?}"))
    };
    assert!(num(9) <= num(10) && num(10) <= num(12), "{com1:?}");
    assert!(num(14) <= num(15) && num(15) <= num(16), "{com1:?}");
}

#[test]
fn stat_files_one_per_run_and_bad_paths_are_usage_errors() {
    // A stat file that cannot be written is a usage error before the guest
    // starts (so before /dev/kvm is even needed).
    for args in [
        &[
            "run",
            "--kernel",
            "builtin:hello",
            "--stat=/nonexistent/dir/s",
        ][..],
        &[
            "run",
            "--kernel",
            "builtin:hello",
            "--metrics-path",
            "/nonexistent/dir/m",
        ][..],
    ] {
        let o = trapline()
            .env("TRAPLINE_KVM", "/nonexistent/kvm")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("cannot open it for writing"),
            "{}",
            stderr(&o)
        );
    }
    if !kvm_present("TRAPLINE_STAT") {
        return;
    }
    // TRAPLINE_STAT naming a directory: one file per run, with QEMU's
    // spellings too (what kvm-unit-tests' run_tests.sh drives).
    let dir = tmp("stat-dir");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for _ in 0..2 {
        let o = trapline()
            .env("TRAPLINE_STAT", &dir)
            .args(["-kernel", "builtin:hello", "-nographic"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 1, "{}", stderr(&o));
    }
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.contains("0x3f8:POUT"), "{text}");
        assert!(f
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("hello."));
    }
    // Metrics: newline-delimited JSON, the last line final.
    let m = dir.join("metrics.ndjson");
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--metrics-path",
        m.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let text = std::fs::read_to_string(&m).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["final"], true);
    assert_eq!(
        last["vcpu"]["exit_io_out"].as_u64().unwrap(),
        o.stdout.len() as u64 + 2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--stat`'s table as `perf kvm stat report` lays it out: Samples% and
/// Time% columns under a header, a total row; `--stat-sort time` says so
/// and `--stat-vcpu` adds each vCPU's keys.
#[test]
fn stat_table_has_time_shares_a_total_and_the_per_vcpu_split() {
    if !kvm_present("--stat table") {
        return;
    }
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hello",
        "--stat",
        "--stat-sort",
        "time",
        "--stat-vcpu",
        "--timeout",
        "60",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let t = stderr(&o);
    let reasons = t
        .split("Exits that reached trapline, by reason (sorted by time")
        .nth(1)
        .unwrap_or_else(|| panic!("no table by reason sorted by time:\n{t}"));
    let mut lines = reasons.lines().skip(1);
    let head = lines.next().unwrap_or_default();
    assert!(
        head.contains("samples%") && head.contains("time%") && head.contains("mean us"),
        "{t}"
    );
    let total = lines
        .take_while(|l| !l.is_empty())
        .last()
        .unwrap_or_default();
    let cells: Vec<&str> = total.split_whitespace().collect();
    assert_eq!(cells.first(), Some(&"total"), "{t}");
    assert_eq!(cells[2..4], ["100.00%", "100.00%"], "{t}");
    assert!(
        t.contains("Exits that reached trapline, by key, vcpu0:"),
        "{t}"
    );
}

/// The hostile payload and the probe under `--stat`: counts by reason add
/// up to the total, KVM counted at least as many exits as reached
/// trapline, and the probe's timed OUTs land on the probe device's key.
#[test]
fn stat_under_the_hostile_payload_and_the_probe() {
    if !kvm_present("--stat hostile/probe") {
        return;
    }
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["run", "--stat", "--stat-format", "json", "--timeout", "120"];
        all.extend_from_slice(args);
        let o = run(&all);
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        serde_json::from_str(&stderr(&o)).expect("JSON on stderr")
    };
    let h = json(&["--kernel", "builtin:hostile", "--append", "n=3000"]);
    let keys = h["total"]["keys"].as_array().unwrap();
    let total = h["total"]["exits"].as_u64().unwrap();
    assert_eq!(
        keys.iter()
            .map(|k| k["count"].as_u64().unwrap())
            .sum::<u64>(),
        total
    );
    assert!(
        total >= 3000 / 2,
        "most random accesses exit to trapline: {total}"
    );
    if let Some(kvm) = h["total"]["kvm"]["exits"].as_u64() {
        assert!(kvm >= total, "KVM {kvm} < trapline {total}");
    }
    // The probe: `pio-user-out` (scenario 4), 4 warm-up + 16 timed OUTs
    // to the probe port, one ucall BEGIN/RESULT pair per batch, then its
    // recorded pass (tails): min(16, TAILS_SAMPLE_CAP) more.
    let p = json(&[
        "--kernel",
        "builtin:probe",
        "--append",
        "s=4 goal=1 min=16 max=16 warmup=4",
    ]);
    let keys = p["total"]["keys"].as_array().unwrap();
    let probe = keys
        .iter()
        .find(|k| k["key"] == "0x704:POUT")
        .expect("probe port key");
    assert_eq!(probe["device"], "probe");
    assert_eq!(probe["count"], 20 + 16, "{probe}");
}

/// A guest that touches an interrupt controller the VM was built without
/// ends with status 14 and a message naming the device and the flag; the
/// same guest runs where the VM has it. `builtin:smp` reads its LAPIC ID;
/// `builtin:kutvmexit`'s inl_from_kernel reads the PIC's ELCR (0x4d0).
#[test]
fn an_absent_interrupt_controller_is_a_clear_error_not_a_hang() {
    if !kvm_present("absent interrupt controller") {
        return;
    }
    let o = run(&[
        "run",
        "--kernel",
        "builtin:smp",
        "--irqchip",
        "none",
        "--timeout",
        "120",
    ]);
    let err = stderr(&o);
    assert_eq!(code(&o), 14, "stderr: {err}");
    assert!(err.contains("the local APIC (MMIO 0xfee00000)"), "{err}");
    assert!(err.contains("--irqchip kernel or --irqchip split"), "{err}");

    // QEMU's spelling of the same machine.
    let o = run(&[
        "-machine",
        "pc,kernel_irqchip=off",
        "-kernel",
        "builtin:smp",
        "-nodefaults",
    ]);
    assert_eq!(code(&o), 14, "stderr: {}", stderr(&o));

    // A split irqchip has the LAPIC (the same guest passes, on 2 vCPUs)
    // but no PIC.
    let o = run(&[
        "run",
        "--kernel",
        "builtin:smp",
        "--smp",
        "2",
        "--append",
        "cpus=2",
        "--irqchip",
        "split",
        "--timeout",
        "120",
    ]);
    assert_eq!(code(&o), 1, "stderr: {}", stderr(&o));
    let o = run(&[
        "run",
        "--kernel",
        "builtin:kutvmexit",
        "--append",
        "inl_from_kernel",
        "--irqchip",
        "split",
        "--timeout",
        "120",
    ]);
    let err = stderr(&o);
    assert_eq!(code(&o), 14, "stderr: {err}");
    assert!(err.contains("the 8259 PIC"), "{err}");
    assert!(err.contains("--irqchip kernel"), "{err}");

    // Without LAPICs there is no SMP: refused before the guest starts.
    let o = run(&[
        "run",
        "--kernel",
        "builtin:smp",
        "--smp",
        "2",
        "--irqchip",
        "none",
    ]);
    assert_eq!(code(&o), 2, "stderr: {}", stderr(&o));
}

/// Usage errors read as words with one prefix: no Rust range syntax or
/// parse-error text, the environment variable named when it was the cause,
/// a file that is no kernel named for what it is.
#[test]
fn errors_are_words_with_one_prefix() {
    for (args, want) in [
        (
            &["run", "--kernel", "k", "--smp", "0"][..],
            "trapline: error: invalid value '0' for --smp: expected a whole number from 1 to 64\n",
        ),
        (
            &["bench", "--repeat", "x"][..],
            "trapline: error: invalid value 'x' for --repeat: expected a whole number\n",
        ),
        (
            &["run", "--kernel", "k", "--cpu", "bogus"][..],
            "trapline: error: invalid value 'bogus' for --cpu: unknown CPU model 'bogus': trapline has host, max and qemu64\n",
        ),
        (
            &["run", "--kernel", "k", "--mem", "512X"][..],
            "trapline: error: invalid value '512X' for --mem: '512X' is not a size: write MiB (512) or a suffix (512M, 1G)\n",
        ),
    ] {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert!(!err.contains("..=") && !err.contains("invalid digit"), "{err}");
    }
    // A TRAPLINE_KVM that is a file, not a device.
    let file = tmp("not-kvm");
    std::fs::write(&file, "a file").unwrap();
    let o = trapline()
        .env("TRAPLINE_KVM", &file)
        .args(["run", "--kernel", "builtin:hello"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 6, "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "trapline: error: TRAPLINE_KVM={} is not a KVM device (it does not answer KVM_GET_API_VERSION)\n",
            file.display()
        )
    );
    // A compressed kernel is named as such.
    let gz = tmp("vmlinux.gz");
    std::fs::write(&gz, b"\x1f\x8b\x08\x00 compressed").unwrap();
    let o = run(&["run", "--kernel", gz.to_str().unwrap()]);
    if kvm_present("compressed kernel") {
        assert_eq!(code(&o), 4, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("the guest image is gzip-compressed data, not a kernel"),
            "{}",
            stderr(&o)
        );
        // TRAPLINE_STAT names itself when its file cannot be written.
        let o = trapline()
            .env("TRAPLINE_STAT", "/nonexistent/dir/s")
            .args(["run", "--kernel", "builtin:hello"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            "trapline: error: TRAPLINE_STAT=/nonexistent/dir/s: cannot open it for writing: no such file or directory\n"
        );
        // --mem takes -m's sizes.
        let o = run(&[
            "run",
            "--kernel",
            "builtin:hello",
            "--mem",
            "64M",
            "--timeout",
            "60",
        ]);
        assert_eq!(code(&o), 1, "{}", stderr(&o));
    }
}
