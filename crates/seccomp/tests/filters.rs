//! The filters on real threads: allowed syscalls still work, forbidden ones
//! are refused. No /dev/kvm needed: KVM ioctl requests are issued on an
//! eventfd, where an allowed one gets ENOTTY from the kernel and a refused
//! one never reaches it.
//!
//! A trapping filter (vCPU, helper) ends the process, so those cases run in
//! a child: the test binary re-executes itself with `TRAPLINE_SECCOMP_CHILD`
//! naming the case, and only `child_entry` acts on it.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use trapline_seccomp::{filter, install, install_program, ioctls, ThreadKind, BAD_SYSCALL_STATUS};

const CHILD_ENV: &str = "TRAPLINE_SECCOMP_CHILD";
/// A request no list allows (KVM_CREATE_VM).
const KVM_CREATE_VM: u32 = 0xae01;

/// Run `f` on a new thread named `name` under `kind`'s filter. `f` must
/// not panic (a panic backtrace opens files, which a vCPU filter traps):
/// return what to check and assert outside.
fn filtered<T: Send + 'static>(
    kind: ThreadKind,
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            install(kind).expect("install");
            f()
        })
        .expect("spawn")
        .join()
        .expect("filtered thread panicked")
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `ret` of a libc call and its errno (0 on success).
fn res(ret: i64) -> (i64, i32) {
    (ret, if ret < 0 { errno() } else { 0 })
}

fn eventfd() -> OwnedFd {
    // SAFETY: plain syscall; the fd is owned by the returned OwnedFd.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    assert!(fd >= 0, "eventfd: {}", std::io::Error::last_os_error());
    // SAFETY: fd is new and ours.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn ioctl(fd: i32, request: u32) -> (i64, i32) {
    // SAFETY: KVM requests on an eventfd fail with ENOTTY without touching
    // the (null) argument.
    res(unsafe { libc::ioctl(fd, request as _, 0usize) } as i64)
}

fn socket() -> (i64, i32) {
    // SAFETY: plain syscall; a returned fd is closed right away.
    let r = res(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) } as i64);
    if r.0 >= 0 {
        // SAFETY: the fd was just returned to us.
        unsafe { libc::close(r.0 as i32) };
    }
    r
}

fn open_new_file() -> (i64, i32) {
    let path = std::env::temp_dir().join(format!("trapline-seccomp-{}", std::process::id()));
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: plain syscall with a valid C string.
    let r = res(unsafe { libc::open(c.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o600) } as i64);
    if r.0 >= 0 {
        // SAFETY: as above.
        unsafe { libc::close(r.0 as i32) };
        let _ = std::fs::remove_file(&path);
    }
    r
}

/// execve of a path that does not exist: ENOENT when allowed, so a broken
/// filter never replaces the test process.
fn execve_missing() -> (i64, i32) {
    let path = CString::new("/nonexistent/trapline-seccomp-test").unwrap();
    let argv = [path.as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null()];
    // SAFETY: valid, null-terminated argv and envp.
    res(unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr()) } as i64)
}

fn mmap_exec() -> (i64, i32) {
    // SAFETY: anonymous mapping, unmapped right away if it was made.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_EXEC,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        (-1, errno())
    } else {
        // SAFETY: we just mapped it.
        unsafe { libc::munmap(p, 4096) };
        (0, 0)
    }
}

// ---------------------------------------------------------------- children

/// Entry point of the re-executed child; a no-op in a normal test run.
#[test]
fn child_entry() {
    let Ok(case) = std::env::var(CHILD_ENV) else {
        return;
    };
    // A thread spawn dies of a plain SIGSYS: leave no core file behind.
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscall on a valid struct.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) };
    let (kind, name) = if case.starts_with("helper-") {
        (ThreadKind::Helper, "doorbell")
    } else {
        (ThreadKind::Vcpu, "vcpu0")
    };
    // Made before the filter: helpers may not create fds.
    let evt = eventfd();
    let fd = evt.as_raw_fd();
    let result = filtered(kind, name, move || match case.as_str() {
        "vcpu-socket" => socket(),
        "vcpu-execve" => execve_missing(),
        "vcpu-open" => open_new_file(),
        "vcpu-mmap-exec" => mmap_exec(),
        "vcpu-ioctl" => ioctl(fd, KVM_CREATE_VM),
        "vcpu-spawn" => (
            std::thread::Builder::new()
                .spawn(|| ())
                .map(|_| 0)
                .unwrap_or(-1),
            0,
        ),
        "helper-kvm-run" => ioctl(fd, ioctls::KVM_RUN),
        other => (-2, other.len() as i32),
    });
    // Only reached if the filter let the call through.
    drop(evt);
    eprintln!("CHILD-SURVIVED {result:?}");
    std::process::exit(0);
}

