//! The TAP rows' interface, set up with the kernel's own ioctls (no `ip`:
//! the emulated arm64 host's busybox has no `ip netns` or `ip tuntap`): a
//! persistent TAP, its MAC and IPv4 address, up, and a permanent neighbour
//! entry for the guest. Every call acts in the calling thread's network
//! namespace (the socket's and /dev/net/tun's namespace is the caller's).

use std::fs::{File, OpenOptions};
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

// linux/if_tun.h, linux/sockios.h, linux/if_arp.h: the same numbers on
// x86_64 and arm64 (the generic ioctl encoding).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETPERSIST: libc::c_ulong = 0x4004_54cb;
const SIOCGIFFLAGS: libc::c_ulong = 0x8913;
const SIOCSIFFLAGS: libc::c_ulong = 0x8914;
const SIOCSIFADDR: libc::c_ulong = 0x8916;
const SIOCSIFNETMASK: libc::c_ulong = 0x891c;
const SIOCSIFHWADDR: libc::c_ulong = 0x8924;
const SIOCSARP: libc::c_ulong = 0x8955;
const IFF_UP: i16 = 0x1;
const IFF_TAP: i16 = 0x0002;
const IFF_NO_PI: i16 = 0x1000;
const ARPHRD_ETHER: u16 = 1;
/// `ATF_COM | ATF_PERM`: a complete, permanent neighbour entry.
const ATF_COM_PERM: i32 = 0x02 | 0x04;

/// `struct sockaddr` (16 bytes): a family and 14 bytes of address.
#[repr(C)]
#[derive(Clone, Copy, Default)]
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

/// `struct ifreq`: the name, then a 24-byte union (flags or a sockaddr).
#[repr(C)]
struct IfReq {
    name: [u8; 16],
    addr: SockAddr,
    _rest: [u8; 8],
}

impl IfReq {
    fn new(name: &str) -> Self {
        let mut r = Self {
            name: [0; 16],
            addr: SockAddr::default(),
            _rest: [0; 8],
        };
        let n = name.len().min(15);
        r.name[..n].copy_from_slice(&name.as_bytes()[..n]);
        r
    }

    fn with_flags(name: &str, flags: i16) -> Self {
        let mut r = Self::new(name);
        r.set_flags(flags);
        r
    }

    fn flags(&self) -> i16 {
        self.addr.family as i16
    }

    fn set_flags(&mut self, flags: i16) {
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

/// `ioctl(fd, req, arg)`, its error named by `what`.
fn ioctl<T>(fd: &impl AsRawFd, req: libc::c_ulong, arg: &mut T, what: &str) -> io::Result<()> {
    // SAFETY: every caller passes the request's own argument struct (laid
    // out as the kernel's, sizes checked by the tests below), which the
    // kernel reads or writes within its size.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, std::ptr::from_mut(arg)) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

/// An AF_INET datagram socket: the handle the SIOC* ioctls act through.
fn socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the fd is owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn open_tun() -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e} (modprobe tun)")))
}

/// Makes `name` a persistent TAP (or attaches to the one there), or with
/// `persist` false, ends its persistence (it goes when the last file
/// attached to it closes).
pub fn tap_persist(name: &str, persist: bool) -> io::Result<()> {
    let tun = open_tun()?;
    let mut req = IfReq::with_flags(name, IFF_TAP | IFF_NO_PI);
    ioctl(&tun, TUNSETIFF, &mut req, "TUNSETIFF")?;
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
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("TUNSETPERSIST: {e}")));
    }
    Ok(())
}

/// Sets `name` up (IFF_UP added to its flags).
pub fn up(name: &str) -> io::Result<()> {
    let s = socket()?;
    let mut req = IfReq::new(name);
    ioctl(&s, SIOCGIFFLAGS, &mut req, "SIOCGIFFLAGS")?;
    req.set_flags(req.flags() | IFF_UP);
    ioctl(&s, SIOCSIFFLAGS, &mut req, "SIOCSIFFLAGS")
}

/// Gives `name` its MAC and `ip`/24.
pub fn address(name: &str, mac: [u8; 6], ip: Ipv4Addr) -> io::Result<()> {
    let s = socket()?;
    let mut req = IfReq::new(name);
    req.addr = SockAddr::ether(mac);
    ioctl(&s, SIOCSIFHWADDR, &mut req, "SIOCSIFHWADDR")?;
    req.addr = SockAddr::inet(ip);
    ioctl(&s, SIOCSIFADDR, &mut req, "SIOCSIFADDR")?;
    req.addr = SockAddr::inet(Ipv4Addr::new(255, 255, 255, 0));
    ioctl(&s, SIOCSIFNETMASK, &mut req, "SIOCSIFNETMASK")
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
    ioctl(&s, SIOCSARP, &mut req, "SIOCSARP")
}

/// IPv6 off on `name` (before it is up: no router solicitation or DAD frame
/// reaches the guest). Best effort: a kernel without IPv6 has nothing to send.
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
    }

    #[test]
    fn addresses_are_laid_out_as_sockaddr_in_and_ether() {
        let a = SockAddr::inet(Ipv4Addr::new(10, 0, 1, 2));
        assert_eq!(a.family, 2);
        assert_eq!(&a.data[..6], &[0, 0, 10, 0, 1, 2]);
        let e = SockAddr::ether([2, 0x74, 0x6c, 0, 0, 1]);
        assert_eq!((e.family, &e.data[..6]), (1, &[2, 0x74, 0x6c, 0, 0, 1][..]));
        let mut r = IfReq::with_flags("tl0", IFF_TAP | IFF_NO_PI);
        assert_eq!(&r.name[..4], b"tl0\0");
        assert_eq!(r.flags(), 0x1002);
        r.set_flags(r.flags() | IFF_UP);
        assert_eq!(r.flags(), 0x1003);
    }
}
