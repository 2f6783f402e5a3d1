//! A network interface set up with the kernel's own ioctls: `struct ifreq`
//! and the TUN and socket ioctls that take it, in one place for the TAP
//! back end ([`super::tap`]: TUNSETIFF, bringing a TAP it made up) and for
//! net-paths' namespace (trapline-peers: a persistent TAP, its MAC and IPv4
//! address, up, a permanent neighbour entry; no `ip` needed, which the
//! emulated arm64 host's busybox lacks).
//!
//! Every call acts in the calling thread's network namespace (a socket's
//! and /dev/net/tun's namespace is the caller's).

use std::fs::{File, OpenOptions};
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Where TAP devices are opened.
pub const TUN_PATH: &str = "/dev/net/tun";
/// Longest interface name (IFNAMSIZ less the NUL).
pub const MAX_NAME: usize = 15;

// linux/if_tun.h, linux/sockios.h, linux/if_arp.h: the same numbers on
// x86_64 and arm64 (the generic ioctl encoding).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETPERSIST: libc::c_ulong = 0x4004_54cb;
const TUNSETVNETHDRSZ: libc::c_ulong = 0x4004_54d8;
const SIOCGIFFLAGS: libc::c_ulong = 0x8913;
const SIOCSIFFLAGS: libc::c_ulong = 0x8914;
const SIOCSIFADDR: libc::c_ulong = 0x8916;
const SIOCSIFNETMASK: libc::c_ulong = 0x891c;
const SIOCSIFHWADDR: libc::c_ulong = 0x8924;
const SIOCSARP: libc::c_ulong = 0x8955;
const IFF_UP: i16 = 0x1;
/// TUNSETIFF: a TAP (Ethernet frames), not a TUN.
pub const IFF_TAP: i16 = 0x0002;
/// TUNSETIFF: no packet-information prefix before each frame.
pub const IFF_NO_PI: i16 = 0x1000;
/// TUNSETIFF: a `virtio_net_hdr` before each frame (for a kernel back end).
pub const IFF_VNET_HDR: i16 = 0x4000;
const ARPHRD_ETHER: u16 = 1;
/// `ATF_COM | ATF_PERM`: a complete, permanent neighbour entry.
const ATF_COM_PERM: i32 = 0x02 | 0x04;

/// Whether `name` can be an interface name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name != "."
        && name != ".."
        && !name
            .bytes()
            .any(|b| b == b'/' || b == b':' || b == 0 || b.is_ascii_whitespace())
}

/// Names [`valid_name`] takes, and ones it refuses (for the tests here and
/// the TAP back end's, which checks it refuses them before the kernel sees them).
#[cfg(test)]
pub(crate) const TEST_NAMES: ([&str; 5], [&str; 9]) = (
    ["tap0", "t", "trapline-net-01", "a.b_c", "fifteen-chars-x"],
    [
        "",
        "sixteen-chars-xx",
        "a/b",
        "a:b",
        "a b",
        "a\tb",
        "a\0",
        ".",
        "..",
    ],
);

/// `struct sockaddr` (16 bytes): a family and 14 bytes of address.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct SockAddr {
    family: u16,
    data: [u8; 14],
}

impl SockAddr {
    /// `struct sockaddr_in` (port 0) laid over a `struct sockaddr`.
    fn inet(ip: Ipv4Addr) -> Self {
        let mut data = [0u8; 14];
        data[2..6].copy_from_slice(&ip.octets());
        Self {
            family: libc::AF_INET as u16,
            data,
        }
    }

    /// An Ethernet hardware address.
    fn ether(mac: [u8; 6]) -> Self {
        let mut data = [0u8; 14];
        data[..6].copy_from_slice(&mac);
        Self {
            family: ARPHRD_ETHER,
            data,
        }
    }
}

/// `struct ifreq`: the name, then a 24-byte union (flags, or a sockaddr
/// whose first two bytes are where the flags are).
#[repr(C)]
#[derive(Debug)]
pub struct IfReq {
    name: [u8; 16],
    addr: SockAddr,
    _rest: [u8; 8],
}

impl IfReq {
    /// One for `name` (cut at [`MAX_NAME`] bytes; check it with
    /// [`valid_name`] first), the union zero: the kernel picks a name for
    /// an empty one at TUNSETIFF.
    pub fn new(name: &str) -> Self {
        let mut r = Self {
            name: [0; 16],
            addr: SockAddr::default(),
            _rest: [0; 8],
        };
        let n = name.len().min(MAX_NAME);
        r.name[..n].copy_from_slice(&name.as_bytes()[..n]);
        r
    }