/// Run `case` in a child and return how it ended and its stderr.
fn run_child(case: &str) -> (std::process::ExitStatus, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, case)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("re-executing the test binary");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run `case` in a child and check its filter trapped it: the reporter's
/// message naming `expect`, then exit status 159.
fn expect_trapped(case: &str, expect: &[&str]) {
    let (status, stderr) = run_child(case);
    assert_eq!(
        status.code(),
        Some(BAD_SYSCALL_STATUS),
        "{case}: child ended with {status:?}\nstderr:\n{stderr}"
    );
    for e in expect {
        assert!(stderr.contains(e), "{case}: no {e:?} in stderr:\n{stderr}");
    }
    assert!(
        stderr.contains("--no-seccomp"),
        "{case}: no hint in:\n{stderr}"
    );
}

#[test]
fn vcpu_socket_is_trapped() {
    let want = format!("socket (#{})", libc::SYS_socket);
    expect_trapped("vcpu-socket", &["vcpu0 (vcpu filter)", &want]);
}

#[test]
fn vcpu_execve_is_trapped() {
    expect_trapped("vcpu-execve", &[&format!("execve (#{})", libc::SYS_execve)]);
}

#[test]
fn vcpu_open_is_trapped() {
    // glibc's open() is openat(2).
    expect_trapped("vcpu-open", &[&format!("openat (#{})", libc::SYS_openat)]);
}

#[test]
fn vcpu_executable_mapping_is_trapped() {
    expect_trapped("vcpu-mmap-exec", &[&format!("mmap (#{})", libc::SYS_mmap)]);
}

#[test]
fn vcpu_other_kvm_ioctl_is_trapped() {
    let want = format!("ioctl (#{}) request 0xae01", libc::SYS_ioctl);
    expect_trapped("vcpu-ioctl", &[&want]);
}

#[test]
fn vcpu_cannot_spawn_threads() {
    // glibc blocks every signal around clone3, so the kernel cannot run the
    // reporter and kills the process with SIGSYS itself: no message, but
    // no thread either.
    use std::os::unix::process::ExitStatusExt;
    let (status, stderr) = run_child("vcpu-spawn");
    assert!(
        status.signal() == Some(libc::SIGSYS) || status.code() == Some(BAD_SYSCALL_STATUS),
        "child ended with {status:?}\nstderr:\n{stderr}"
    );
    assert!(!stderr.contains("CHILD-SURVIVED"), "{stderr}");
}

#[test]
fn helper_kvm_run_is_trapped() {
    expect_trapped(
        "helper-kvm-run",
        &["doorbell (helper filter)", "request 0xae80 = KVM_RUN"],
    );
}

// ------------------------------------------------- allowed under the filter

