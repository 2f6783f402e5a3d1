//! vhost-net: the host kernel moves virtio-net's packets.
//!
//! At DRIVER_OK the device hands the kernel what it negotiated (features,
//! queue sizes, ring addresses), the guest's memory and each queue's two
//! eventfds: the kick (the queue's ioeventfd, so the guest's QueueNotify
//! write wakes the kernel's vhost worker and never exits to trapline) and
//! the call (the irqfd, so the kernel's used-buffer interrupt reaches the
//! guest without trapline either), then attaches the TAP to both queues
//! (VHOST_NET_SET_BACKEND). From then on user space is off the data path:
//! no QueueNotify exit, no ring walk, no frame copy in trapline.
//!
//! [`Vhost`] is the back end (`--net vhost[:TAPNAME]`): a TAP opened with
//! the 12-byte virtio-net header (the kernel worker passes the guest's
//! header through to it) and [`VhostNet`], the open device. It needs the
//! ioeventfd and irqfd paths ([`NetBackend::takes_over`]); the transport
//! then serves none of its queues and reads InterruptStatus as "used
//! buffers" (the kernel signals the irqfd without touching the register).
//!
//! The ioctls are the kernel's `<linux/vhost.h>` interface, used raw
//! (vmm-sys-util's ioctl helpers); they are encoded alike on x86_64 and
//! arm64. A host without `/dev/vhost-net` gets [`VhostError::Absent`],
//! which names the module to load.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};

use super::backend::{NetBackend, TxError};
use super::tap::{Tap, TapError, TapOptions};
use crate::virtio::activate::{ActivateError, Activation, DataPath, MemRegion, QueueInfo};

use vmm_sys_util::ioctl::{ioctl, ioctl_with_mut_ref, ioctl_with_ptr, ioctl_with_ref};

/// Where the host kernel offers vhost-net.
pub const VHOST_NET_PATH: &str = "/dev/vhost-net";

/// The kernel module that provides [`VHOST_NET_PATH`].
pub const VHOST_NET_MODULE: &str = "vhost_net";

/// vhost's ioctl type (`VHOST_VIRTIO` in `<linux/vhost.h>`).
const VHOST_VIRTIO: u32 = 0xAF;

vmm_sys_util::ioctl_ior_nr!(VHOST_GET_FEATURES, VHOST_VIRTIO, 0x00, u64);
vmm_sys_util::ioctl_iow_nr!(VHOST_SET_FEATURES, VHOST_VIRTIO, 0x00, u64);
vmm_sys_util::ioctl_io_nr!(VHOST_SET_OWNER, VHOST_VIRTIO, 0x01);
// The size is the header's (nregions, padding): the regions follow it.
vmm_sys_util::ioctl_iow_nr!(VHOST_SET_MEM_TABLE, VHOST_VIRTIO, 0x03, [u32; 2]);
vmm_sys_util::ioctl_iow_nr!(VHOST_SET_VRING_NUM, VHOST_VIRTIO, 0x10, VringState);
vmm_sys_util::ioctl_iow_nr!(VHOST_SET_VRING_ADDR, VHOST_VIRTIO, 0x11, VringAddr);
vmm_sys_util::ioctl_iow_nr!(VHOST_SET_VRING_BASE, VHOST_VIRTIO, 0x12, VringState);
vmm_sys_util::ioctl_iowr_nr!(VHOST_GET_VRING_BASE, VHOST_VIRTIO, 0x12, VringState);
vmm_sys_util::ioctl_iow_nr!(VHOST_SET_VRING_KICK, VHOST_VIRTIO, 0x20, VringFile);
vmm_sys_util::ioctl_iow_nr!(VHOST_SET_VRING_CALL, VHOST_VIRTIO, 0x21, VringFile);
vmm_sys_util::ioctl_iow_nr!(VHOST_NET_SET_BACKEND, VHOST_VIRTIO, 0x30, VringFile);

/// `struct vhost_vring_state`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct VringState {
    index: u32,
    num: u32,
}

/// `struct vhost_vring_file` (fd -1 detaches).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct VringFile {
    index: u32,
    fd: i32,
}

