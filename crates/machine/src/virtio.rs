//! virtio-mmio devices on the machine, with the notification and interrupt
//! paths the configuration picks. On the PC: one 4 KiB window and one GSI
//! per device in the reserved virtio range, announced on the guest's
//! command line (`virtio_mmio.device=4K@0xADDR:GSI`, as Firecracker does).
//! On `virt`: the first of QEMU's transports (0x200 bytes each, SPI 16 + n,
//! an irqfd's GSI being the SPI), named by the device tree. The disks take
//! the first transports, the network card (`--net`) the one after them.

use std::sync::Arc;

use trapline_bus::BusBuilder;
use trapline_devices::virtio::block::{Block, BlockCounters};
use trapline_devices::virtio::net::{DropReason, Net, NetCounters};
use trapline_devices::virtio::worker::{NotifyTarget, OnStart, ReadySource};
use trapline_devices::virtio::{
    DataPath, NotifyWorker, VirtioDevice, VirtioInterrupt, VirtioMmio, QUEUE_NOTIFY_OFFSET,
};
use trapline_fastpath::{Datamatch, IoEvent, IrqFd, Space};
use trapline_kvm::Vm;
use trapline_seccomp::ThreadKind;

use crate::arch::KvmIrqLines;
use crate::config::{NetConfig, VirtioConfig, VirtioIrq, VirtioNotify};
use crate::layout::{VIRTIO_GSIS, VIRTIO_MMIO_BASE, VIRTIO_MMIO_STRIDE};
use crate::MachineError;

/// The guest-physical window of device `index`.
pub fn device_base(index: usize) -> u64 {
    VIRTIO_MMIO_BASE + index as u64 * VIRTIO_MMIO_STRIDE
}