    /// One for `name` with `flags` in the union (TUNSETIFF's request).
    pub fn with_flags(name: &str, flags: i16) -> Self {
        let mut r = Self::new(name);
        r.set_flags(flags);
        r
    }

    /// The name in it (after TUNSETIFF: the kernel's choice).
    pub fn name(&self) -> String {
        let end = self.name.iter().position(|&b| b == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.name[..end]).into_owned()
    }

    /// The flags in the union.
    pub fn flags(&self) -> i16 {
        self.addr.family as i16
    }

    /// Sets the flags in the union.
    pub fn set_flags(&mut self, flags: i16) {
        self.addr.family = flags as u16;
    }
}

/// `struct arpreq`.
#[repr(C)]
struct ArpReq {
    pa: SockAddr,
    ha: SockAddr,
    flags: i32,
    netmask: SockAddr,
    dev: [u8; 16],
}

/// `ioctl(fd, req, arg)`; the error is the kernel's errno, as it is (the TAP
/// back end tells EPERM from EBUSY by it).
///
/// # Safety
/// `arg` must be the argument request `req` takes (laid out as the kernel's
/// struct: the sizes are checked by the tests below), which the kernel then
/// reads or writes within its size.
unsafe fn ioctl<T>(fd: &impl AsRawFd, req: libc::c_ulong, arg: &mut T) -> io::Result<()> {
    // SAFETY: the caller passes `req`'s own argument struct (this function's contract).
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, std::ptr::from_mut(arg)) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `e` with the step it came from in its words (its kind kept).
fn named(what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// TUNSETIFF on an open /dev/net/tun: attaches it to the TAP `req` names
/// (creating it if none is there), with `req`'s flags; the kernel writes
/// the name back. The error is the kernel's errno, as it is.
pub fn tun_set_iff(tun: &File, req: &mut IfReq) -> io::Result<()> {
    // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, which `req` is.
    unsafe { ioctl(tun, TUNSETIFF, req) }
}

/// TUNSETVNETHDRSZ: the length of the `virtio_net_hdr` before each frame.
pub fn tun_set_vnet_hdr_len(tun: &File, len: libc::c_int) -> io::Result<()> {
    let mut len = len;
    // SAFETY: TUNSETVNETHDRSZ reads one int, which `len` is.
    unsafe { ioctl(tun, TUNSETVNETHDRSZ, &mut len) }
}

/// An AF_INET datagram socket: the handle the SIOC* ioctls act through.
fn socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the fd is owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(named(
            "a socket for interface ioctls",
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: fd is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn open_tun() -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(TUN_PATH)
        .map_err(|e| named(&format!("{TUN_PATH} (modprobe tun)"), e))
}

/// Makes `name` a persistent TAP (or attaches to the one there), or with
/// `persist` false, ends its persistence (it goes when the last file
/// attached to it closes).
pub fn tap_persist(name: &str, persist: bool) -> io::Result<()> {
    let tun = open_tun()?;
    let mut req = IfReq::with_flags(name, IFF_TAP | IFF_NO_PI);
    tun_set_iff(&tun, &mut req).map_err(|e| named("TUNSETIFF", e))?;
    // TUNSETPERSIST takes its value as the argument itself, not a pointer.
    // SAFETY: an integer argument; no memory is passed.
    let rc = unsafe {
        libc::ioctl(
            tun.as_raw_fd(),
            TUNSETPERSIST as _,
            libc::c_ulong::from(persist),
        )
    };
    if rc < 0 {
        return Err(named("TUNSETPERSIST", io::Error::last_os_error()));
    }
    Ok(())
}

/// Sets `name` up (IFF_UP added to its flags).
pub fn up(name: &str) -> io::Result<()> {
    let s = socket()?;
    let mut req = IfReq::new(name);
    // SAFETY: SIOCGIFFLAGS fills the flags of one `struct ifreq`, which `req` is.
    unsafe { ioctl(&s, SIOCGIFFLAGS, &mut req) }.map_err(|e| named("SIOCGIFFLAGS", e))?;
    req.set_flags(req.flags() | IFF_UP);
    // SAFETY: SIOCSIFFLAGS reads one `struct ifreq`, which `req` is.
    unsafe { ioctl(&s, SIOCSIFFLAGS, &mut req) }.map_err(|e| named("SIOCSIFFLAGS", e))
}

/// Gives `name` its MAC and `ip`/24.
pub fn address(name: &str, mac: [u8; 6], ip: Ipv4Addr) -> io::Result<()> {
    let s = socket()?;
    let mut req = IfReq::new(name);
    let steps = [
        (SIOCSIFHWADDR, "SIOCSIFHWADDR", SockAddr::ether(mac)),
        (SIOCSIFADDR, "SIOCSIFADDR", SockAddr::inet(ip)),
        (
            SIOCSIFNETMASK,
            "SIOCSIFNETMASK",
            SockAddr::inet(Ipv4Addr::new(255, 255, 255, 0)),
        ),
    ];
    for (request, what, addr) in steps {
        req.addr = addr;
        // SAFETY: each of these reads one `struct ifreq` (its sockaddr), which `req` is.
        unsafe { ioctl(&s, request, &mut req) }.map_err(|e| named(what, e))?;
    }
    Ok(())
}

/// A permanent neighbour entry on `name`: `ip` is at `mac` (the host never ARPs).
pub fn neighbour(name: &str, ip: Ipv4Addr, mac: [u8; 6]) -> io::Result<()> {
    let s = socket()?;
    let mut req = ArpReq {
        pa: SockAddr::inet(ip),
        ha: SockAddr::ether(mac),
        flags: ATF_COM_PERM,
        netmask: SockAddr::default(),
        dev: IfReq::new(name).name,
    };
    // SAFETY: SIOCSARP reads one `struct arpreq`, which `req` is.
    unsafe { ioctl(&s, SIOCSARP, &mut req) }.map_err(|e| named("SIOCSARP", e))
}

/// IPv6 off on `name` (before it is up: no router solicitation or DAD frame
/// reaches a guest). Best effort: a kernel without IPv6 has nothing to send.
pub fn ipv6_off(name: &str) {
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_are_the_kernels_sizes() {
        assert_eq!(std::mem::size_of::<SockAddr>(), 16);
        assert_eq!(std::mem::size_of::<IfReq>(), 40);
        assert_eq!(std::mem::size_of::<ArpReq>(), 68);
        assert_eq!(
            std::mem::size_of::<ArpReq>(),
            std::mem::size_of::<libc::arpreq>()
        );
        assert_eq!(
            std::mem::size_of::<IfReq>(),
            std::mem::size_of::<libc::ifreq>()
        );
        // The flags sit where the kernel's ifr_flags does: right after the name.
        assert_eq!(std::mem::offset_of!(IfReq, addr), libc::IFNAMSIZ);
    }

    #[test]
    fn addresses_are_laid_out_as_sockaddr_in_and_ether() {
        let a = SockAddr::inet(Ipv4Addr::new(10, 0, 1, 2));
        assert_eq!(a.family, 2);
        assert_eq!(&a.data[..6], &[0, 0, 10, 0, 1, 2]);
        let e = SockAddr::ether([2, 0x74, 0x6c, 0, 0, 1]);
        assert_eq!((e.family, &e.data[..6]), (1, &[2, 0x74, 0x6c, 0, 0, 1][..]));
    }

    #[test]
    fn ifreq_holds_a_name_and_flags() {
        let mut r = IfReq::with_flags("tl0", IFF_TAP | IFF_NO_PI);
        assert_eq!(&r.name[..4], b"tl0\0");
        assert_eq!(r.name(), "tl0");
        assert_eq!(r.flags(), 0x1002);
        r.set_flags(r.flags() | IFF_UP);
        assert_eq!(r.flags(), 0x1003);
        assert_eq!(IfReq::new("tap7").name(), "tap7");
        assert_eq!(IfReq::new("").name(), "", "empty: the kernel picks one");
        // Never past IFNAMSIZ, whatever it is given: the NUL stays.
        let long = IfReq::new("a-name-far-too-long-for-ifnamsiz");
        assert_eq!((long.name().len(), long.name[15]), (MAX_NAME, 0));
    }

    #[test]
    fn interface_names_are_checked() {
        let (good, bad) = TEST_NAMES;
        for name in good {
            assert!(valid_name(name), "{name}");
        }
        for name in bad {
            assert!(!valid_name(name), "{name:?}");
        }
    }

    #[test]
    fn errors_name_their_step_and_keep_their_kind() {
        let e = named("SIOCSIFFLAGS", io::Error::from_raw_os_error(libc::EPERM));
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().starts_with("SIOCSIFFLAGS: "), "{e}");
    }
}
