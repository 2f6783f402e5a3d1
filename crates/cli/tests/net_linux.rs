//! Linux's own virtio-net driver on trapline's card: the guest brings eth0
//! up from its own init and exchanges UDP (crates/guest's `nettest`, every
//! byte checked) with the host side, then powers off.
//!
//! - x86_64, the shared tiny Linux (CONFIG_VIRTIO_NET=y) with
//!   `--initrd builtin:nettest` as /init: every notify × irq path, four
//!   boots, two on the echo back end (the guest sees each datagram come
//!   back through eth0) and two on a TAP in a network namespace the test
//!   makes, with a UDP echo there; `--stat` shows the QueueNotify exits on
//!   the exit path and none on the ioeventfd path. vhost-net where the host
//!   has /dev/vhost-net (this project's x86 host has not: skipped loudly).
//! - arm64, Debian's kernel (virtio_net as a module, eth0 brought up with
//!   busybox `ip`, `/bin/nettest` for the exchange) in the emulated ARM64
//!   host, whose init loads tun and vhost_net: a TAP on ioeventfd + line,
//!   and vhost-net, where `--stat` shows no data-path exit and trapline's
//!   device never saw a frame.
//!
//! Skips loudly without /dev/kvm, the kernel, or a network namespace
//! (CAP_SYS_ADMIN / CAP_NET_ADMIN). Nothing is timed: the timeouts are
//! bounds, generous for a loaded or emulated host.

mod common;

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use common::*;

/// The TAP trapline creates in the test's namespace.
const TAP: &str = "tlnet0";
/// The host's address on it, the UDP echo's port, the guest's address.
const HOST_IP: [u8; 4] = [10, 0, 2, 1];
const ECHO_PORT: u16 = 7;
const GUEST_IP: &str = "10.0.2.2";
/// Datagrams per exchange (nettest's `net.count=`).
const COUNT: u64 = 8;

/// Runs `f` on a thread in a new network namespace (namespaces are per
/// thread; what it spawns, trapline included, inherits it); `None`, said
/// loudly, where the host refuses one.
fn in_netns<T: Send>(test: &str, f: impl FnOnce() -> T + Send) -> Option<T> {
    if !std::path::Path::new("/dev/net/tun").exists() {
        eprintln!(
            "SKIPPED {test}: /dev/net/tun does not exist (modprobe tun) — this test did NOT run"
        );
        return None;
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: unshare changes this thread's network namespace only.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                eprintln!(
                    "SKIPPED {test}: cannot make a network namespace ({}): run as root (CAP_SYS_ADMIN and CAP_NET_ADMIN) — this test did NOT run",
                    std::io::Error::last_os_error()
                );
                return None;
            }
            // No IPv6 autoconfiguration traffic on the new interfaces.
            for k in ["all", "default"] {
                let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{k}/disable_ipv6"), "1");
            }
            Some(f())
        })
        .join()
        .unwrap()
    })
}

/// SIOCSIFADDR, SIOCSIFNETMASK and IFF_UP on `name`, through a socket of
/// the calling thread's namespace; false while the interface is not there.
fn configure(name: &str, addr: [u8; 4]) -> bool {
    // SAFETY: plain socket(2), closed below.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    assert!(s >= 0, "socket: {}", std::io::Error::last_os_error());
    let req = |value: Option<[u8; 4]>| {
        // SAFETY: an all-zero ifreq is valid.
        let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
        for (d, b) in r.ifr_name.iter_mut().zip(name.bytes()) {
            *d = b as libc::c_char;
        }
        if let Some(a) = value {
            // SAFETY: an all-zero sockaddr_in is valid.
            let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_addr.s_addr = u32::from_ne_bytes(a);
            // SAFETY: a sockaddr_in fits the ifreq's sockaddr (16 bytes each).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (&raw const sin).cast::<u8>(),
                    (&raw mut r.ifr_ifru).cast::<u8>(),
                    std::mem::size_of::<libc::sockaddr_in>(),
                )
            };
        }
        r
    };
    let ioctl = |request: libc::c_ulong, r: &mut libc::ifreq| {
        // SAFETY: each request reads or fills one ifreq.
        unsafe { libc::ioctl(s, request as _, r as *mut libc::ifreq) == 0 }
    };
    let ok = ioctl(libc::SIOCSIFADDR, &mut req(Some(addr)))
        && ioctl(libc::SIOCSIFNETMASK, &mut req(Some([255, 255, 255, 0])))
        && {
            let mut r = req(None);
            ioctl(libc::SIOCGIFFLAGS, &mut r) && {
                // SAFETY: SIOCGIFFLAGS filled the flags member.
                unsafe { r.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
                ioctl(libc::SIOCSIFFLAGS, &mut r)
            }
        };
    // SAFETY: our socket.
    unsafe { libc::close(s) };
    ok
}