/// `struct vhost_vring_addr`: the rings as addresses in trapline's own
/// address space, where the kernel worker reads them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct VringAddr {
    index: u32,
    flags: u32,
    desc_user_addr: u64,
    used_user_addr: u64,
    avail_user_addr: u64,
    log_guest_addr: u64,
}

/// `struct vhost_memory_region`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MemRegionRaw {
    guest_phys_addr: u64,
    memory_size: u64,
    userspace_addr: u64,
    flags_padding: u64,
}

/// The most memory regions vhost accepts by default (the vhost module's
/// `max_mem_regions`); trapline's machines have one or two.
pub const MAX_MEM_REGIONS: usize = 64;

/// Why vhost-net could not take the data path.
#[derive(Debug, thiserror::Error)]
pub enum VhostError {
    /// The host has no vhost-net device.
    #[error(
        "{} does not exist: this host's kernel offers no vhost-net (load it with `modprobe {VHOST_NET_MODULE}`, as root), or use --net tap",
        path.display()
    )]
    Absent {
        /// The path looked at.
        path: PathBuf,
    },
    /// The device exists but could not be opened.
    #[error("cannot open {}: {source} (vhost-net needs read and write access to it: root, or a group given it)", path.display())]
    Open {
        /// The path opened.
        path: PathBuf,
        /// The OS's reason.
        source: io::Error,
    },
    /// An ioctl the kernel refused.
    #[error("vhost-net: {op} failed: {source}")]
    Ioctl {
        /// The request (`VHOST_SET_OWNER`, …).
        op: &'static str,
        /// The kernel's error.
        source: io::Error,
    },
    /// The guest negotiated a feature the kernel's vhost-net lacks.
    #[error(
        "vhost-net offers features {offered:#x}, but the guest negotiated {negotiated:#x} (missing {:#x}): offer the guest only what vhost-net has",
        negotiated & !offered
    )]
    Features {
        /// What the kernel offers.
        offered: u64,
        /// What the guest and the device agreed.
        negotiated: u64,
    },
    /// A ring (or part of one) lies outside every memory region.
    #[error("queue {queue}: its {ring} ({len} bytes at guest address {addr:#x}) is not inside guest RAM")]
    RingOutsideRam {
        /// The queue's index.
        queue: usize,
        /// `descriptor table`, `available ring` or `used ring`.
        ring: &'static str,
        /// Its guest-physical address.
        addr: u64,
        /// Its length in bytes.
        len: u64,
    },
    /// More or fewer memory regions than vhost takes.
    #[error("vhost-net takes 1 to {MAX_MEM_REGIONS} memory regions, the guest has {0}")]
    Regions(usize),
    /// A queue size vhost cannot take.
    #[error("queue {queue}: size {size} is not a power of two from 1 to 32768")]
    QueueSize {
        /// The queue's index.
        queue: usize,
        /// The size the driver chose.
        size: u16,
    },
}

/// The host address of `len` bytes at guest `addr`, when they lie wholly
/// in `r`.
fn translate(r: &MemRegion, addr: u64, len: u64) -> Option<u64> {
    let off = addr.checked_sub(r.guest_phys)?;
    (off.checked_add(len)? <= r.size).then(|| r.host_addr + off)
}

/// One virtqueue as the driver set it up, and its two eventfds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSetup {
    /// The size the driver chose (QueueNum).
    pub size: u16,
    /// Guest-physical address of the descriptor table.
    pub desc: u64,
    /// Guest-physical address of the available ring.
    pub avail: u64,
    /// Guest-physical address of the used ring.
    pub used: u64,
    /// The available index the kernel starts from (the device's next).
    pub base: u16,
    /// The eventfd the guest's notification signals (its ioeventfd).
    pub kick: RawFd,
    /// The eventfd the kernel signals for the guest's interrupt (its irqfd).
    pub call: RawFd,
}

impl QueueSetup {
    /// `info` with its kick and call eventfds.
    pub fn new(info: &QueueInfo, kick: RawFd, call: RawFd) -> Self {
        QueueSetup {
            size: info.size,
            desc: info.desc,
            avail: info.avail,
            used: info.used,
            base: info.next_avail,
            kick,
            call,
        }
    }

