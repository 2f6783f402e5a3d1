//! virtio-blk end to end: `builtin:vblk` (a minimal virtio-blk driver)
//! reads what the host wrote to the disk file and the host reads back what
//! the guest wrote, under every `--virtio-notify` × `--virtio-irq`
//! combination, with seccomp on; read-only disks refuse writes; a missing
//! or unreadable disk file is a usage error before the guest starts. On
//! both architectures: on arm64 `builtin:vblk` drives the `virt` machine's
//! first virtio-mmio transport (polling, its interrupt seen pending in the
//! GIC). Linux's own driver on every path too: the project's tiny Linux
//! on x86, Debian's stock arm64 kernel (with its virtio_mmio and virtio_blk
//! modules, `common/linux_arm64.rs`) on arm64.

mod common;

use common::*;

/// The status of the guest's `exit(0)`: isa-debug-exit's `(0 << 1) | 1`
/// on x86, PSCI SYSTEM_OFF on arm64.
const GUEST_OK: i32 = if cfg!(target_arch = "x86_64") { 1 } else { 0 };

const SECTORS: usize = 256;

fn disk(name: &str) -> (std::path::PathBuf, Vec<u8>) {
    let p = tmp(name);
    let bytes: Vec<u8> = (0..SECTORS * 512).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&p, &bytes).unwrap();
    (p, bytes)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The value of `key=` in the `trapline-virtio` line on stderr.
fn virtio_stat(err: &str, key: &str) -> u64 {
    let line = err
        .lines()
        .find(|l| l.starts_with("trapline-virtio disk=0"))
        .unwrap_or_else(|| panic!("no trapline-virtio line in:\n{err}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {line}"))
}