#[test]
fn vcpu_allowed_syscalls_still_work() {
    let (mut rd, wr) = std::io::pipe().unwrap();
    let evt = eventfd();
    let evt_fd = evt.as_raw_fd();
    let lock = Arc::new(Mutex::new(0u64));
    let held = lock.lock().unwrap();
    let (tx, rx) = mpsc::channel::<&'static str>();
    let lock2 = lock.clone();
    let worker = std::thread::Builder::new()
        .name("vcpu0".into())
        .spawn(move || {
            install(ThreadKind::Vcpu).expect("install");
            let mut w = wr;
            let mut out: Vec<(&str, i64, i32)> = Vec::new();
            // UART-style output.
            out.push((
                "write pipe",
                w.write(b"guest says hi").map(|n| n as i64).unwrap_or(-1),
                0,
            ));
            drop(w);
            // Instant::now without the vDSO.
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: valid timespec pointer.
            let r =
                unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts) };
            out.push(("clock_gettime", r, 0));
            let _ = Instant::now();
            // eventfd signal and read back.
            let one = 1u64.to_ne_bytes();
            // SAFETY: 8-byte buffers on an eventfd.
            let r = unsafe { libc::write(evt_fd, one.as_ptr().cast(), 8) } as i64;
            out.push(("eventfd write", r, 0));
            let mut buf = [0u8; 8];
            // SAFETY: as above.
            let r = unsafe { libc::read(evt_fd, buf.as_mut_ptr().cast(), 8) } as i64;
            out.push(("eventfd read", r, 0));
            out.push(("eventfd value", u64::from_ne_bytes(buf) as i64, 0));
            // A new eventfd (PCI BAR ioeventfds).
            let e2 = eventfd();
            drop(e2);
            // KVM_RUN and the register read pass the filter: ENOTTY is
            // the kernel's.
            let (r, e) = ioctl(evt_fd, ioctls::KVM_RUN);
            out.push(("KVM_RUN on eventfd", r, e));
            #[cfg(target_arch = "x86_64")]
            let (name, request) = ("KVM_GET_REGS on eventfd", ioctls::KVM_GET_REGS);
            #[cfg(target_arch = "aarch64")]
            let (name, request) = ("KVM_GET_ONE_REG on eventfd", ioctls::KVM_GET_ONE_REG);
            let (r, e) = ioctl(evt_fd, request);
            out.push((name, r, e));
            // A contended Mutex (futex wait, woken by the test thread).
            tx.send("waiting").unwrap();
            *lock2.lock().unwrap() += 1;
            // Allocation: small, large (mmap), growing (mremap), HashMap
            // (getrandom for its seed).
            let mut v = vec![0u8; 8 << 20];
            v.resize(64 << 20, 1);
            out.push(("big vec", v[(64 << 20) - 1] as i64, 0));
            drop(v);
            let m: std::collections::HashMap<u32, String> =
                (0..100).map(|i| (i, format!("{i}"))).collect();
            out.push(("hashmap", m.len() as i64, 0));
            tx.send("done").unwrap();
            out
        })
        .unwrap();
    assert_eq!(rx.recv().unwrap(), "waiting");
    std::thread::sleep(Duration::from_millis(50));
    drop(held);
    assert_eq!(rx.recv().unwrap(), "done");
    let out = worker.join().expect("vcpu thread");
    let mut text = String::new();
    rd.read_to_string(&mut text).unwrap();
    assert_eq!(text, "guest says hi");
    assert_eq!(*lock.lock().unwrap(), 1);
    let get = |k: &str| {
        *out.iter()
            .find(|o| o.0 == k)
            .unwrap_or_else(|| panic!("{k}"))
    };
    assert_eq!(get("write pipe").1, 13);
    assert_eq!(get("clock_gettime").1, 0);
    assert_eq!(get("eventfd write").1, 8);
    assert_eq!(get("eventfd read").1, 8);
    assert_eq!(get("eventfd value").1, 1);
    assert_eq!(
        get("KVM_RUN on eventfd"),
        ("KVM_RUN on eventfd", -1, libc::ENOTTY)
    );
    #[cfg(target_arch = "x86_64")]
    assert_eq!(get("KVM_GET_REGS on eventfd").2, libc::ENOTTY);
    #[cfg(target_arch = "aarch64")]
    assert_eq!(get("KVM_GET_ONE_REG on eventfd").2, libc::ENOTTY);
    assert_eq!(get("big vec").1, 1);
    assert_eq!(get("hashmap").1, 100);
}

