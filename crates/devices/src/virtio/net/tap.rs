//! The TAP back end: frames go to and come from a Linux TAP interface
//! (`/dev/net/tun`, IFF_TAP | IFF_NO_PI), either one that exists (made for
//! the user with `ip tuntap add dev NAME mode tap user USER`: attaching
//! then needs no privilege) or one trapline creates (needs CAP_NET_ADMIN;
//! it is brought up and disappears when trapline exits).
//!
//! The fd is non-blocking: a full TAP queue drops the transmitted frame
//! (counted `tx_backend`), and the receive side reads until the TAP is
//! empty or the guest has no buffer left; the machine's virtio worker
//! waits on the fd (edge-triggered) for the next frames.
//!
//! [`TapOptions::vnet_hdr`] opens it with IFF_VNET_HDR and a 12-byte
//! header, what a kernel back end (vhost-net) needs; the user-space back
//! end does not use it (trapline offers no offloads to carry).
//!
//! `struct ifreq` and the ioctls are [`super::iface`]'s, which net-paths'
//! namespace uses too.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::backend::{NetBackend, TxError};
use super::iface::{self, IfReq, IFF_NO_PI, IFF_TAP, IFF_VNET_HDR};
// The interface's name rules and /dev/net/tun live with the ioctls.
pub use super::iface::{valid_name, MAX_NAME, TUN_PATH};

/// How to open the TAP.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TapOptions {
    /// The interface: an existing TAP to attach to, or a name for the one
    /// trapline creates; `None` lets the kernel pick (`tapN`).
    pub name: Option<String>,
    /// IFF_VNET_HDR with a 12-byte `virtio_net_hdr_v1` before each frame
    /// (for a kernel back end).
    pub vnet_hdr: bool,
}

/// Why a TAP cannot back the device.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    /// The name cannot be an interface name.
    #[error("TAP name {0:?}: an interface name is 1 to 15 characters, none of them '/', ':', white space or NUL")]
    BadName(String),
    /// /dev/net/tun is missing.
    #[error("{TUN_PATH} does not exist: load the tun module (`modprobe tun`) or create the node (`mknod /dev/net/tun c 10 200`)")]
    NoTunDevice,
    /// /dev/net/tun cannot be opened.
    #[error("cannot open {TUN_PATH}: {0} (its permissions let only some users open it; run as a user who may, or as root)")]
    OpenTun(#[source] io::Error),
    /// Not allowed to create or attach.
    #[error("no permission to {what}: {hint}")]
    Permission {
        /// "create a TAP interface" or "attach to TAP NAME".
        what: String,
        /// What to do.
        hint: &'static str,
    },
    /// The TAP is already attached to another process.
    #[error(
        "TAP {0} is busy: another process (a VMM?) has it open; stop it, or give another name"
    )]
    Busy(String),
    /// An interface of that name exists and is not a TAP.
    #[error("interface {0} exists but is not a TAP (a TUN, a bridge, a NIC?): give the name of a TAP, or a new name for trapline to create")]
    NotATap(String),
    /// Another ioctl failed.
    #[error("{what} on TAP {name}: {source}")]
    Ioctl {
        /// Which step.
        what: &'static str,
        /// The interface.
        name: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

const CREATE_HINT: &str = "creating a TAP needs CAP_NET_ADMIN: run as root, or create it once for your user (`sudo ip tuntap add dev tap0 mode tap user $USER && sudo ip link set tap0 up`) and pass --net tap:tap0";
const ATTACH_HINT: &str = "the TAP belongs to another user or group: recreate it for your user (`ip tuntap add dev NAME mode tap user $USER`) or run as root";

fn interface_exists(name: &str) -> bool {
    Path::new("/sys/class/net").join(name).exists()
}

/// An open TAP interface.
#[derive(Debug)]
pub struct Tap {
    file: File,
    name: String,
    created: bool,
}

impl Tap {
    /// Attach to, or create, the TAP `options` names.
    pub fn open(options: &TapOptions) -> Result<Self, TapError> {
        let requested = options.name.clone().unwrap_or_default();
        if options.name.is_some() && !valid_name(&requested) {
            return Err(TapError::BadName(requested));
        }
        let existed = options.name.is_some() && interface_exists(&requested);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(TUN_PATH)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => TapError::NoTunDevice,
                _ => TapError::OpenTun(e),
            })?;
        let mut flags = IFF_TAP | IFF_NO_PI;
        if options.vnet_hdr {
            flags |= IFF_VNET_HDR;
        }
        let mut req = IfReq::with_flags(&requested, flags);
        iface::tun_set_iff(&file, &mut req).map_err(|e| setiff_error(e, &requested, existed))?;
        let tap = Self {
            file,
            name: req.name(),
            created: !existed,
        };
        if options.vnet_hdr {
            iface::tun_set_vnet_hdr_len(&tap.file, super::HEADER_LEN as libc::c_int)
                .map_err(|e| tap.ioctl_error("setting the 12-byte vnet header", e))?;
        }
        if tap.created {
            tap.bring_up()?;
        }
        Ok(tap)
    }

    /// The interface's name (the kernel's choice when none was given).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether trapline created it (it goes away with the fd).
    pub fn created(&self) -> bool {
        self.created
    }

    /// The TAP's fd (a kernel back end hands it to vhost-net).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    fn ioctl_error(&self, what: &'static str, source: io::Error) -> TapError {
        TapError::Ioctl {
            what,
            name: self.name.clone(),
            source,
        }
    }

    /// IFF_UP on the interface trapline created, so the host may send (the
    /// error's source names the step: the socket, SIOCGIFFLAGS or SIOCSIFFLAGS).
    fn bring_up(&self) -> Result<(), TapError> {
        iface::up(&self.name).map_err(|e| self.ioctl_error("bringing it up", e))
    }
}