/// The host side of a TAP boot, on its own thread in the namespace: gives
/// the TAP trapline creates its address as soon as it appears, and echoes
/// every UDP datagram that reaches port 7 until `stop`.
struct HostSide {
    stop: AtomicBool,
    configured: AtomicBool,
    echoed: AtomicU64,
}

impl HostSide {
    fn serve(&self) {
        let sock = UdpSocket::bind(("0.0.0.0", ECHO_PORT)).expect("bind the UDP echo");
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut buf = [0u8; 2048];
        while !self.stop.load(Ordering::Relaxed) {
            if !self.configured.load(Ordering::Relaxed) && configure(TAP, HOST_IP) {
                self.configured.store(true, Ordering::Relaxed);
            }
            if let Ok((n, from)) = sock.recv_from(&mut buf) {
                if sock.send_to(&buf[..n], from).is_ok() {
                    self.echoed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// Runs `boot` (which starts trapline with `--net tap:tlnet0` or
/// `vhost:tlnet0`) in a new network namespace beside the host side;
/// returns its result and how many datagrams the host echoed, or `None`
/// (said loudly) where the host refuses a namespace.
fn beside_host<T: Send>(test: &str, boot: impl FnOnce() -> T + Send) -> Option<(T, u64)> {
    in_netns(test, || {
        let host = HostSide {
            stop: AtomicBool::new(false),
            configured: AtomicBool::new(false),
            echoed: AtomicU64::new(0),
        };
        let out = std::thread::scope(|s| {
            s.spawn(|| host.serve());
            let out = boot();
            host.stop.store(true, Ordering::Relaxed);
            out
        });
        (out, host.echoed.load(Ordering::Relaxed))
    })
}

/// The value of `key=` on the line starting with `prefix`.
fn field(text: &str, prefix: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.contains(prefix))?;
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
}

/// What every exchange must show on the guest's console (`out`), and on
/// trapline's stderr (`err`) for a user-space back end.
fn check_exchange(what: &str, out: &str, echo: bool) {
    assert!(
        out.contains("NETTEST-RESULT ok"),
        "{what}: nettest did not succeed:\n{out}"
    );
    assert!(out.contains("NETTEST-IFUP eth0"), "{what}: {out}");
    let copies = if echo { 2 * COUNT } else { COUNT };
    assert_eq!(
        field(out, "NETTEST-UDP", "sent"),
        Some(COUNT),
        "{what}: {out}"
    );
    assert_eq!(field(out, "NETTEST-UDP", "got"), Some(COUNT), "{what}");
    assert_eq!(field(out, "NETTEST-UDP", "copies"), Some(copies), "{what}");
    assert_eq!(field(out, "NETTEST-UDP", "bad"), Some(0), "{what}");
}

/// The `--stat` key of the card's QueueNotify register (transport `base`).
fn notify_key(base: u64) -> String {
    format!("{:#x}:W", base + 0x50)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::path::Path;
    use std::time::Instant;

    use common::linux_x86::{boot_builtin, kvm_and_vmlinux};

    use super::*;

    /// One boot of the tiny Linux with nettest as /init on `net` and the
    /// given path, `--stat` to `stat`; (output, seconds to power-off).
    fn boot(
        kernel: &Path,
        net: &str,
        notify: &str,
        irq: &str,
        stat: &Path,
    ) -> (std::process::Output, f64) {
        let peer = if net == "echo" {
            "echo".to_string()
        } else {
            let [a, b, c, d] = HOST_IP;
            format!("{a}.{b}.{c}.{d}:{ECHO_PORT}")
        };
        let append = format!("net.ip={GUEST_IP} net.peer={peer} net.count={COUNT}");
        let stat_arg = format!("--stat={}", stat.display());
        let t0 = Instant::now();
        let o = boot_builtin(
            kernel,
            "builtin:nettest",
            (notify, irq),
            &append,
            &["--net", net, &stat_arg],
        );
        let secs = t0.elapsed().as_secs_f64();
        eprintln!(
            "--- {net} {notify} {irq}: {secs:.1} s to power-off\n--- stdout:\n{}--- stderr:\n{}",
            stdout(&o),
            stderr(&o)
        );
        (o, secs)
    }

    /// What every boot must show: the exchange on the console, the host's
    /// echoes (`echoed`, for a TAP or vhost-net), isa-debug-exit 0 after
    /// it, and the card's exits and frames ([`check_stat`]).
    fn check_boot(
        what: &str,
        o: &std::process::Output,
        echoed: Option<u64>,
        stat: &Path,
        notify: &str,
        kernel_path: bool,
    ) {
        let (out, err) = (stdout(o), stderr(o));
        check_exchange(what, &out, echoed.is_none());
        if let Some(echoed) = echoed {
            assert!(echoed >= COUNT, "{what}: the host echoed {echoed}");
        }
        assert_eq!(
            code(o),
            1,
            "{what}: isa-debug-exit 0 after the exchange:\n{err}"
        );
        check_stat(what, stat, &err, notify, kernel_path);
    }

    /// The QueueNotify exits `--stat` counted on the card (transport 0:
    /// no disks), and trapline's own frame counters for it.
    fn check_stat(what: &str, stat: &Path, err: &str, notify: &str, kernel_path: bool) {
        let report = std::fs::read_to_string(stat).expect("--stat wrote its report");
        let key = notify_key(trapline_abi::VIRTIO_MMIO_BASE);
        let line = report.lines().find(|l| l.trim_start().starts_with(&key));
        eprintln!("{what}: QueueNotify in --stat: {line:?}");
        match notify {
            "exit" => assert!(
                line.is_some(),
                "{what}: no QueueNotify exit ({key}):\n{report}"
            ),
            _ => assert!(
                line.is_none(),
                "{what}: QueueNotify exited with ioeventfd:\n{report}"
            ),
        }
        let net = err
            .lines()
            .find(|l| l.starts_with("trapline-virtio net=0"))
            .unwrap_or_else(|| panic!("{what}: no trapline-virtio net=0 line:\n{err}"));
        eprintln!("{what}: {net}");
        let tx = field(net, "net=0", "tx_frames").unwrap();
        let rx = field(net, "net=0", "rx_frames").unwrap();
        if kernel_path {
            assert_eq!(
                (tx, rx),
                (0, 0),
                "{what}: the kernel moved the frames: {net}"
            );
        } else {
            assert!(tx >= COUNT && rx >= COUNT, "{what}: {net}");
        }
    }

    /// Every notify × irq path, four boots: echo on exit + line and
    /// ioeventfd + irqfd, a TAP with a UDP echo on exit + irqfd and
    /// ioeventfd + line.
    #[test]
    fn tiny_linux_brings_up_eth0_and_exchanges_udp_on_every_path() {
        let test = "tiny_linux_brings_up_eth0_and_exchanges_udp_on_every_path";
        let Some(kernel) = kvm_and_vmlinux(test) else {
            return;
        };
        let mut times = Vec::new();
        for (net, notify, irq) in [
            ("echo", "exit", "line"),
            ("echo", "ioeventfd", "irqfd"),
            ("tap", "exit", "irqfd"),
            ("tap", "ioeventfd", "line"),
        ] {
            let what =
                format!("tiny Linux, --net {net} --virtio-notify {notify} --virtio-irq {irq}");
            let stat = tmp(&format!("net-linux-{net}-{notify}-{irq}.stat"));
            let ((o, secs), echoed) = if net == "echo" {
                (boot(&kernel, "echo", notify, irq, &stat), None)
            } else {
                let spec = format!("tap:{TAP}");
                let Some((r, echoed)) =
                    beside_host(test, || boot(&kernel, &spec, notify, irq, &stat))
                else {
                    continue;
                };
                (r, Some(echoed))
            };
            check_boot(&what, &o, echoed, &stat, notify, false);
            times.push(format!("{net}/{notify}/{irq} {secs:.1} s"));
        }
        eprintln!("tiny Linux boots to power-off: {}", times.join(", "));
    }

    /// vhost-net: the kernel moves the frames between the guest's rings and
    /// the TAP; trapline's card sees none and no QueueNotify exits.
    #[test]
    fn tiny_linux_exchanges_udp_through_vhost_net() {
        let test = "tiny_linux_exchanges_udp_through_vhost_net";
        if !kvm_present(test) {
            return;
        }
        if !Path::new("/dev/vhost-net").exists() {
            eprintln!("SKIPPED {test}: this host has no /dev/vhost-net (load it with `modprobe vhost_net`) — this vhost-net test did NOT run");
            return;
        }
        let Some(kernel) = kvm_and_vmlinux(test) else {
            return;
        };
        let stat = tmp("net-linux-vhost.stat");
        let spec = format!("vhost:{TAP}");
        let Some(((o, secs), echoed)) =
            beside_host(test, || boot(&kernel, &spec, "ioeventfd", "irqfd", &stat))
        else {
            return;
        };
        let what = "tiny Linux, --net vhost";
        check_boot(what, &o, Some(echoed), &stat, "ioeventfd", true);
        eprintln!("tiny Linux on vhost-net: {secs:.1} s to power-off");
    }
}

#[cfg(target_arch = "aarch64")]
mod arm64 {
    use super::*;
    use common::linux_arm64::{after, boot, linux_guest, APPEND};

    /// Debian's kernel on `net` (`tap:…` or `vhost:…`), one boot.
    fn boot_net(
        guest: &common::linux_arm64::LinuxGuest,
        net: &str,
        notify: &str,
        irq: &str,
        stat: &std::path::Path,
    ) -> std::process::Output {
        let [a, b, c, d] = HOST_IP;
        let append = format!(
            "{APPEND} tl_net={GUEST_IP} net.ip={GUEST_IP} net.peer={a}.{b}.{c}.{d}:{ECHO_PORT} net.count={COUNT}"
        );
        let stat_arg = format!("--stat={}", stat.display());
        boot(
            guest,
            &[
                "--smp",
                "1",
                "--append",
                &append,
                "--timeout",
                "600",
                "--net",
                net,
                "--virtio-notify",
                notify,
                "--virtio-irq",
                irq,
                &stat_arg,
            ],
            None,
        )
    }

    fn check(what: &str, o: &std::process::Output, echoed: u64) -> (String, String) {
        let (out, err) = (stdout(o), stderr(o));
        assert!(!out.contains("INSMOD-FAILED"), "{what}: {out}");
        // The MAC is trapline's; the operstate may still be on its way up
        // (Linux's link watch runs later), so only printed.
        assert!(
            after(&out, "LINUX-ARM64-ETH0").is_some_and(|l| l.starts_with("52:54:")),
            "{what}: eth0 brought up through busybox ip:\n{out}"
        );
        check_exchange(what, &out, false);
        assert_eq!(after(&out, "LINUX-ARM64-NET"), Some("status=0"), "{what}");
        assert!(echoed >= COUNT, "{what}: the host echoed {echoed}");
        assert_eq!(o.status.code(), Some(0), "{what}: PSCI SYSTEM_OFF:\n{err}");
        (out, err)
    }

    /// [`check`], no QueueNotify exit in the `--stat` report (ioeventfd),
    /// and trapline's `trapline-virtio net=0` line (its frame counters).
    fn check_boot(
        what: &str,
        o: &std::process::Output,
        echoed: u64,
        stat: &std::path::Path,
    ) -> String {
        let (_, err) = check(what, o, echoed);
        let report = std::fs::read_to_string(stat).expect("--stat wrote its report");
        eprintln!("--- {what}: --stat report:\n{report}");
        let key = notify_key(trapline_abi::VIRT_VIRTIO_MMIO_BASE);
        assert!(
            !report.lines().any(|l| l.trim_start().starts_with(&key)),
            "{what}: QueueNotify exited:\n{report}"
        );
        after(&err, "trapline-virtio net=0")
            .unwrap_or_else(|| panic!("{err}"))
            .to_owned()
    }

    /// A TAP on ioeventfd + line, then vhost-net (ioeventfd + irqfd): Linux
    /// brings eth0 up and exchanges UDP with the echo in the namespace.
    #[test]
    fn debian_linux_exchanges_udp_over_a_tap_and_through_vhost_net() {
        let test = "debian_linux_exchanges_udp_over_a_tap_and_through_vhost_net";
        if !kvm_present(test) {
            return;
        }
        let Some(guest) = linux_guest(test) else {
            return;
        };
        let tap_stat = tmp("net-arm64-tap.stat");
        let spec = format!("tap:{TAP}");
        let Some((o, echoed)) = beside_host(test, || {
            boot_net(guest, &spec, "ioeventfd", "line", &tap_stat)
        }) else {
            return;
        };
        let what = "Debian arm64, --net tap, ioeventfd + line";
        let net = check_boot(what, &o, echoed, &tap_stat);
        assert!(
            field(&net, "", "tx_frames").unwrap() >= COUNT,
            "{what}: trapline moved the frames: {net}"
        );

        if !std::path::Path::new("/dev/vhost-net").exists() {
            eprintln!("SKIPPED the vhost-net half of {test}: this host has no /dev/vhost-net (modprobe vhost_net; the emulated host's init loads it) — vhost-net did NOT run");
            return;
        }
        let vhost_stat = tmp("net-arm64-vhost.stat");
        let spec = format!("vhost:{TAP}");
        let Some((o, echoed)) = beside_host(test, || {
            boot_net(guest, &spec, "ioeventfd", "irqfd", &vhost_stat)
        }) else {
            return;
        };
        let what = "Debian arm64, --net vhost, ioeventfd + irqfd";
        let net = check_boot(what, &o, echoed, &vhost_stat);
        assert_eq!(
            (field(&net, "", "tx_frames"), field(&net, "", "rx_frames")),
            (Some(0), Some(0)),
            "{what}: the kernel, not trapline, moved the frames: {net}"
        );
    }
}
