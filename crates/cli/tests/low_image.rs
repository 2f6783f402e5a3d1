//! Images QEMU's `-kernel` loads, trapline loads: a Multiboot image linked
//! at 0x8000 (`builtin:realmode`, shaped like kvm-unit-tests' real-mode
//! tests) boots, drops to 16-bit real mode, computes its result there and
//! exits through isa-debug-exit with status 165, on trapline and on QEMU.
//! KVM tests skip loudly without /dev/kvm, the QEMU comparison without QEMU.
#![cfg(target_arch = "x86_64")]

mod common;
use common::*;

/// (82 << 1) | 1: the payload's "all went well" value through isa-debug-exit.
const REALMODE_OK: i32 = 165;

/// The line the payload prints from real mode, and the MBI address in it.
fn realmode_line(out: &str) -> Option<(&str, u64)> {
    let line = out
        .lines()
        .find(|l| l.starts_with("realmode: 16-bit real mode at CS:IP 0000:"))?;
    let mbi = line.split("MBI at ").nth(1)?.get(..8)?;
    Some((line, u64::from_str_radix(mbi, 16).ok()?))
}

fn check_trapline_run(o: &std::process::Output, what: &str) -> u64 {
    let out = stdout(o);
    assert_eq!(code(o), REALMODE_OK, "{what}: {out}\n{}", stderr(o));
    let (line, mbi) = realmode_line(&out).unwrap_or_else(|| panic!("{what}: {out}"));
    assert!(line.ends_with(", exit 0052"), "{what}: {line}");
    // The boot structures moved out of the image's way (0x8000..0x9000):
    // the MBI is neither in the image nor at its old place inside it.
    assert!(!(0x8000..0x9000).contains(&mbi), "{what}: {line}");
    assert!(mbi >= 0x1000, "{what}: {line}");
    mbi
}

#[test]
fn an_image_linked_at_0x8000_runs_16_bit_code_and_exits() {
    if !kvm_present("low image") {
        return;
    }
    let k = payload_file("realmode");
    let o = run(&["run", "--kernel", k.to_str().unwrap(), "--timeout", "240"]);
    let mbi = check_trapline_run(&o, "file");
    // The boot area's first free place after the image, MBI 0x7000 into it.
    assert_eq!(mbi, 0x9000 + 0x7000);

    let o = run(&["run", "--kernel", "builtin:realmode", "--timeout", "240"]);
    check_trapline_run(&o, "builtin");
}

#[test]
fn with_qemus_spellings_an_initrd_and_1_mib_of_ram() {
    if !kvm_present("low image, QEMU spellings") {
        return;
    }
    // run_tests.sh-style: an initrd (placed at 1 MiB) and arguments; the
    // boot area must avoid both the image and the initrd.
    let k = payload_file("realmode");
    let env = tmp("realmode.env");
    std::fs::write(&env, "NR_CPUS=1\nMEMSIZE=2\n").unwrap();
    let o = run(&[
        "-nodefaults",
        "-no-reboot",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x4",
        "-m",
        "2",
        "-kernel",
        k.to_str().unwrap(),
        "-append",
        "a b c",
        "-initrd",
        env.to_str().unwrap(),
    ]);
    check_trapline_run(&o, "QEMU spellings");
    let o = run(&[
        "run",
        "--kernel",
        "builtin:realmode",
        "--mem",
        "1",
        "--timeout",
        "240",
    ]);
    check_trapline_run(&o, "1 MiB");
}

#[test]
fn qemu_runs_the_same_image_with_the_same_status() {
    if !kvm_present("low image vs QEMU") {
        return;
    }
    let k = payload_file("realmode");
    let Some(q) = qemu(&k, &[]) else {
        return;
    };
    let qout = stdout(&q);
    assert_eq!(
        q.status.code(),
        Some(REALMODE_OK),
        "QEMU: {qout}\n{}",
        stderr(&q)
    );
    let (qline, _) = realmode_line(&qout).unwrap_or_else(|| panic!("QEMU: {qout}"));
    let o = run(&["run", "--kernel", k.to_str().unwrap(), "--timeout", "240"]);
    check_trapline_run(&o, "trapline");
    let out = stdout(&o);
    let (line, _) = realmode_line(&out).unwrap();
    // Same code at the same address; only where the MBI is differs.
    let before_mbi = |l: &str| l.split(", MBI at").next().unwrap().to_string();
    assert_eq!(before_mbi(line), before_mbi(qline), "{line}\n{qline}");
}
