//! The TAP rows' host side: a network namespace (made for the run, or one
//! the user names under /run/netns), a persistent TAP inside it with the
//! host's address, a permanent neighbour entry for the guest (so the host
//! never ARPs and the guest needs no ARP) and IPv6 off on it (no router
//! solicitations in the guest's receive queue), and a UDP echo: a thread
//! of this process that enters the namespace (`unshare`/`setns` move only
//! the calling thread), sets it up (trapline-devices' `virtio::net::iface`, the
//! kernel's ioctls: no `ip` needed) and sends every datagram back. No traffic leaves the
//! namespace. Children run in it through [`NetLab::command`]. It needs
//! CAP_SYS_ADMIN and CAP_NET_ADMIN: without them the caller gets the
//! reason and the TAP rows say it.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use trapline_devices::virtio::net::iface;

use super::endpoints::{GUEST, HOST};

/// The TAP's name inside the namespace.
pub const TAP_NAME: &str = "tl0";

/// A namespace with the TAP and the echo in it; dropping it stops the echo
/// and removes what it made (the namespace made for the run goes with the
/// last thread and file in it).
pub struct NetLab {
    /// The namespace in words (`a namespace of its own`, or `/run/netns/NAME`).
    pub name: String,
    ns: File,
    stop: Arc<AtomicBool>,
    echoed: Arc<AtomicU64>,
    echo: Option<JoinHandle<()>>,
}

/// Where the echo thread's namespace comes from.
enum Place {
    /// A new one (`unshare`).
    Own,
    /// An existing one (`setns` into this file).
    Named(File),
}

impl NetLab {
    /// Makes (or, with `named`, enters) the namespace, the TAP and the echo.
    ///
    /// # Errors
    /// The step that failed, in words (most often: not root).
    pub fn new(named: Option<&str>) -> Result<Self, String> {
        let (name, place) = match named {
            Some(n) => {
                let path = format!("/run/netns/{n}");
                let f = File::open(&path).map_err(|e| format!("{path}: {e}"))?;
                (path, Place::Named(f))
            }
            None => ("a namespace of its own".to_string(), Place::Own),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let echoed = Arc::new(AtomicU64::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        let (s, e) = (stop.clone(), echoed.clone());
        let echo = std::thread::Builder::new()
            .name("udp-echo".into())
            .spawn(move || echo_thread(place, &tx, &s, &e))
            .map_err(|e| format!("cannot start the UDP echo thread: {e}"))?;
        let ns = match rx.recv() {
            Ok(Ok(ns)) => ns,
            Ok(Err(e)) => {
                let _ = echo.join();
                return Err(e);
            }
            Err(_) => return Err("the UDP echo thread ended before it was ready".into()),
        };
        Ok(Self {
            name,
            ns,
            stop,
            echoed,
            echo: Some(echo),
        })
    }

    /// `program` set to run inside the namespace (it enters it between
    /// fork and exec, as `ip netns exec` would, without `ip`).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        let fd = self.ns.as_raw_fd();
        // SAFETY: setns(2) is a plain system call, safe between fork and
        // exec; the fd stays open while `self` lives, which outlives the
        // spawn (the child gets its own copy of the descriptor table).
        unsafe {
            c.pre_exec(move || {
                if libc::setns(fd, libc::CLONE_NEWNET) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        c
    }

    /// Datagrams the echo has answered so far.
    pub fn echoed(&self) -> u64 {
        self.echoed.load(Ordering::Relaxed)
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.echo.take() {
            let _ = h.join();
        }
    }
}

/// The echo thread: enters the namespace, makes the TAP, binds the host's
/// address and hands the namespace back through `ready`; then answers every
/// datagram until `stop` (it looks every 100 ms), and removes the TAP.
fn echo_thread(
    place: Place,
    ready: &Sender<Result<File, String>>,
    stop: &AtomicBool,
    echoed: &AtomicU64,
) {
    let sock = match enter_and_set_up(place) {
        Ok((sock, ns)) => {
            let _ = ready.send(Ok(ns));
            sock
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut buf = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = sock.recv_from(&mut buf) {
            if sock.send_to(&buf[..n], from).is_ok() {
                echoed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    let _ = iface::tap_persist(TAP_NAME, false);
}

/// This thread in the namespace, the TAP set up, the echo's socket bound:
/// the socket and the namespace's file.
fn enter_and_set_up(place: Place) -> Result<(UdpSocket, File), String> {
    let rc = match &place {
        // SAFETY: unshare moves only this thread, which runs nothing but the echo.
        Place::Own => unsafe { libc::unshare(libc::CLONE_NEWNET) },
        // SAFETY: setns on a namespace file this thread holds; as above.
        Place::Named(f) => unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) },
    };
    if rc != 0 {
        return Err(format!(
            "cannot make or enter a network namespace ({}): the TAP rows need CAP_SYS_ADMIN and CAP_NET_ADMIN (run as root)",
            std::io::Error::last_os_error()
        ));
    }
    let ns = File::open("/proc/thread-self/ns/net")
        .map_err(|e| format!("/proc/thread-self/ns/net: {e}"))?;
    if let Err(e) = set_up_tap() {
        let _ = iface::tap_persist(TAP_NAME, false);
        return Err(format!("the TAP {TAP_NAME} in the namespace: {e}"));
    }
    let addr = SocketAddrV4::new(Ipv4Addr::from(HOST.ip), HOST.port);
    let sock = UdpSocket::bind(addr).map_err(|e| format!("UDP echo on {addr}: {e}"))?;
    let _ = sock.set_read_timeout(Some(Duration::from_millis(100)));
    Ok((sock, ns))
}

/// lo up; the TAP with the host's MAC and address, up; the guest a permanent neighbour.
fn set_up_tap() -> std::io::Result<()> {
    iface::up("lo")?;
    iface::tap_persist(TAP_NAME, true)?;
    iface::address(TAP_NAME, HOST.mac, Ipv4Addr::from(HOST.ip))?;
    iface::ipv6_off(TAP_NAME);
    iface::up(TAP_NAME)?;
    iface::neighbour(TAP_NAME, Ipv4Addr::from(GUEST.ip), GUEST.mac)
}