    /// The three rings' lengths in bytes for this size, with EVENT_IDX's
    /// trailing fields (split virtqueue, virtio 1.x 2.7).
    fn ring_lengths(&self) -> [(&'static str, u64, u64); 3] {
        let n = u64::from(self.size);
        [
            ("descriptor table", self.desc, 16 * n),
            ("available ring", self.avail, 6 + 2 * n),
            ("used ring", self.used, 6 + 8 * n),
        ]
    }
}

/// The `VHOST_SET_MEM_TABLE` argument: the header and its regions.
fn mem_table(regions: &[MemRegion]) -> Result<Vec<u64>, VhostError> {
    if regions.is_empty() || regions.len() > MAX_MEM_REGIONS {
        return Err(VhostError::Regions(regions.len()));
    }
    // As u64 words: the header (u32 nregions, u32 padding) is one, each
    // region four; a Vec<u64> keeps them 8-byte aligned for the kernel.
    let mut words = Vec::with_capacity(1 + 4 * regions.len());
    words.push(regions.len() as u64); // little-endian: nregions, then padding 0
    for r in regions {
        let raw = MemRegionRaw {
            guest_phys_addr: r.guest_phys,
            memory_size: r.size,
            userspace_addr: r.host_addr,
            flags_padding: 0,
        };
        words.extend([
            raw.guest_phys_addr,
            raw.memory_size,
            raw.userspace_addr,
            raw.flags_padding,
        ]);
    }
    Ok(words)
}

/// The queue's rings as host addresses, each checked to lie in guest RAM.
fn vring_addr(
    index: usize,
    q: &QueueSetup,
    regions: &[MemRegion],
) -> Result<VringAddr, VhostError> {
    if q.size == 0 || !q.size.is_power_of_two() {
        return Err(VhostError::QueueSize {
            queue: index,
            size: q.size,
        });
    }
    let mut host = [0u64; 3];
    for (slot, (ring, addr, len)) in host.iter_mut().zip(q.ring_lengths()) {
        *slot = regions.iter().find_map(|r| translate(r, addr, len)).ok_or(
            VhostError::RingOutsideRam {
                queue: index,
                ring,
                addr,
                len,
            },
        )?;
    }
    Ok(VringAddr {
        index: index as u32,
        flags: 0,
        desc_user_addr: host[0],
        avail_user_addr: host[1],
        used_user_addr: host[2],
        log_guest_addr: 0,
    })
}

/// An open `/dev/vhost-net`: one kernel worker for one device's queues.
/// Dropping it detaches the TAP and closes the device, which stops the
/// worker.
pub struct VhostNet {
    file: File,
    /// Queues attached to a back end, detached on drop.
    attached: usize,
}

impl VhostNet {
    /// Opens [`VHOST_NET_PATH`] and takes ownership (VHOST_SET_OWNER: the
    /// worker belongs to this process's memory).
    pub fn open() -> Result<Self, VhostError> {
        Self::open_at(Path::new(VHOST_NET_PATH))
    }

