//! virtio-mmio devices on the machine, with the notification and interrupt
//! paths the configuration picks. On the PC: one 4 KiB window and one GSI
//! per device in the reserved virtio range, announced on the guest's
//! command line (`virtio_mmio.device=4K@0xADDR:GSI`, as Firecracker does).
//! On `virt`: the first of QEMU's transports (0x200 bytes each, SPI 16 + n,
//! an irqfd's GSI being the SPI), named by the device tree.

use std::sync::Arc;

use trapline_bus::BusBuilder;
use trapline_devices::virtio::block::{Block, BlockCounters};
use trapline_devices::virtio::worker::{NotifyTarget, OnStart};
use trapline_devices::virtio::{NotifyWorker, VirtioInterrupt, VirtioMmio, QUEUE_NOTIFY_OFFSET};
use trapline_fastpath::{Datamatch, IoEvent, IrqFd, Space};
use trapline_kvm::Vm;
use trapline_seccomp::ThreadKind;

use crate::arch::KvmIrqLines;
use crate::config::{VirtioConfig, VirtioIrq, VirtioNotify};
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

/// The machine's virtio devices and what keeps their paths alive.
#[derive(Default)]
pub(crate) struct VirtioSet {
    // Fast paths first: they are unbound before the devices go.
    ioevents: Vec<IoEvent>,
    irqfds: Vec<IrqFd>,
    pub(crate) devices: Vec<Arc<VirtioMmio>>,
    pub(crate) counters: Vec<Arc<BlockCounters>>,
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
        if config.disks.len() > VIRTIO_GSIS.len() {
            return Err(MachineError::Config(format!(
                "{} disks: trapline has room for {} virtio devices",
                config.disks.len(),
                VIRTIO_GSIS.len()
            )));
        }
        // On arm64 the vGIC is always in the kernel (`virt` takes only
        // --irqchip kernel, and built the vGIC before the devices, so
        // irqfds may be registered).
        if !config.disks.is_empty() && !vm.config().irqchip.has_ioapic_and_pic() {
            return Err(MachineError::Config(format!(
                "virtio devices need the in-kernel IOAPIC for their interrupts: \
                 run with --irqchip kernel, not --irqchip {}",
                vm.config().irqchip.name()
            )));
        }
        let host = |what| move |source| MachineError::Host { what, source };
        for (i, disk) in config.disks.into_iter().enumerate() {
            let gsi = VIRTIO_GSIS[i];
            let base = device_base(i);
            let interrupt = match config.irq {
                VirtioIrq::Line => VirtioInterrupt::line(
                    Arc::new(KvmIrqLines {
                        vm: vm.fd().clone(),
                    }),
                    gsi,
                ),
                VirtioIrq::Irqfd => {
                    let irqfd = IrqFd::register(vm.fd().clone(), gsi)?;
                    let fd = irqfd.eventfd().try_clone().map_err(host("irqfd"))?;
                    set.irqfds.push(irqfd);
                    VirtioInterrupt::irqfd(fd)
                }
            };
            let block = Block::new(disk);
            set.counters.push(block.counters());
            let dev = VirtioMmio::new(
                Box::new(block),
                vm.memory().clone(),
                Arc::new(interrupt),
                config.event_idx,
            )
            .map_err(|e| MachineError::Config(e.to_string()))?;
            let dev = Arc::new(dev);
            mmio.insert("virtio-mmio", base, VIRTIO_MMIO_STRIDE, dev.clone())?;
            if config.notify == VirtioNotify::Ioeventfd {
                for q in 0..dev.num_queues() as u32 {
                    set.ioevents.push(IoEvent::register(
                        vm.fd().clone(),
                        Space::Mmio,
                        base + QUEUE_NOTIFY_OFFSET,
                        Datamatch::U32(q),
                    )?);
                }
            }
            set.devices.push(dev);
        }
        Ok(set)
    }

    /// Start the notify worker (ioeventfd path with at least one device);
    /// `seccomp` installs its filter first.
    pub(crate) fn spawn_worker(&self, seccomp: bool) -> Result<Option<NotifyWorker>, MachineError> {
        if self.notify != VirtioNotify::Ioeventfd || self.devices.is_empty() {
            return Ok(None);
        }
        let host = |source| MachineError::Host {
            what: "virtio notify worker",
            source,
        };
        let mut targets = Vec::new();
        let mut events = self.ioevents.iter();
        for dev in &self.devices {
            for q in 0..dev.num_queues() as u32 {
                let Some(ev) = events.next() else { break };
                targets.push(NotifyTarget {
                    eventfd: ev.eventfd().try_clone().map_err(host)?,
                    device: dev.clone(),
                    queue: q,
                });
            }
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
        NotifyWorker::spawn("virtio-worker", targets, on_start)
            .map(Some)
            .map_err(host)
    }

    /// Per-device counters.
    pub(crate) fn readout(&self) -> Vec<VirtioReadout> {
        use std::sync::atomic::Ordering::Relaxed;
        self.devices
            .iter()
            .zip(&self.counters)
            .map(|(d, c)| VirtioReadout {
                notifies: d.notifies(),
                completions: d.completions(),
                interrupts: d.interrupt().raised(),
                reads: c.reads.load(Relaxed),
                writes: c.writes.load(Relaxed),
                flushes: c.flushes.load(Relaxed),
                errors: c.errors.load(Relaxed),
                resets_requested: d.resets_requested(),
            })
            .collect()
    }
}