fn setiff_error(e: io::Error, name: &str, existed: bool) -> TapError {
    let shown = if name.is_empty() { "(new)" } else { name };
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) if existed => TapError::Permission {
            what: format!("attach to TAP {shown}"),
            hint: ATTACH_HINT,
        },
        Some(libc::EPERM) | Some(libc::EACCES) => TapError::Permission {
            what: format!("create TAP {shown} (it does not exist)"),
            hint: CREATE_HINT,
        },
        Some(libc::EBUSY) => TapError::Busy(shown.to_owned()),
        Some(libc::EINVAL) if existed => TapError::NotATap(shown.to_owned()),
        _ => TapError::Ioctl {
            what: "TUNSETIFF",
            name: shown.to_owned(),
            source: e,
        },
    }
}

impl NetBackend for Tap {
    fn name(&self) -> String {
        format!("tap:{}", self.name)
    }

    fn transmit(&mut self, frame: &[u8]) -> Result<(), TxError> {
        match self.file.write(frame) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(TxError::Busy),
            Err(e) => Err(TxError::Failed(e)),
        }
    }

    fn receive(&mut self, buf: &mut [u8]) -> Option<usize> {
        loop {
            match self.file.read(buf) {
                Ok(0) => return None,
                Ok(n) => return Some(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // WouldBlock: empty. Anything else (the interface went
                // away): nothing to receive; transmit reports the failure.
                Err(_) => return None,
            }
        }
    }

    fn rx_fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.file.as_fd())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names_are_checked_before_the_kernel_sees_them() {
        for bad in iface::TEST_NAMES.1 {
            let e = Tap::open(&TapOptions {
                name: Some(bad.into()),
                vnet_hdr: false,
            })
            .unwrap_err();
            assert!(matches!(e, TapError::BadName(_)), "{bad:?}: {e}");
        }
    }

    #[test]
    fn errors_say_what_to_do() {
        let perm = setiff_error(io::Error::from_raw_os_error(libc::EPERM), "tap9", false);
        assert!(perm.to_string().contains("CAP_NET_ADMIN"), "{perm}");
        let attach = setiff_error(io::Error::from_raw_os_error(libc::EPERM), "tap9", true);
        assert!(
            attach.to_string().contains("attach to TAP tap9"),
            "{attach}"
        );
        let busy = setiff_error(io::Error::from_raw_os_error(libc::EBUSY), "tap9", true);
        assert!(busy.to_string().contains("busy"), "{busy}");
        let tun = setiff_error(io::Error::from_raw_os_error(libc::EINVAL), "lo", true);
        assert!(tun.to_string().contains("not a TAP"), "{tun}");
    }
}