fn run_vblk(disk_arg: &str, notify: &str, irq: &str, extra: &[&str]) -> std::process::Output {
    let stat = tmp(&format!("stat-{notify}-{irq}.txt"));
    let stat_arg = format!("--stat={}", stat.display());
    let mut args = vec![
        "run",
        "--kernel",
        "builtin:vblk",
        "--disk",
        disk_arg,
        "--virtio-notify",
        notify,
        "--virtio-irq",
        irq,
        "--timeout",
        "120",
        &stat_arg,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn every_path_reads_what_the_host_wrote_and_writes_what_the_host_reads() {
    if !kvm_present("every_path_reads_what_the_host_wrote_and_writes_what_the_host_reads") {
        return;
    }
    for (notify, irq, event_idx) in [
        ("exit", "line", "on"),
        ("exit", "irqfd", "on"),
        ("ioeventfd", "line", "on"),
        ("ioeventfd", "irqfd", "on"),
        ("ioeventfd", "irqfd", "off"),
    ] {
        let what =
            format!("--virtio-notify {notify} --virtio-irq {irq} --virtio-event-idx {event_idx}");
        let (path, bytes) = disk(&format!("rw-{notify}-{irq}-{event_idx}.img"));
        let o = run_vblk(
            path.to_str().unwrap(),
            notify,
            irq,
            &["--virtio-event-idx", event_idx, "--append", "wsector=9"],
        );
        let out = stdout(&o);
        let err = stderr(&o);
        assert_eq!(
            code(&o),
            GUEST_OK,
            "{what}: the guest's exit(0)\n{out}\n{err}"
        );
        assert!(out.contains("vblk: OK"), "{what}:\n{out}");
        assert!(
            out.contains(&format!("head={}", hex(&bytes[..16]))),
            "{what}: the guest read the host's bytes:\n{out}"
        );
        let after = std::fs::read(&path).unwrap();
        assert!(
            after[9 * 512..].starts_with(b"VBLK-WROTE-9"),
            "{what}: the host reads the guest's write"
        );
        assert_eq!(after.len(), bytes.len());
        assert_eq!(
            after[..9 * 512],
            bytes[..9 * 512],
            "{what}: nothing else written"
        );
        assert_eq!(
            after[10 * 512..],
            bytes[10 * 512..],
            "{what}: nothing else written"
        );
        // Requests: read, write, flush.
        assert_eq!(virtio_stat(&err, "completions"), 3, "{what}");
        assert_eq!(virtio_stat(&err, "reads"), 1, "{what}");
        assert_eq!(virtio_stat(&err, "writes"), 1, "{what}");
        assert_eq!(virtio_stat(&err, "flushes"), 1, "{what}");
        assert!(virtio_stat(&err, "interrupts") >= 1, "{what}");
        assert_eq!(virtio_stat(&err, "resets_requested"), 0, "{what}");
        let irqs: u64 = out
            .lines()
            .find_map(|l| l.strip_prefix("vblk: irqs="))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if cfg!(target_arch = "aarch64") {
            // The arm64 guest waits for each request's edge in the GIC
            // before it sends the next and clears only an edge it saw, so
            // none may fold or go missing: every completion's interrupt
            // counts (issue 33: a clear after a read that saw nothing once
            // wiped edges latched in between, irqs=0..2).
            assert_eq!(
                irqs, 3,
                "{what}: every completion's interrupt reached the guest:\n{out}"
            );
        } else {
            // x86 counts in its interrupt handler, with EVENT_IDX on some
            // paths: completions may share one interrupt.
            assert!(
                irqs >= 1,
                "{what}: completion interrupts reached the guest:\n{out}"
            );
        }
    }
}

#[test]
fn a_read_only_disk_refuses_writes() {
    if !kvm_present("a_read_only_disk_refuses_writes") {
        return;
    }
    let (path, bytes) = disk("ro.img");
    let arg = format!("{},ro", path.display());
    let o = run_vblk(&arg, "ioeventfd", "irqfd", &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), GUEST_OK, "{out}\n{}", stderr(&o));
    assert!(out.contains("read-only"), "{out}");
    assert!(out.contains("vblk: write status=1"), "IOERR:\n{out}");
    assert!(out.contains("vblk: OK"), "{out}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file is untouched"
    );
    assert_eq!(virtio_stat(&stderr(&o), "errors"), 1);
}

#[test]
fn missing_or_unreadable_disks_are_usage_errors() {
    let missing = tmp("no-such-disk.img");
    let dir = tmp("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let empty = tmp("empty.img");
    std::fs::write(&empty, b"").unwrap();
    // A FIFO nobody writes: opening it read-only would wait for a writer.
    let fifo = tmp("disk.fifo");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (arg, says) in [
        (missing.display().to_string(), "cannot open disk file"),
        (format!("{},ro", missing.display()), "read-only"),
        (dir.display().to_string(), "disk file"),
        (empty.display().to_string(), "at least one 512-byte sector"),
        (format!("{},ro", fifo.display()), "not a regular file"),
        ("/dev/zero".to_string(), "not a regular file"),
    ] {
        let o = run(&["run", "--kernel", "builtin:hello", "--disk", &arg]);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "--disk {arg}: {err}");
        assert!(err.contains(says), "--disk {arg}: {err}");
        assert!(stdout(&o).is_empty(), "the guest never started");
    }
}

/// Linux's own virtio-blk driver on every path: one boot per combination
/// reads the host's bytes from /dev/vda and writes its own, and cannot write
/// the read-only /dev/vdb. Four boots of ~20 s each on an idle host
/// (minutes on a loaded one). Two of them on the hardware-reduced ACPI
/// machine (`--acpi reduced`, one per interrupt path), where the DSDT
/// declares the transports instead of the command line: each interrupt
/// path is then met with both ways of finding its GSI.
#[cfg(target_arch = "x86_64")]
#[test]
fn linux_reads_and_writes_vda_on_every_path() {
    use common::linux_x86::{boot_builtin, kvm_and_vmlinux};
    let Some(kernel) = kvm_and_vmlinux("linux_reads_and_writes_vda_on_every_path") else {
        return;
    };
    for (notify, irq, acpi) in [
        ("exit", "line", "full"),
        ("exit", "irqfd", "reduced"),
        ("ioeventfd", "line", "reduced"),
        ("ioeventfd", "irqfd", "full"),
    ] {
        let what = format!("Linux, --virtio-notify {notify} --virtio-irq {irq} --acpi {acpi}");
        let (vda, bytes) = disk(&format!("linux-{notify}-{irq}.img"));
        let (vdb, ro_bytes) = disk(&format!("linux-{notify}-{irq}-ro.img"));
        let vdb_arg = format!("{},ro", vdb.display());
        let o = boot_builtin(
            &kernel,
            "builtin:vblktest",
            (notify, irq),
            "vblk.woff=65536",
            &[
                "--disk",
                vda.to_str().unwrap(),
                "--disk",
                &vdb_arg,
                "--acpi",
                acpi,
            ],
        );
        let out = stdout(&o);
        assert!(out.contains("VBLK-DONE"), "{what}: {out}\n{}", stderr(&o));
        assert_eq!(code(&o), 1, "{what}: isa-debug-exit 0\n{out}");
        assert!(
            out.contains(&format!("VBLK-READ ret=4096 head={}", hex(&bytes[..16]))),
            "{what}: Linux read the host's bytes:\n{out}"
        );
        assert!(out.contains("VBLK-WRITE ret=4096 fsync=0"), "{what}: {out}");
        let after = std::fs::read(&vda).unwrap();
        assert!(
            after[65536..].starts_with(b"LINUX-WROTE-65536"),
            "{what}: the host reads Linux's write"
        );
        assert_eq!(after[..65536], bytes[..65536], "{what}");
        assert_eq!(after[65536 + 4096..], bytes[65536 + 4096..], "{what}");
        // The read-only disk: Linux (6.1) opens it for writing but the write
        // fails, as does one through a read-only descriptor; the file is
        // untouched.
        assert!(
            out.contains("VBLK-VDB-OPEN-RW err=") || out.contains("VBLK-VDB-WRITE-RW ret=-"),
            "{what}: {out}"
        );
        assert!(out.contains("VBLK-VDB-WRITE ret=-"), "{what}: {out}");
        assert_eq!(
            std::fs::read(&vdb).unwrap(),
            ro_bytes,
            "{what}: /dev/vdb untouched"
        );
    }
}

/// Debian's arm64 kernel and its own virtio-blk driver on the two paths
/// tests/linux_arm64.rs's boots do not take (those take `exit` + `line`
/// and `ioeventfd` + `irqfd`): one boot each reads the host's bytes from
/// /dev/vda, writes its own (fsync'd) and cannot write the read-only
/// /dev/vdb. Tens of seconds a boot under the emulated host (nothing is
/// timed).
#[cfg(target_arch = "aarch64")]
#[test]
fn debian_linux_reads_and_writes_vda_on_exit_irqfd_and_ioeventfd_line() {
    use common::linux_arm64::{after, boot, linux_guest, Disks, APPEND, DISK_APPEND};
    let test = "debian_linux_reads_and_writes_vda_on_exit_irqfd_and_ioeventfd_line";
    if !kvm_present(test) {
        return;
    }
    let Some(guest) = linux_guest(test) else {
        return;
    };
    let append = format!("{APPEND} {DISK_APPEND}");
    for (notify, irq) in [("exit", "irqfd"), ("ioeventfd", "line")] {
        let what = format!("Linux, --virtio-notify {notify} --virtio-irq {irq}");
        let disks = Disks::new(&format!("linux-{notify}-{irq}"));
        let mut args = vec!["--timeout", "240", "--append", &append];
        let disk_args = disks.args(notify, irq);
        args.extend(disk_args.iter().map(String::as_str));
        let o = boot(guest, &args, None);
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(
            after(&out, "LINUX-ARM64-END"),
            Some("poweroff"),
            "{what}: init ran to its end:\n{out}\n{err}"
        );
        assert_eq!(code(&o), 0, "{what}: PSCI SYSTEM_OFF\n{out}\n{err}");
        disks.check(&out, &what);
    }
}
