//! The MC146818 RTC and ACPI S3 end to end: `builtin:rtc` (CMOS bytes, the
//! UIP cycle, register C, the alarm interrupt on IRQ 8) and `builtin:s3`
//! (suspend with an RTC alarm armed, wake at a real-mode FACS waking
//! vector that exits with 0x2a), on trapline with seccomp on (the
//! default), and on QEMU when it is installed, which must agree. KVM tests
//! skip loudly without /dev/kvm, the comparison without QEMU.
#![cfg(target_arch = "x86_64")]

mod common;
use common::*;

/// Status of isa-debug-exit value 0 (every rtc check passed).
const RTC_PASSED: i32 = 1;
/// Status of the s3 payload's waking routine: value 0x2a.
const S3_RESUMED: i32 = 85;
/// The machine is loaded in CI: generous limits, never timing assertions.
const TIMEOUT_S: &str = "120";

fn pass_lines(out: &str) -> Vec<&str> {
    out.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| l.starts_with("PASS: ") || l.starts_with("FAIL: "))
        .collect()
}

#[test]
fn rtc_uip_cycle_cmos_bytes_and_alarm_interrupt() {
    if !kvm_present("rtc payload") {
        return;
    }
    let k = payload_file("rtc");
    let o = run(&[
        "run",
        "--kernel",
        k.to_str().unwrap(),
        "--timeout",
        TIMEOUT_S,
    ]);
    let out = stdout(&o);
    assert_eq!(
        code(&o),
        RTC_PASSED,
        "stdout: {out}\nstderr: {}",
        stderr(&o)
    );
    let lines = pass_lines(&out);
    assert!(lines.iter().all(|l| l.starts_with("PASS")), "{out}");
    for want in [
        "UIP: the seconds advance across the update",
        "register C: cleared by reading",
        "alarm: IRQ 8 arrived",
        "alarm: fired at the armed second",
        "CMOS base memory is 640 KiB",
    ] {
        assert!(
            lines.contains(&format!("PASS: {want}").as_str()),
            "{want}: {out}"
        );
    }
    if let Some(q) = qemu(&k, &[]) {
        let qout = stdout(&q);
        assert_eq!(q.status.code(), Some(RTC_PASSED), "QEMU: {qout}");
        assert_eq!(pass_lines(&qout), lines, "trapline and QEMU disagree");
    }
}

#[test]
fn s3_suspend_wakes_on_the_rtc_alarm_at_the_real_mode_waking_vector() {
    if !kvm_present("s3 payload") {
        return;
    }
    let k = payload_file("s3");
    // x2apic=1: the BSP is in x2APIC mode when it suspends, as
    // kvm-unit-tests' start-up code leaves it.
    for (cpus, append) in [("1", ""), ("2", ""), ("1", "x2apic=1")] {
        let o = run(&[
            "run",
            "--kernel",
            k.to_str().unwrap(),
            "--smp",
            cpus,
            "--append",
            append,
            "--timeout",
            TIMEOUT_S,
        ]);
        let out = stdout(&o);
        assert_eq!(
            code(&o),
            S3_RESUMED,
            "{cpus} vCPUs, {append:?}: stdout: {out}\nstderr: {}",
            stderr(&o)
        );
        assert!(out.contains("s3: entering S3"), "{out}");
        assert!(!out.contains("FAIL"), "{out}");
    }
    // QEMU's `-M pc` honours S3 unless PIIX4_PM.disable_s3 is set; say it.
    if let Some(q) = qemu(&k, &["-global", "PIIX4_PM.disable_s3=0"]) {
        assert_eq!(q.status.code(), Some(S3_RESUMED), "QEMU: {}", stdout(&q));
    }
}

#[test]
fn s3_with_no_wake_event_sleeps_until_the_timeout() {
    if !kvm_present("s3 without wake") {
        return;
    }
    // The same payload, but RTC_EN is never set: the guest's alarm is not
    // a wake event, so the machine sleeps until --timeout ends the run.
    let k = payload_file("s3");
    let o = run(&[
        "run",
        "--kernel",
        k.to_str().unwrap(),
        "--timeout",
        "4",
        "--append",
        "rtc-wake=0",
    ]);
    assert_eq!(
        code(&o),
        124,
        "stdout: {}\nstderr: {}",
        stdout(&o),
        stderr(&o)
    );
    assert!(stdout(&o).contains("s3: entering S3"));
    assert!(
        stderr(&o).contains("while the guest was suspended (ACPI S3)"),
        "{}",
        stderr(&o)
    );
}
