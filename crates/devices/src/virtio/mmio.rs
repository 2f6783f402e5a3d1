//! The virtio-mmio transport, register layout version 2 (virtio 1.x
//! §4.2.2): identification, features, status, queue setup, notify and
//! interrupt registers at 0x000–0x0FF, the device's configuration space
//! from 0x100.
//!
//! Registers take aligned 32-bit accesses only; other widths read as 0 and
//! writes of them are ignored, as the specification lets a device do. The
//! configuration space takes any width.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use trapline_bus::{AccessSizes, BusDevice, IoOutcome};
use virtio_queue::{Queue, QueueOwnedT, QueueT};
use vm_memory::GuestMemoryMmap;
use vmm_sys_util::eventfd::EventFd;

use super::activate::{memory_map, Activation, DataPath, QueueInfo};
use super::interrupt::{VirtioInterrupt, INT_CONFIG, INT_VRING};
use super::queue_regs::{self, QueueSlot};
use super::status::{DeviceStatus, StatusChange};
use super::{Chain, Handled, VirtioDevice, VIRTIO_F_VERSION_1, VIRTIO_RING_F_EVENT_IDX};

/// Size of one device's MMIO window.
pub const MMIO_LEN: u64 = 0x1000;
/// QueueNotify: the doorbell a KVM ioeventfd may take over.
pub const QUEUE_NOTIFY_OFFSET: u64 = 0x50;
/// InterruptStatus: what a driver reads on each interrupt.
pub const INTERRUPT_STATUS_OFFSET: u64 = 0x60;
/// InterruptACK: what a driver writes to acknowledge it.
pub const INTERRUPT_ACK_OFFSET: u64 = 0x64;
/// The registers a driver touches per frame once the device runs (a kick,
/// and each interrupt's read and acknowledgement); every other register is
/// set-up. net-paths counts the exits at these as the data path's.
pub const DATA_PATH_OFFSETS: [u64; 3] = [
    QUEUE_NOTIFY_OFFSET,
    INTERRUPT_STATUS_OFFSET,
    INTERRUPT_ACK_OFFSET,
];

/// MagicValue: "virt" (little-endian).
pub const MAGIC: u32 = 0x7472_6976;
const VERSION: u32 = 2;
/// VendorID: "TRPL".
pub const VENDOR_ID: u32 = 0x4c50_5254;

mod reg {
    pub const MAGIC: u64 = 0x00;
    pub const VERSION: u64 = 0x04;
    pub const DEVICE_ID: u64 = 0x08;
    pub const VENDOR_ID: u64 = 0x0c;
    pub const DEVICE_FEATURES: u64 = 0x10;
    pub const DEVICE_FEATURES_SEL: u64 = 0x14;
    pub const DRIVER_FEATURES: u64 = 0x20;
    pub const DRIVER_FEATURES_SEL: u64 = 0x24;
    pub const QUEUE_SEL: u64 = 0x30;
    pub const INTERRUPT_STATUS: u64 = super::INTERRUPT_STATUS_OFFSET;
    pub const INTERRUPT_ACK: u64 = super::INTERRUPT_ACK_OFFSET;
    pub const STATUS: u64 = 0x70;
    pub const CONFIG_GENERATION: u64 = 0xfc;
    pub const CONFIG: u64 = 0x100;
}

/// Why a transport could not be built.
#[derive(Debug, thiserror::Error)]
pub enum VirtioError {
    /// A device declared a queue size the split ring cannot have.
    #[error("virtio device type {device}: queue {queue} has maximum size {size}, which is not a power of two from 1 to 32768 (a bug in the device model)")]
    QueueSize {
        /// Device type.
        device: u32,
        /// Queue index.
        queue: usize,
        /// The bad size.
        size: u16,
    },
}

struct State {
    status: DeviceStatus,
    queues: Vec<QueueSlot>,
    queue_sel: u32,
    device: Box<dyn VirtioDevice>,
    /// Who serves the queues since DRIVER_OK.
    data_path: DataPath,
    /// Per queue, the ioeventfd bound to QueueNotify (for a kernel back
    /// end); empty on the exit path.
    kicks: Vec<EventFd>,
    /// Why the last activation failed.
    activate_error: Option<String>,
}