#[test]
fn helper_waits_on_eventfds() {
    let evt = Arc::new(eventfd());
    let e = evt.clone();
    let consumer = std::thread::Builder::new()
        .name("doorbell".into())
        .spawn(move || {
            install(ThreadKind::Helper).expect("install");
            let mut pfd = libc::pollfd {
                fd: e.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut pfd, 1, 5000) };
            let mut buf = [0u8; 8];
            // SAFETY: 8-byte read from an eventfd.
            let r = unsafe { libc::read(e.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
            std::thread::sleep(Duration::from_millis(1));
            (n, r, u64::from_ne_bytes(buf))
        })
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let five = 5u64.to_ne_bytes();
    // SAFETY: an 8-byte write from a live 8-byte buffer to an eventfd.
    let written = unsafe { libc::write(evt.as_raw_fd(), five.as_ptr().cast(), 8) };
    assert_eq!(written, 8);
    assert_eq!(consumer.join().unwrap(), (1, 8, 5));
}

// ------------------------------------------------ the controller: EPERM

#[test]
fn vmm_main_refuses_with_eperm() {
    let evt = eventfd();
    let fd = evt.as_raw_fd();
    let out = filtered(ThreadKind::VmmMain, "trapline-main", move || {
        let spawn = std::thread::Builder::new()
            .spawn(|| ())
            .map(|_| ())
            .map_err(|e| e.raw_os_error());
        let other_pid = 1;
        // SAFETY: signal 0 only checks for existence.
        let tgkill_other = res(unsafe { libc::syscall(libc::SYS_tgkill, other_pid, other_pid, 0) });
        // SAFETY: as above, at our own thread.
        let tgkill_self =
            res(unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), 0) });
        vec![
            ("socket", socket()),
            ("open", open_new_file()),
            ("execve", execve_missing()),
            ("mmap exec", mmap_exec()),
            ("KVM_RUN", ioctl(fd, ioctls::KVM_RUN)),
            ("KVM_IOEVENTFD", ioctl(fd, ioctls::KVM_IOEVENTFD)),
            ("tgkill other", tgkill_other),
            ("tgkill self", tgkill_self),
            (
                "spawn",
                (
                    if spawn.is_ok() { 0 } else { -1 },
                    spawn.err().flatten().unwrap_or(0),
                ),
            ),
        ]
    });
    let get = |k: &str| out.iter().find(|o| o.0 == k).unwrap().1;
    for k in [
        "socket",
        "open",
        "execve",
        "mmap exec",
        "KVM_RUN",
        "tgkill other",
        "spawn",
    ] {
        assert_eq!(get(k), (-1, libc::EPERM), "{k}");
    }
    // Allowed: the teardown ioctl reaches the kernel (ENOTTY on an
    // eventfd), and the kick path's tgkill at our own threads works.
    assert_eq!(get("KVM_IOEVENTFD"), (-1, libc::ENOTTY));
    assert_eq!(get("tgkill self"), (0, 0));
}

#[test]
fn a_program_built_elsewhere_installs() {
    let prog = filter(ThreadKind::VmmMain).unwrap();
    let r = std::thread::spawn(move || {
        install_program(ThreadKind::VmmMain, &prog).unwrap();
        socket()
    })
    .join()
    .unwrap();
    assert_eq!(r, (-1, libc::EPERM));
}

#[test]
fn the_filter_stays_on_its_thread() {
    filtered(ThreadKind::VmmMain, "filtered", || ());
    // This thread never installed one.
    let r = socket();
    assert!(r.0 >= 0 || r.1 != libc::EPERM, "{r:?}");
}

/// Cost of the vCPU filter per allowed ioctl (KVM_RUN on an eventfd, which
/// the kernel refuses at once). `cargo test -p trapline-seccomp --test
/// filters -- --ignored --nocapture filter_cost`.
#[test]
#[ignore]
fn filter_cost() {
    fn per_call() -> f64 {
        let evt = eventfd();
        let n = 2_000_000u32;
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..n {
                let _ = ioctl(evt.as_raw_fd(), ioctls::KVM_RUN);
            }
            best = best.min(t.elapsed().as_nanos() as f64 / f64::from(n));
        }
        best
    }
    let plain = std::thread::spawn(per_call).join().unwrap();
    let vcpu = filtered(ThreadKind::Vcpu, "vcpu0", per_call);
    println!(
        "ioctl(eventfd, KVM_RUN): {plain:.1} ns unfiltered, {vcpu:.1} ns under the vcpu filter: +{:.1} ns per KVM_RUN",
        vcpu - plain
    );
}