    /// [`VhostNet::open`] at another path (tests).
    pub fn open_at(path: &Path) -> Result<Self, VhostError> {
        if !path.exists() {
            return Err(VhostError::Absent {
                path: path.to_path_buf(),
            });
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| VhostError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        let v = VhostNet { file, attached: 0 };
        // SAFETY: an ioctl without an argument on the vhost fd we own.
        let r = unsafe { ioctl(&v.file, VHOST_SET_OWNER()) };
        check(r, "VHOST_SET_OWNER")?;
        Ok(v)
    }

    /// The features the kernel's vhost-net offers (VHOST_GET_FEATURES).
    pub fn features(&self) -> Result<u64, VhostError> {
        let mut f = 0u64;
        // SAFETY: the kernel writes one u64 into `f`, which outlives the call.
        let r = unsafe { ioctl_with_mut_ref(&self.file, VHOST_GET_FEATURES(), &mut f) };
        check(r, "VHOST_GET_FEATURES")?;
        Ok(f)
    }

    /// Hands the kernel the data path: `features` (what the guest
    /// negotiated; each one must be among [`VhostNet::features`]), the
    /// guest's memory, each queue (0 receive, 1 transmit) with its kick and
    /// call eventfds, then `tap` as both queues' back end. The rings start
    /// where the device left them (index 0 after a reset).
    pub fn start(
        &mut self,
        features: u64,
        regions: &[MemRegion],
        queues: &[QueueSetup],
        tap: RawFd,
    ) -> Result<(), VhostError> {
        let offered = self.features()?;
        if features & !offered != 0 {
            return Err(VhostError::Features {
                offered,
                negotiated: features,
            });
        }
        let addrs = queues
            .iter()
            .enumerate()
            .map(|(i, q)| vring_addr(i, q, regions))
            .collect::<Result<Vec<_>, _>>()?;
        let table = mem_table(regions)?;
        // SAFETY: the kernel reads one u64 from `features`.
        let r = unsafe { ioctl_with_ref(&self.file, VHOST_SET_FEATURES(), &features) };
        check(r, "VHOST_SET_FEATURES")?;
        // SAFETY: `table` is the header and `regions.len()` regions the
        // header announces, 8-byte aligned, alive for the call; the kernel
        // only reads it.
        let r = unsafe { ioctl_with_ptr(&self.file, VHOST_SET_MEM_TABLE(), table.as_ptr()) };
        check(r, "VHOST_SET_MEM_TABLE")?;
        for (i, (q, addr)) in queues.iter().zip(&addrs).enumerate() {
            self.set_queue(i as u32, q, addr)?;
        }
        for i in 0..queues.len() {
            self.set_backend(i as u32, tap)?;
            self.attached = i + 1;
        }
        Ok(())
    }

    /// One queue's size, start index, rings and eventfds.
    fn set_queue(&self, index: u32, q: &QueueSetup, addr: &VringAddr) -> Result<(), VhostError> {
        let num = VringState {
            index,
            num: u32::from(q.size),
        };
        let base = VringState {
            index,
            num: u32::from(q.base),
        };
        // SAFETY: the vhost fd we own and a fully initialised argument the
        // kernel only reads, alive for the call (so for each call below).
        let r = unsafe { ioctl_with_ref(&self.file, VHOST_SET_VRING_NUM(), &num) };
        check(r, "VHOST_SET_VRING_NUM")?;
        // SAFETY: as above.
        let r = unsafe { ioctl_with_ref(&self.file, VHOST_SET_VRING_BASE(), &base) };
        check(r, "VHOST_SET_VRING_BASE")?;
        // SAFETY: as above; the addresses were checked to lie in regions
        // the memory table maps, which trapline keeps mapped while `self`
        // lives (the device owns both).
        let r = unsafe { ioctl_with_ref(&self.file, VHOST_SET_VRING_ADDR(), addr) };
        check(r, "VHOST_SET_VRING_ADDR")?;
        let kick = VringFile { index, fd: q.kick };
        // SAFETY: as above.
        let r = unsafe { ioctl_with_ref(&self.file, VHOST_SET_VRING_KICK(), &kick) };
        check(r, "VHOST_SET_VRING_KICK")?;
        let call = VringFile { index, fd: q.call };
        // SAFETY: as above.
        let r = unsafe { ioctl_with_ref(&self.file, VHOST_SET_VRING_CALL(), &call) };
        check(r, "VHOST_SET_VRING_CALL")
    }

    /// Attaches `fd` (a TAP) to queue `index`, or detaches with -1.
    fn set_backend(&self, index: u32, fd: RawFd) -> Result<(), VhostError> {
        let file = VringFile { index, fd };
        // SAFETY: the vhost fd we own and a vhost_vring_file the kernel reads.
        let r = unsafe { ioctl_with_ref(&self.file, VHOST_NET_SET_BACKEND(), &file) };
        check(r, "VHOST_NET_SET_BACKEND")
    }

    /// Where queue `index`'s kernel worker is in the available ring
    /// (VHOST_GET_VRING_BASE), e.g. for a test that the worker moved.
    pub fn vring_base(&self, index: u32) -> Result<u32, VhostError> {
        let mut s = VringState { index, num: 0 };
        // SAFETY: the kernel reads `index` and writes `num` of `s`.
        let r = unsafe { ioctl_with_mut_ref(&self.file, VHOST_GET_VRING_BASE(), &mut s) };
        check(r, "VHOST_GET_VRING_BASE")?;
        Ok(s.num)
    }

    /// Detaches the TAP from every queue (the worker stops touching guest
    /// memory); also done on drop.
    pub fn stop(&mut self) {
        for i in (0..self.attached).rev() {
            let _ = self.set_backend(i as u32, -1);
        }
        self.attached = 0;
    }
}

impl Drop for VhostNet {
    fn drop(&mut self) {
        self.stop();
    }
}

impl AsRawFd for VhostNet {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

/// Why `--net vhost` cannot start.
#[derive(Debug, thiserror::Error)]
pub enum VhostOpenError {
    /// /dev/vhost-net is absent or refused.
    #[error(transparent)]
    Vhost(#[from] VhostError),
    /// The TAP it would move frames to.
    #[error("the TAP for vhost-net: {0}")]
    Tap(#[from] TapError),
}

/// The feature bits the device keeps to itself (its configuration space,
/// which trapline serves): the rest are the data path's and must be
/// vhost-net's.
const DEVICE_ONLY_FEATURES: u64 = 1 << super::F_MAC | 1 << super::F_STATUS;

/// The vhost-net back end: the kernel's worker between the guest's rings
/// and a TAP.
pub struct Vhost {
    tap: Tap,
    vhost: VhostNet,
}

impl Vhost {
    /// Opens /dev/vhost-net (first: its absence is the likelier failure),
    /// then the TAP `tap` names (or creates) with the 12-byte header.
    pub fn open(tap: Option<String>) -> Result<Self, VhostOpenError> {
        let vhost = VhostNet::open()?;
        let tap = Tap::open(&TapOptions {
            name: tap,
            vnet_hdr: true,
        })?;
        Ok(Vhost { tap, vhost })
    }

    /// The TAP interface's name.
    pub fn tap_name(&self) -> &str {
        self.tap.name()
    }
}

impl NetBackend for Vhost {
    fn name(&self) -> String {
        format!("vhost:{}", self.tap.name())
    }

    // The kernel has the data path: the device never hands this back end a
    // frame, and it has none to give.
    fn transmit(&mut self, _frame: &[u8]) -> Result<(), TxError> {
        Ok(())
    }

    fn receive(&mut self, _buf: &mut [u8]) -> Option<usize> {
        None
    }

    fn takes_over(&self) -> bool {
        true
    }

    fn activate(&mut self, a: &Activation<'_>) -> Result<DataPath, ActivateError> {
        let call = a.call.ok_or_else(|| {
            ActivateError(
                "vhost-net signals the guest through an irqfd: run with --virtio-irq irqfd".into(),
            )
        })?;
        if a.kicks.len() != a.queues.len() {
            return Err(ActivateError(
                "vhost-net is woken by the queues' ioeventfds: run with --virtio-notify ioeventfd"
                    .into(),
            ));
        }
        let queues: Vec<QueueSetup> = a
            .queues
            .iter()
            .zip(a.kicks)
            .map(|(q, kick)| QueueSetup::new(q, kick.as_raw_fd(), call.as_raw_fd()))
            .collect();
        self.vhost
            .start(
                a.features & !DEVICE_ONLY_FEATURES,
                a.memory,
                &queues,
                self.tap.fd().as_raw_fd(),
            )
            .map_err(|e| ActivateError(e.to_string()))?;
        Ok(DataPath::Kernel)
    }

    fn reset(&mut self) {
        self.vhost.stop();
    }
}

fn check(r: i32, op: &'static str) -> Result<(), VhostError> {
    if r < 0 {
        Err(VhostError::Ioctl {
            op,
            source: io::Error::last_os_error(),
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request numbers `<linux/vhost.h>` gives (the same on x86_64 and
    /// arm64: both use the generic ioctl encoding).
    #[test]
    fn ioctl_numbers_are_the_kernels() {
        assert_eq!(VHOST_GET_FEATURES(), 0x8008_AF00);
        assert_eq!(VHOST_SET_FEATURES(), 0x4008_AF00);
        assert_eq!(VHOST_SET_OWNER(), 0x0000_AF01);
        assert_eq!(VHOST_SET_MEM_TABLE(), 0x4008_AF03);
        assert_eq!(VHOST_SET_VRING_NUM(), 0x4008_AF10);
        assert_eq!(VHOST_SET_VRING_ADDR(), 0x4028_AF11);
        assert_eq!(VHOST_SET_VRING_BASE(), 0x4008_AF12);
        assert_eq!(VHOST_GET_VRING_BASE(), 0xC008_AF12);
        assert_eq!(VHOST_SET_VRING_KICK(), 0x4008_AF20);
        assert_eq!(VHOST_SET_VRING_CALL(), 0x4008_AF21);
        assert_eq!(VHOST_NET_SET_BACKEND(), 0x4008_AF30);
        assert_eq!(std::mem::size_of::<MemRegionRaw>(), 32);
    }

    #[test]
    fn an_absent_device_names_the_module_to_load() {
        let e = VhostNet::open_at(Path::new("/nonexistent/vhost-net"))
            .err()
            .expect("no device there");
        let msg = e.to_string();
        assert!(msg.contains("modprobe vhost_net"), "{msg}");
        assert!(msg.contains("/nonexistent/vhost-net"), "{msg}");
    }

    #[test]
    fn a_file_that_is_not_vhost_is_refused_at_set_owner() {
        let e = VhostNet::open_at(Path::new("/dev/null"))
            .err()
            .expect("/dev/null is no vhost device");
        assert!(e.to_string().contains("VHOST_SET_OWNER"), "{e}");
    }

    const RAM: [MemRegion; 2] = [
        MemRegion {
            guest_phys: 0,
            size: 0x10_0000,
            host_addr: 0x7f00_0000_0000,
        },
        MemRegion {
            guest_phys: 0x1_0000_0000,
            size: 0x1000,
            host_addr: 0x7f10_0000_0000,
        },
    ];

    fn queue(desc: u64, avail: u64, used: u64, size: u16) -> QueueSetup {
        QueueSetup {
            size,
            desc,
            avail,
            used,
            base: 0,
            kick: -1,
            call: -1,
        }
    }

    #[test]
    fn rings_are_translated_to_host_addresses_region_by_region() {
        let a = vring_addr(1, &queue(0x1000, 0x2000, 0x1_0000_0000, 256), &RAM).unwrap();
        assert_eq!(a.index, 1);
        assert_eq!(a.desc_user_addr, 0x7f00_0000_1000);
        assert_eq!(a.avail_user_addr, 0x7f00_0000_2000);
        assert_eq!(a.used_user_addr, 0x7f10_0000_0000);
    }

    #[test]
    fn a_ring_outside_or_straddling_ram_is_refused_by_name() {
        // The used ring of 256 entries (2054 bytes) runs past the 4 KiB region.
        let e = vring_addr(0, &queue(0x1000, 0x2000, 0x1_0000_0800, 256), &RAM).unwrap_err();
        assert!(
            matches!(
                e,
                VhostError::RingOutsideRam {
                    ring: "used ring",
                    len: 2054,
                    ..
                }
            ),
            "{e}"
        );
        // Straddling the end of the first region.
        let e = vring_addr(0, &queue(0xF_F800, 0x2000, 0x3000, 256), &RAM).unwrap_err();
        assert!(e.to_string().contains("descriptor table"), "{e}");
        let e = vring_addr(0, &queue(u64::MAX - 8, 0x2000, 0x3000, 256), &RAM).unwrap_err();
        assert!(e.to_string().contains("not inside guest RAM"), "{e}");
        let e = vring_addr(0, &queue(0x1000, 0x2000, 0x3000, 3), &RAM).unwrap_err();
        assert!(matches!(e, VhostError::QueueSize { size: 3, .. }), "{e}");
        let e = vring_addr(0, &queue(0x1000, 0x2000, 0x3000, 0), &RAM).unwrap_err();
        assert!(matches!(e, VhostError::QueueSize { size: 0, .. }), "{e}");
    }

    #[test]
    fn the_memory_table_is_a_header_then_regions() {
        let t = mem_table(&RAM).unwrap();
        assert_eq!(t.len(), 1 + 2 * 4);
        assert_eq!(t[0], 2);
        assert_eq!(&t[1..5], &[0, 0x10_0000, 0x7f00_0000_0000, 0]);
        assert_eq!(&t[5..9], &[0x1_0000_0000, 0x1000, 0x7f10_0000_0000, 0]);
        assert!(matches!(mem_table(&[]), Err(VhostError::Regions(0))));
        let many = vec![RAM[0]; MAX_MEM_REGIONS + 1];
        assert!(matches!(mem_table(&many), Err(VhostError::Regions(65))));
    }
}