/// One virtio device on the MMIO bus.
pub struct VirtioMmio {
    state: Mutex<State>,
    device_type: u32,
    mem: GuestMemoryMmap,
    interrupt: Arc<VirtioInterrupt>,
    notifies: AtomicU64,
    completions: AtomicU64,
    resets_requested: AtomicU64,
}

impl VirtioMmio {
    /// `device` behind the transport; `event_idx` offers
    /// VIRTIO_RING_F_EVENT_IDX (notification suppression) to the driver.
    pub fn new(
        device: Box<dyn VirtioDevice>,
        mem: GuestMemoryMmap,
        interrupt: Arc<VirtioInterrupt>,
        event_idx: bool,
    ) -> Result<Self, VirtioError> {
        let device_type = device.device_type();
        let mut offered = device.features() | 1 << VIRTIO_F_VERSION_1;
        if event_idx {
            offered |= 1 << VIRTIO_RING_F_EVENT_IDX;
        }
        let queues = device
            .queue_max_sizes()
            .iter()
            .enumerate()
            .map(|(queue, &size)| {
                QueueSlot::new(size).ok_or(VirtioError::QueueSize {
                    device: device_type,
                    queue,
                    size,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            state: Mutex::new(State {
                status: DeviceStatus::new(offered),
                queues,
                queue_sel: 0,
                device,
                data_path: DataPath::User,
                kicks: Vec::new(),
                activate_error: None,
            }),
            device_type,
            mem,
            interrupt,
            notifies: AtomicU64::new(0),
            completions: AtomicU64::new(0),
            resets_requested: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the registers
        // half-written in a way that matters more than the panic itself.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of queues.
    pub fn num_queues(&self) -> usize {
        self.lock().queues.len()
    }

    /// The status register.
    pub fn status(&self) -> u8 {
        self.lock().status.status()
    }

    /// The driver's accepted features.
    pub fn acked_features(&self) -> u64 {
        self.lock().status.acked_features()
    }

    /// The interrupt.
    pub fn interrupt(&self) -> &Arc<VirtioInterrupt> {
        &self.interrupt
    }

    /// QueueNotify writes served (through an exit or the worker).
    pub fn notifies(&self) -> u64 {
        self.notifies.load(Ordering::Relaxed)
    }

    /// Requests completed (chains put on a used ring).
    pub fn completions(&self) -> u64 {
        self.completions.load(Ordering::Relaxed)
    }

    /// Times the device set DEVICE_NEEDS_RESET.
    pub fn resets_requested(&self) -> u64 {
        self.resets_requested.load(Ordering::Relaxed)
    }

    /// The eventfds KVM signals on QueueNotify, one per queue in order
    /// (the ioeventfd path): handed to a device at DRIVER_OK.
    pub fn set_kicks(&self, kicks: Vec<EventFd>) {
        self.lock().kicks = kicks;
    }

    /// Who serves the queues (a kernel back end after DRIVER_OK, or
    /// trapline).
    pub fn data_path(&self) -> DataPath {
        self.lock().data_path
    }

    /// Why the device's last activation failed, if it did.
    pub fn activate_error(&self) -> Option<String> {
        self.lock().activate_error.clone()
    }

    /// The driver notified `queue`: process what it made available.
    /// Before DRIVER_OK (or after the device asked for a reset) the
    /// notification is dropped; a queue that is not usable makes the
    /// device ask for a reset.
    pub fn notify(&self, queue: u32) {
        self.notifies.fetch_add(1, Ordering::Relaxed);
        self.serve_with(queue, true);
    }

    /// Serve `queue` without a notification from the driver (a back end
    /// has frames for the receive queue), then every queue the device
    /// says has work. A queue the driver has not made ready is left alone
    /// (a driver need not use every queue).
    pub fn serve(&self, queue: u32) {
        self.serve_with(queue, false);
    }

    fn serve_with(&self, queue: u32, driver_asked: bool) {
        let mut guard = self.lock();
        let st = &mut *guard;
        if !st.status.is_live() || st.data_path == DataPath::Kernel {
            return;
        }
        let Ok(index) = usize::try_from(queue) else {
            return;
        };
        if index >= st.queues.len() {
            return;
        }
        // One interrupt for the whole call: an echoed frame completes a
        // transmit and a receive chain, and the guest's handler looks at
        // both queues on one.
        let mut interrupt = self.serve_locked(st, index, driver_asked);
        let pending = st.device.pending_queues();
        for other in 0..st.queues.len().min(64) {
            if other != index && pending & 1 << other != 0 && st.status.is_live() {
                interrupt |= self.serve_locked(st, other, false);
            }
        }
        if interrupt {
            self.interrupt.trigger(INT_VRING);
        }
    }

    /// One pass over queue `index`; whether the driver wants an interrupt
    /// for what it used.
    fn serve_locked(&self, st: &mut State, index: usize, driver_asked: bool) -> bool {
        let Some(slot) = st.queues.get_mut(index) else {
            return false;
        };
        if !driver_asked && !slot.queue.ready() {
            return false;
        }
        if !slot.usable(&self.mem) {
            self.needs_reset(&mut st.status);
            return false;
        }
        let event_idx = st.status.acked(VIRTIO_RING_F_EVENT_IDX);
        let q = &mut slot.queue;
        match self.drain(index, q, st.device.as_mut(), event_idx) {
            Ok(0) => false,
            Ok(n) => {
                self.completions.fetch_add(n, Ordering::Relaxed);
                q.needs_notification(&self.mem).unwrap_or(true)
            }
            Err(n) => {
                self.completions.fetch_add(n, Ordering::Relaxed);
                self.needs_reset(&mut st.status);
                n > 0
            }
        }
    }

    /// Process chains until the ring is empty (re-checking after enabling
    /// notifications under EVENT_IDX). `Ok(used)`, or `Err(used)` when the
    /// ring turned out to be broken.
    fn drain(
        &self,
        index: usize,
        q: &mut Queue,
        device: &mut dyn VirtioDevice,
        event_idx: bool,
    ) -> Result<u64, u64> {
        let mem = &self.mem;
        let mut used = 0u64;
        loop {
            if event_idx && q.disable_notification(mem).is_err() {
                return Err(used);
            }
            loop {
                let chain: Chain<'_> = match q.iter(mem) {
                    Ok(mut it) => match it.next() {
                        Some(c) => c,
                        None => break,
                    },
                    Err(_) => return Err(used),
                };
                let head = chain.head_index();
                let handled = device.handle(index, chain, mem);
                let len = match handled {
                    Handled::Used(n) => n,
                    Handled::Broken => 0,
                    Handled::Defer => {
                        // The chain goes back; the avail event is brought
                        // up to here so the driver's later buffers do not
                        // look new (the device will come back on its own).
                        q.go_to_previous_position();
                        if event_idx && q.enable_notification(mem).is_err() {
                            return Err(used);
                        }
                        return Ok(used);
                    }
                };
                if q.add_used(mem, head, len).is_err() {
                    return Err(used);
                }
                used += 1;
                if handled == Handled::Broken {
                    return Err(used);
                }
            }
            if !event_idx {
                return Ok(used);
            }
            match q.enable_notification(mem) {
                Ok(true) => continue,
                Ok(false) => return Ok(used),
                Err(_) => return Err(used),
            }
        }
    }

    /// DRIVER_OK: the rings follow EVENT_IDX as negotiated, and the device
    /// learns everything a kernel back end needs to take the queues.
    fn activate(&self, st: &mut State) {
        let event_idx = st.status.acked(VIRTIO_RING_F_EVENT_IDX);
        for s in &mut st.queues {
            s.queue.set_event_idx(event_idx);
        }
        let queues: Vec<QueueInfo> = st
            .queues
            .iter()
            .map(|s| QueueInfo {
                size: s.queue.size(),
                desc: s.queue.desc_table(),
                avail: s.queue.avail_ring(),
                used: s.queue.used_ring(),
                ready: s.queue.ready(),
                next_avail: s.queue.next_avail(),
                next_used: s.queue.next_used(),
            })
            .collect();
        let memory = memory_map(&self.mem);
        let activation = Activation {
            features: st.status.acked_features(),
            queues: &queues,
            memory: &memory,
            guest_memory: &self.mem,
            kicks: &st.kicks,
            call: self.interrupt.call_eventfd(),
        };
        match st.device.activate(&activation) {
            Ok(path) => {
                st.data_path = path;
                self.interrupt.set_vring_always(path == DataPath::Kernel);
            }
            Err(e) => {
                st.activate_error = Some(e.to_string());
                self.needs_reset(&mut st.status);
            }
        }
    }

    fn needs_reset(&self, status: &mut DeviceStatus) {
        if status.set_needs_reset() {
            self.resets_requested.fetch_add(1, Ordering::Relaxed);
            self.interrupt.trigger(INT_CONFIG);
        }
    }

    fn read_reg(&self, offset: u64) -> u32 {
        // The interrupt handler's registers never wait for the lock, which
        // the thread serving a queue holds while it does disk I/O.
        match offset {
            reg::MAGIC => return MAGIC,
            reg::VERSION => return VERSION,
            reg::DEVICE_ID => return self.device_type,
            reg::VENDOR_ID => return VENDOR_ID,
            reg::INTERRUPT_STATUS => return self.interrupt.status(),
            reg::CONFIG_GENERATION => return 0,
            _ => {}
        }
        let st = self.lock();
        let queue = st.queues.get(st.queue_sel as usize);
        match offset {
            reg::DEVICE_FEATURES => st.status.device_features(),
            reg::STATUS => st.status.status().into(),
            queue_regs::offsets::NUM_MAX
            | queue_regs::offsets::NUM
            | queue_regs::offsets::READY => queue.map_or(0, |q| q.read(offset)),
            _ => 0,
        }
    }

    fn write_reg(&self, offset: u64, value: u32) {
        match offset {
            QUEUE_NOTIFY_OFFSET => return self.notify(value),
            reg::INTERRUPT_ACK => return self.interrupt.ack(value),
            _ => {}
        }
        let mut guard = self.lock();
        let st = &mut *guard;
        match offset {
            reg::DEVICE_FEATURES_SEL => st.status.select_device_features(value),
            reg::DRIVER_FEATURES => st.status.write_driver_features(value),
            reg::DRIVER_FEATURES_SEL => st.status.select_driver_features(value),
            reg::QUEUE_SEL => st.queue_sel = value,
            reg::STATUS => match st.status.write_status(value as u8) {
                StatusChange::Reset => {
                    st.device.reset();
                    st.data_path = DataPath::User;
                    self.interrupt.set_vring_always(false);
                    st.queues.iter_mut().for_each(QueueSlot::reset);
                    st.queue_sel = 0;
                    self.interrupt.reset();
                }
                StatusChange::Activated => self.activate(st),
                StatusChange::None | StatusChange::Refused => {}
            },
            0x38 | 0x44 | 0x80 | 0x84 | 0x90 | 0x94 | 0xa0 | 0xa4
                if st.status.queue_setup_allowed() =>
            {
                let sel = st.queue_sel as usize;
                if let Some(q) = st.queues.get_mut(sel) {
                    q.write(offset, value);
                }
            }
            _ => {}
        }
    }
}

impl BusDevice for VirtioMmio {
    fn access_sizes(&self) -> AccessSizes {
        // QEMU's virtio_mem_ops declare no sizes: a 64-bit access is two
        // 32-bit register accesses, low half first.
        AccessSizes::QEMU_DEFAULT
    }

    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        if offset >= reg::CONFIG {
            let st = self.lock();
            st.device.read_config(offset - reg::CONFIG, data);
            return;
        }
        if data.len() == 4 && offset.is_multiple_of(4) {
            data.copy_from_slice(&self.read_reg(offset).to_le_bytes());
        } else {
            data.fill(0);
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        // The configuration space of the devices trapline has is read-only.
        if offset < reg::CONFIG && offset.is_multiple_of(4) {
            if let Ok(bytes) = <[u8; 4]>::try_from(data) {
                self.write_reg(offset, u32::from_le_bytes(bytes));
            }
        }
        IoOutcome::Continue
    }
}