/// The command-line words announcing `count` devices.
pub fn cmdline(count: usize) -> String {
    (0..count)
        .map(|i| {
            format!(
                "virtio_mmio.device=4K@{:#x}:{}",
                device_base(i),
                VIRTIO_GSIS[i]
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One device's counters.
enum Counters {
    Block(Arc<BlockCounters>),
    Net(Arc<NetCounters>, String),
}

/// The machine's virtio devices and what keeps their paths alive.
#[derive(Default)]
pub(crate) struct VirtioSet {
    // Fast paths first: they are unbound before the devices go.
    ioevents: Vec<IoEvent>,
    irqfds: Vec<IrqFd>,
    pub(crate) devices: Vec<Arc<VirtioMmio>>,
    counters: Vec<Counters>,
    /// Per device: its ioeventfds go to the notify worker (not to a kernel
    /// back end).
    worker_serves: Vec<bool>,
    /// Back ends' receive fds the worker waits on.
    sources: Vec<ReadySource>,
    notify: VirtioNotify,
}

/// What a run reports about each virtio device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VirtioReadout {
    /// QueueNotify writes that reached trapline (exit or worker).
    pub notifies: u64,
    /// Requests completed.
    pub completions: u64,
    /// Interrupts raised.
    pub interrupts: u64,
    /// Reads, writes, flushes, errors (block devices).
    pub reads: u64,
    /// See `reads`.
    pub writes: u64,
    /// See `reads`.
    pub flushes: u64,
    /// See `reads`.
    pub errors: u64,
    /// The device asked for a reset (a broken ring).
    pub resets_requested: u64,
}

/// What a run reports about the network card.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetReadout {
    /// The back end (`echo`, `tap:NAME`, `vhost`).
    pub backend: String,
    /// QueueNotify writes that reached trapline, completions (chains
    /// used), interrupts raised, resets asked for.
    pub transport: VirtioReadout,
    /// Frames and bytes the guest sent that the back end took.
    pub tx_frames: u64,
    /// See `tx_frames`.
    pub tx_bytes: u64,
    /// Frames and bytes put in the guest's receive buffers.
    pub rx_frames: u64,
    /// See `rx_frames`.
    pub rx_bytes: u64,
    /// Frames dropped, by reason (every reason, in a fixed order).
    pub drops: Vec<(&'static str, u64)>,
    /// A kernel back end held the data path at the end.
    pub kernel_data_path: bool,
    /// Why the back end refused to go live, if it did.
    pub activate_error: Option<String>,
}

impl VirtioSet {
    /// Build the devices of `config` and map them on `mmio`.
    pub(crate) fn build(
        vm: &Vm,
        config: VirtioConfig,
        mmio: &mut BusBuilder,
    ) -> Result<Self, MachineError> {
        let mut set = VirtioSet {
            notify: config.notify,
            ..Default::default()
        };
        let count = config.device_count();
        if count > VIRTIO_GSIS.len() {
            return Err(MachineError::Config(format!(
                "{} virtio devices ({} disks{}): trapline has room for {}",
                count,
                config.disks.len(),
                if config.net.is_some() {
                    " and --net"
                } else {
                    ""
                },
                VIRTIO_GSIS.len()
            )));
        }
        // On arm64 the vGIC is always in the kernel (`virt` takes only
        // --irqchip kernel, and built the vGIC before the devices, so
        // irqfds may be registered).
        if count > 0 && !vm.config().irqchip.has_ioapic_and_pic() {
            return Err(MachineError::Config(format!(
                "virtio devices need the in-kernel IOAPIC for their interrupts: \
                 run with --irqchip kernel, not --irqchip {}",
                vm.config().irqchip.name()
            )));
        }
        let paths = Paths::from(&config);
        for disk in config.disks {
            let block = Block::new(disk);
            set.counters.push(Counters::Block(block.counters()));
            set.add(vm, &paths, Box::new(block), false, mmio)?;
        }
        if let Some(net) = config.net {
            set.add_net(vm, &paths, net, mmio)?;
        }
        Ok(set)
    }

    /// The network card on the next transport; a back end that takes the
    /// data path over gets the ioeventfds and the irqfd.
    fn add_net(
        &mut self,
        vm: &Vm,
        paths: &Paths,
        net: NetConfig,
        mmio: &mut BusBuilder,
    ) -> Result<(), MachineError> {
        let device = Net::new(net.backend, net.mac);
        let backend = device.backend();
        let takes_over = backend.takes_over();
        if takes_over && (paths.notify, paths.irq) != (VirtioNotify::Ioeventfd, VirtioIrq::Irqfd) {
            return Err(MachineError::Config(format!(
                "--net {}: a kernel back end needs --virtio-notify ioeventfd and --virtio-irq irqfd \
                 (the kernel takes the kick and signals the interrupt itself)",
                backend.name()
            )));
        }
        let rx_fd = backend
            .rx_fd()
            .map(|fd| fd.try_clone_to_owned())
            .transpose()
            .map_err(|source| MachineError::Host {
                what: "duplicating the network back end's fd",
                source,
            })?;
        self.counters
            .push(Counters::Net(device.counters(), device.backend_name()));
        let dev = self.add(vm, paths, Box::new(device), takes_over, mmio)?;
        if let Some(fd) = rx_fd {
            self.sources.push(ReadySource {
                fd,
                device: dev,
                queue: trapline_devices::virtio::net::RX_QUEUE as u32,
            });
        }
        Ok(())
    }

    /// Map `device` on the next transport with its interrupt and, on the
    /// ioeventfd path, one ioeventfd per queue (handed to the device when
    /// `kernel` back end takes them, to the notify worker otherwise).
    fn add(
        &mut self,
        vm: &Vm,
        paths: &Paths,
        device: Box<dyn VirtioDevice>,
        kernel: bool,
        mmio: &mut BusBuilder,
    ) -> Result<Arc<VirtioMmio>, MachineError> {
        let host = |what| move |source| MachineError::Host { what, source };
        let i = self.devices.len();
        let gsi = VIRTIO_GSIS[i];
        let base = device_base(i);
        let interrupt = match paths.irq {
            VirtioIrq::Line => VirtioInterrupt::line(
                Arc::new(KvmIrqLines {
                    vm: vm.fd().clone(),
                }),
                gsi,
            ),
            VirtioIrq::Irqfd => {
                let irqfd = IrqFd::register(vm.fd().clone(), gsi)?;
                let fd = irqfd.eventfd().try_clone().map_err(host("irqfd"))?;
                self.irqfds.push(irqfd);
                VirtioInterrupt::irqfd(fd)
            }
        };
        let dev = VirtioMmio::new(
            device,
            vm.memory().clone(),
            Arc::new(interrupt),
            paths.event_idx,
        )
        .map_err(|e| MachineError::Config(e.to_string()))?;
        let dev = Arc::new(dev);
        mmio.insert("virtio-mmio", base, VIRTIO_MMIO_STRIDE, dev.clone())?;
        if paths.notify == VirtioNotify::Ioeventfd {
            let mut kicks = Vec::new();
            for q in 0..dev.num_queues() as u32 {
                let ev = IoEvent::register(
                    vm.fd().clone(),
                    Space::Mmio,
                    base + QUEUE_NOTIFY_OFFSET,
                    Datamatch::U32(q),
                )?;
                if kernel {
                    kicks.push(ev.eventfd().try_clone().map_err(host("ioeventfd"))?);
                }
                self.ioevents.push(ev);
            }
            dev.set_kicks(kicks);
        }
        self.worker_serves.push(!kernel);
        self.devices.push(dev.clone());
        Ok(dev)
    }

    /// Start the notify worker (ioeventfd path with at least one device,
    /// or a back end with a receive fd); `seccomp` installs its filter
    /// first.
    pub(crate) fn spawn_worker(&self, seccomp: bool) -> Result<Option<NotifyWorker>, MachineError> {
        let host = |source| MachineError::Host {
            what: "virtio notify worker",
            source,
        };
        let mut targets = Vec::new();
        if self.notify == VirtioNotify::Ioeventfd {
            let mut events = self.ioevents.iter();
            for (dev, &serves) in self.devices.iter().zip(&self.worker_serves) {
                for q in 0..dev.num_queues() as u32 {
                    let Some(ev) = events.next() else { break };
                    if serves {
                        targets.push(NotifyTarget {
                            eventfd: ev.eventfd().try_clone().map_err(host)?,
                            device: dev.clone(),
                            queue: q,
                        });
                    }
                }
            }
        }
        let sources = self
            .sources
            .iter()
            .map(|s| {
                Ok(ReadySource {
                    fd: s.fd.try_clone().map_err(host)?,
                    device: s.device.clone(),
                    queue: s.queue,
                })
            })
            .collect::<Result<Vec<_>, MachineError>>()?;
        if targets.is_empty() && sources.is_empty() {
            return Ok(None);
        }
        let filter = if seccomp {
            Some(trapline_seccomp::filter(ThreadKind::VirtioWorker)?)
        } else {
            None
        };
        let on_start: OnStart = Box::new(move || match filter {
            Some(f) => trapline_seccomp::install_program(ThreadKind::VirtioWorker, &f)
                .map_err(|e| e.to_string()),
            None => Ok(()),
        });
        NotifyWorker::spawn("virtio-worker", targets, sources, on_start)
            .map(Some)
            .map_err(host)
    }

    fn transport(d: &VirtioMmio) -> VirtioReadout {
        VirtioReadout {
            notifies: d.notifies(),
            completions: d.completions(),
            interrupts: d.interrupt().raised(),
            resets_requested: d.resets_requested(),
            ..Default::default()
        }
    }

    /// Each disk's counters, in `--disk` order.
    pub(crate) fn readout(&self) -> Vec<VirtioReadout> {
        use std::sync::atomic::Ordering::Relaxed;
        self.devices
            .iter()
            .zip(&self.counters)
            .filter_map(|(d, c)| match c {
                Counters::Block(c) => Some(VirtioReadout {
                    reads: c.reads.load(Relaxed),
                    writes: c.writes.load(Relaxed),
                    flushes: c.flushes.load(Relaxed),
                    errors: c.errors.load(Relaxed),
                    ..Self::transport(d)
                }),
                Counters::Net(..) => None,
            })
            .collect()
    }

    /// The network card's counters, if the machine has one.
    pub(crate) fn net_readout(&self) -> Option<NetReadout> {
        use std::sync::atomic::Ordering::Relaxed;
        self.devices
            .iter()
            .zip(&self.counters)
            .find_map(|(d, c)| match c {
                Counters::Net(c, name) => Some(NetReadout {
                    backend: name.clone(),
                    transport: Self::transport(d),
                    tx_frames: c.tx_frames.load(Relaxed),
                    tx_bytes: c.tx_bytes.load(Relaxed),
                    rx_frames: c.rx_frames.load(Relaxed),
                    rx_bytes: c.rx_bytes.load(Relaxed),
                    drops: DropReason::ALL
                        .iter()
                        .map(|&r| (r.name(), c.drops(r)))
                        .collect(),
                    kernel_data_path: d.data_path() == DataPath::Kernel,
                    activate_error: d.activate_error(),
                }),
                Counters::Block(_) => None,
            })
    }
}

/// The notify, interrupt and EVENT_IDX choices every device shares.
struct Paths {
    notify: VirtioNotify,
    irq: VirtioIrq,
    event_idx: bool,
}

impl From<&VirtioConfig> for Paths {
    fn from(c: &VirtioConfig) -> Self {
        Self {
            notify: c.notify,
            irq: c.irq,
            event_idx: c.event_idx,
        }
    }
}
