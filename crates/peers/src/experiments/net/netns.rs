//! The TAP rows' host side: a network namespace (made for the run, or one
//! the user names), a persistent TAP inside it with the host's address,
//! a static neighbour entry for the guest (so the host never ARPs and the
//! guest needs no ARP) and IPv6 off on it (no router solicitations in the
//! guest's receive queue), and a UDP echo: a thread of this process that
//! enters the namespace (`setns` moves only the calling thread) and sends
//! every datagram back. No traffic leaves the namespace. Everything is
//! made with `ip`, which needs CAP_NET_ADMIN: without it the caller gets
//! the reason and the TAP rows say it.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::endpoints::{Endpoint, GUEST, HOST};

/// The TAP's name inside the namespace.
pub const TAP_NAME: &str = "tl0";

/// Runs `ip` with `args`; its stderr in the error.
fn ip(args: &[&str]) -> Result<(), String> {
    let o = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip ({e}): install iproute2"))?;
    if o.status.success() {
        return Ok(());
    }
    Err(format!(
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr).trim()
    ))
}

fn mac(e: &Endpoint) -> String {
    super::endpoints::mac_text(e.mac)
}

/// A namespace with the TAP and the echo in it; dropping it stops the echo
/// and removes what it made.
pub struct NetLab {
    /// The namespace's name (`ip netns exec NAME …` runs a VMM in it).
    pub name: String,
    owned: bool,
    stop: Arc<AtomicBool>,
    echoed: Arc<AtomicU64>,
    echo: Option<JoinHandle<()>>,
}

impl NetLab {
    /// Makes (or, with `named`, uses) the namespace, the TAP and the echo.
    ///
    /// # Errors
    /// The step that failed, in words (most often: no CAP_NET_ADMIN).
    pub fn new(named: Option<&str>) -> Result<Self, String> {
        let (name, owned) = match named {
            Some(n) => (n.to_string(), false),
            None => (format!("trapline-net-{}", std::process::id()), true),
        };
        if owned {
            ip(&["netns", "add", &name])
                .map_err(|e| format!("cannot make a network namespace ({e}): the TAP rows need CAP_NET_ADMIN (run as root)"))?;
        }
        let mut lab = Self {
            name,
            owned,
            stop: Arc::new(AtomicBool::new(false)),
            echoed: Arc::new(AtomicU64::new(0)),
            echo: None,
        };
        lab.tap()?;
        lab.echo = Some(lab.start_echo()?);
        Ok(lab)
    }

    /// The TAP with the host's address and MAC, up, the guest a permanent neighbour.
    fn tap(&self) -> Result<(), String> {
        let n = self.name.as_str();
        let host_ip = format!("{}/24", Ipv4Addr::from(HOST.ip));
        let guest_ip = Ipv4Addr::from(GUEST.ip).to_string();
        let (host_mac, guest_mac) = (mac(&HOST), mac(&GUEST));
        ip(&["-n", n, "link", "set", "lo", "up"])?;
        ip(&["-n", n, "tuntap", "add", "dev", TAP_NAME, "mode", "tap"])?;
        ip(&[
            "-n", n, "link", "set", "dev", TAP_NAME, "address", &host_mac,
        ])?;
        ip(&["-n", n, "addr", "add", &host_ip, "dev", TAP_NAME])?;
        // IPv6 off before the link is up: no router solicitation or DAD frame reaches the guest.
        let _ = Command::new("ip")
            .args(["netns", "exec", n, "sysctl", "-qw"])
            .arg(format!("net.ipv6.conf.{TAP_NAME}.disable_ipv6=1"))
            .output();
        ip(&["-n", n, "link", "set", "dev", TAP_NAME, "up"])?;
        ip(&[
            "-n",
            n,
            "neigh",
            "replace",
            &guest_ip,
            "lladdr",
            &guest_mac,
            "dev",
            TAP_NAME,
            "nud",
            "permanent",
        ])
    }

    /// The echo thread: enters the namespace, binds the host's address, and
    /// answers every datagram until stopped (it looks every 100 ms).
    fn start_echo(&self) -> Result<JoinHandle<()>, String> {
        let path = format!("/run/netns/{}", self.name);
        let ns = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
        let (stop, echoed) = (self.stop.clone(), self.echoed.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("udp-echo".into())
            .spawn(move || {
                // SAFETY: setns on a namespace fd this thread owns; it moves
                // only this thread, which runs nothing but the echo.
                if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    let _ = tx.send(Err(format!(
                        "setns into {path}: {}",
                        std::io::Error::last_os_error()
                    )));
                    return;
                }
                let addr = SocketAddrV4::new(Ipv4Addr::from(HOST.ip), HOST.port);
                let sock = match UdpSocket::bind(addr) {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = tx.send(Err(format!("UDP echo on {addr}: {e}")));
                        return;
                    }
                };
                let _ = sock.set_read_timeout(Some(Duration::from_millis(100)));
                let _ = tx.send(Ok(()));
                let mut buf = [0u8; 2048];
                while !stop.load(Ordering::Relaxed) {
                    if let Ok((n, from)) = sock.recv_from(&mut buf) {
                        if sock.send_to(&buf[..n], from).is_ok() {
                            echoed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
            .map_err(|e| format!("cannot start the UDP echo thread: {e}"))?;
        match rx.recv() {
            Ok(Ok(())) => Ok(handle),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("the UDP echo thread ended before it was ready".into()),
        }
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
        if self.owned {
            let _ = ip(&["netns", "del", &self.name]);
        } else {
            let _ = ip(&["-n", &self.name, "link", "del", TAP_NAME]);
        }
    }
}
