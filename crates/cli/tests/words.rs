//! Words, not internals, through real processes: errors without Rust's
//! "(os error N)", and the `--stat` JSON without sentinel integers.

mod common;
use common::*;

#[test]
fn errors_about_files_are_words_without_os_error_numbers() {
    let missing = "/nonexistent/trapline-words";
    let mut cases: Vec<Vec<String>> = vec![
        vec!["report".into(), missing.into()],
        vec!["report".into(), "/".into()],
        vec![
            "bench".into(),
            "--compare".into(),
            missing.into(),
            "--only".into(),
            "noop".into(),
        ],
        vec!["run".into(), "--kernel".into(), missing.into()],
        vec![
            "run".into(),
            "--kernel".into(),
            "builtin:hello".into(),
            "--initrd".into(),
            missing.into(),
        ],
        vec![
            "run".into(),
            "--kernel".into(),
            "builtin:hello".into(),
            "--disk".into(),
            missing.into(),
        ],
        vec![
            "run".into(),
            "--kernel".into(),
            "builtin:hello".into(),
            "--serial".into(),
            format!("file:{missing}/console"),
        ],
    ];
    // QEMU's spelling (x86's: arm64's needs -machine first).
    if cfg!(target_arch = "x86_64") {
        cases.push(vec!["-kernel".into(), missing.into()]);
    }
    for args in cases {
        let o = trapline().args(&args).output().unwrap();
        let err = stderr(&o);
        let what = args.join(" ");
        assert_ne!(code(&o), 0, "{what}");
        assert!(!err.contains("(os error"), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert!(
            err.to_lowercase().contains("no such file or directory")
                // Without /dev/kvm, QEMU's order fails on KVM first.
                || (what.starts_with("-kernel") && err.contains("KVM")),
            "{what}: {err}"
        );
    }
}

// The x86 hostile guest's ports overflow the key table; arm64's has no
// ports.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_stat_json_has_null_where_an_address_is_only_a_marker() {
    if !kvm_present("the_stat_json_has_null_where_an_address_is_only_a_marker") {
        return;
    }
    // The hostile guest touches more ports than the profile keeps keys
    // for, so the run has the key that counts the rest (`*:POUT`).
    let stat = tmp("hostile.json");
    let o = run(&[
        "run",
        "--kernel",
        "builtin:hostile",
        "--append",
        "n=4000 seed=3",
        "--stat-format",
        "json",
        &format!("--stat={}", stat.display()),
        "--timeout",
        "120",
    ]);
    assert!(o.status.success() || code(&o) == 1, "{}", stderr(&o));
    let text = std::fs::read_to_string(&stat).unwrap();
    assert!(!text.contains(&u64::MAX.to_string()), "a sentinel: {text}");
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys = j["total"]["keys"].as_array().expect("total keys");
    let over: Vec<_> = keys
        .iter()
        .filter(|k| k["key"].as_str().unwrap().starts_with("*:"))
        .collect();
    assert!(!over.is_empty(), "no overflow key: {text}");
    for k in over {
        assert!(k["addr"].is_null(), "{k}");
    }
    assert!(keys.iter().any(|k| k["addr"].is_u64()), "{text}");
}

#[test]
fn a_full_metrics_or_stat_file_is_one_warning_in_words() {
    if !kvm_present("a_full_metrics_or_stat_file_is_one_warning_in_words") {
        return;
    }
    for (flag, warning) in [
        (
            "--metrics-path=/dev/full",
            "trapline: warning: writing a metrics line failed: No space left on device\n",
        ),
        (
            "--stat=/dev/full",
            "trapline: warning: writing the --stat report failed: No space left on device\n",
        ),
    ] {
        let o = run(&[
            "run",
            "--kernel",
            "builtin:hello",
            "--timeout",
            "60",
            "--serial",
            "none",
            flag,
        ]);
        // The guest's own status stands: the profile is beside the point
        // (hello's exit 0 is isa-debug-exit's 1 on x86, a power-off on arm64).
        let hello = if cfg!(target_arch = "x86_64") { 1 } else { 0 };
        assert_eq!(code(&o), hello, "{flag}: {}", stderr(&o));
        assert_eq!(stderr(&o), warning, "{flag}");
    }
}
