//! PCI bus 0: 32 devices x 8 functions, configuration access and BAR routing.
//!
//! The function table is fixed when the bus is built. Configuration
//! accesses take the addressed function's mutex (they are rare). BAR
//! routing is the hot path of the pci-testdev benchmarks and takes no lock:
//! each BAR's routed base lives in an atomic in a small per-space route
//! table, rewritten (under the function's configuration lock) after every
//! configuration write that moves a BAR or flips its decode bit, and read
//! with one load per candidate BAR by the windows.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use trapline_bus::{fill_all_ones, IoOutcome};

use super::config::{ConfigSpace, BAR_COUNT, CONFIG_SPACE_SIZE};
use super::device::{BarMap, PciDevice};
use super::registry::Space;
use super::shadow_sink::ShadowSink;
use super::{lock, PciError};

/// Number of device/function numbers on a bus.
pub const DEVFNS: usize = 256;
/// Bytes of ECAM space per function.
pub const ECAM_FUNCTION_SIZE: usize = 4096;
/// Bytes of ECAM space per bus.
pub const ECAM_BUS_SIZE: usize = DEVFNS * ECAM_FUNCTION_SIZE;

/// Marks an unrouted BAR in a route's atomic base. No routed BAR can start
/// there: a routed BAR lies inside a window, which ends at or below it.
const UNROUTED: u64 = u64::MAX;
/// Marks "no function" in the devfn index.
const NO_FUNCTION: u16 = u16::MAX;

/// `devfn` from a device (0..32) and function (0..8) number.
pub const fn devfn(device: u8, function: u8) -> u8 {
    ((device & 0x1f) << 3) | (function & 7)
}

/// A guest address range the machine hands to the bus for one space (its
/// PCI MMIO hole, its PCI I/O port range). Only BARs wholly inside it are
/// routed; a BAR the guest moves elsewhere stops decoding (and its
/// ioeventfds are withdrawn), so it can never shadow RAM, the ECAM window
/// or another device's ioeventfd outside the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First address.
    pub base: u64,
    /// Length in bytes.
    pub size: u64,
}

impl Window {
    /// A window `[base, base + size)`.
    pub const fn new(base: u64, size: u64) -> Self {
        Self { base, size }
    }

    /// One past the last address (saturating).
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }

    /// Whether `[base, base + size)` lies inside the window.
    pub fn contains(&self, base: u64, size: u64) -> bool {
        base >= self.base && base.checked_add(size).is_some_and(|end| end <= self.end())
    }
}

/// One BAR's routing entry: read lock-free on every BAR access.
struct Route {
    base: AtomicU64,
    size: u64,
    func: u16,
    bar: u8,
}

struct Function {
    devfn: u8,
    device: Arc<dyn PciDevice>,
    config: Mutex<ConfigSpace>,
    /// Per BAR: which route table and index hold its routing entry.
    routes: [Option<(Space, usize)>; BAR_COUNT],
}

/// Collects the functions of bus 0, then freezes them into a [`PciBus`].
pub struct PciBusBuilder {
    functions: Vec<(u8, Arc<dyn PciDevice>)>,
    mmio_window: Window,
    io_window: Window,
}

impl PciBusBuilder {
    /// An empty bus routing memory BARs inside `mmio_window` and I/O BARs
    /// inside `io_window`.
    pub fn new(mmio_window: Window, io_window: Window) -> Self {
        Self {
            functions: Vec::new(),
            mmio_window,
            io_window,
        }
    }

    /// Put `device` at `devfn`.
    pub fn add(&mut self, devfn: u8, device: Arc<dyn PciDevice>) -> Result<(), PciError> {
        if let Some((_, old)) = self.functions.iter().find(|(d, _)| *d == devfn) {
            return Err(PciError::DevfnTaken {
                devfn,
                name: device.name(),
                old: old.name(),
            });
        }
        self.functions.push((devfn, device));
        Ok(())
    }

    /// Freeze the function table. Functions whose templates already decode
    /// get their [`PciDevice::bars_changed`] call here.
    pub fn build(mut self) -> Arc<PciBus> {
        // Sorting by devfn makes the route tables devfn-ordered, which is
        // what makes "lowest devfn wins" hold for overlapping BARs.
        self.functions.sort_by_key(|(d, _)| *d);
        let mut index = [NO_FUNCTION; DEVFNS];
        let mut functions = Vec::with_capacity(self.functions.len());
        let mut mmio_routes = Vec::new();
        let mut io_routes = Vec::new();
        for (pos, (devfn, device)) in self.functions.into_iter().enumerate() {
            index[usize::from(devfn)] = pos as u16;
            let config = device.config_template();
            let mut routes = [None; BAR_COUNT];
            for (bar, slot) in routes.iter_mut().enumerate() {
                let Some(def) = config.bar(bar) else { continue };
                let (space, table) = if def.kind.is_memory() {
                    (Space::Mmio, &mut mmio_routes)
                } else {
                    (Space::Pio, &mut io_routes)
                };
                *slot = Some((space, table.len()));
                table.push(Route {
                    base: AtomicU64::new(UNROUTED),
                    size: def.size,
                    func: pos as u16,
                    bar: bar as u8,
                });
            }
            functions.push(Function {
                devfn,
                device,
                config: Mutex::new(config),
                routes,
            });
        }
        let bus = Arc::new(PciBus {
            functions: functions.into_boxed_slice(),
            index,
            mmio_routes: mmio_routes.into_boxed_slice(),
            io_routes: io_routes.into_boxed_slice(),
            mmio_window: self.mmio_window,
            io_window: self.io_window,
            generation: AtomicU64::new(0),
            sink: OnceLock::new(),
        });
        for f in bus.functions.iter() {
            let cfg = lock(&f.config);
            bus.update_routes(f, &cfg);
        }
        bus
    }
}

/// PCI bus 0 with a fixed set of functions.
pub struct PciBus {
    functions: Box<[Function]>,
    index: [u16; DEVFNS],
    mmio_routes: Box<[Route]>,
    io_routes: Box<[Route]>,
    mmio_window: Window,
    io_window: Window,
    generation: AtomicU64,
    sink: OnceLock<Arc<dyn ShadowSink>>,
}

impl std::fmt::Debug for PciBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut l = f.debug_list();
        for func in self.functions.iter() {
            l.entry(&format_args!(
                "00:{:02x}.{} {}",
                func.devfn >> 3,
                func.devfn & 7,
                func.device.name()
            ));
        }
        l.finish()
    }
}

impl PciBus {
    fn function(&self, devfn: u8) -> Option<&Function> {
        let pos = self.index[usize::from(devfn)];
        self.functions.get(usize::from(pos))
    }

    fn routes(&self, space: Space) -> &[Route] {
        match space {
            Space::Mmio => &self.mmio_routes,
            Space::Pio => &self.io_routes,
        }
    }

    fn window(&self, space: Space) -> Window {
        match space {
            Space::Mmio => self.mmio_window,
            Space::Pio => self.io_window,
        }
    }

    /// The devfns that hold a function, ascending.
    pub fn devfns(&self) -> impl Iterator<Item = u8> + '_ {
        self.functions.iter().map(|f| f.devfn)
    }

    /// The model at `devfn`.
    pub fn device(&self, devfn: u8) -> Option<&Arc<dyn PciDevice>> {
        self.function(devfn).map(|f| &f.device)
    }

    /// A copy of the configuration space at `devfn`.
    pub fn config_snapshot(&self, devfn: u8) -> Option<ConfigSpace> {
        self.function(devfn).map(|f| lock(&f.config).clone())
    }

    /// Where BAR `bar` of `devfn` is routed now (`None`: not decoding,
    /// outside its window, or no such BAR).
    pub fn bar_routed(&self, devfn: u8, bar: usize) -> Option<u64> {
        let f = self.function(devfn)?;
        let (space, idx) = (*f.routes.get(bar)?)?;
        let base = self.routes(space)[idx].base.load(Ordering::Acquire);
        (base != UNROUTED).then_some(base)
    }

    /// Incremented after every configuration write that changed a byte;
    /// lets a machine that polls the ECAM shadow know when to re-render.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A configuration read of bus 0: `data.len()` bytes at register `reg`
    /// of `devfn`. Absent functions and bytes past 0xff read all-ones.
    pub fn config_read(&self, devfn: u8, reg: u64, data: &mut [u8]) {
        match self.function(devfn) {
            Some(f) => lock(&f.config).read(reg, data),
            None => fill_all_ones(data),
        }
    }

    /// A configuration write of bus 0. Writes to absent functions, to
    /// read-only bits and past 0xff are dropped.
    pub fn config_write(&self, devfn: u8, reg: u64, data: &[u8]) {
        let Some(f) = self.function(devfn) else {
            return;
        };
        let mut cfg = lock(&f.config);
        if !cfg.write(reg, data) {
            return;
        }
        self.update_routes(f, &cfg);
        self.generation.fetch_add(1, Ordering::AcqRel);
        // Under the lock, so concurrent writers reach the shadow in the
        // order they changed the configuration: the last one wins with the
        // latest bytes.
        if let Some(sink) = self.sink.get() {
            sink.write(usize::from(f.devfn) * ECAM_FUNCTION_SIZE, cfg.bytes());
        }
    }

    /// Recompute `f`'s routed BARs from `cfg` (its locked configuration)
    /// and tell the device if any moved.
    fn update_routes(&self, f: &Function, cfg: &ConfigSpace) {
        let mut map: BarMap = [None; BAR_COUNT];
        let mut moved = false;
        for (bar, route) in f.routes.iter().enumerate() {
            let Some((space, idx)) = *route else { continue };
            let r = &self.routes(space)[idx];
            map[bar] = cfg
                .bar_mapping(bar)
                .filter(|&base| self.window(space).contains(base, r.size));
            let new = map[bar].unwrap_or(UNROUTED);
            moved |= r.base.swap(new, Ordering::AcqRel) != new;
        }
        if moved {
            f.device.bars_changed(&map);
        }
    }

    /// The routed BAR covering `addr` in `space`: lowest devfn first, then
    /// lowest BAR index. Lock-free, no allocation.
    #[inline]
    fn route(&self, space: Space, addr: u64) -> Option<(&Function, usize, u64)> {
        self.routes(space).iter().find_map(|r| {
            let base = r.base.load(Ordering::Acquire);
            let off = addr.wrapping_sub(base);
            (base != UNROUTED && off < r.size).then(|| {
                (
                    &self.functions[usize::from(r.func)],
                    usize::from(r.bar),
                    off,
                )
            })
        })
    }

    /// A guest read at absolute address `addr` of `space`, routed to the
    /// BAR that covers it; all-ones if none does.
    #[inline]
    pub fn bar_read(&self, space: Space, vcpu: usize, addr: u64, data: &mut [u8]) {
        match self.route(space, addr) {
            Some((f, bar, off)) => f.device.bar_read(vcpu, bar, off, data),
            None => fill_all_ones(data),
        }
    }

    /// A guest write at absolute address `addr` of `space`; dropped if no
    /// BAR covers it.
    #[inline]
    pub fn bar_write(&self, space: Space, vcpu: usize, addr: u64, data: &[u8]) -> IoOutcome {
        match self.route(space, addr) {
            Some((f, bar, off)) => f.device.bar_write(vcpu, bar, off, data),
            None => IoOutcome::Continue,
        }
    }

    /// Render bus 0's ECAM image into `out` (offset = devfn << 12 | reg):
    /// exactly what an aligned ECAM read returns at every offset, i.e. each
    /// function's 256 bytes followed by all-ones, absent functions and
    /// anything past bus 0 all-ones. `out` may be any length.
    pub fn render_shadow(&self, out: &mut [u8]) {
        out.fill(0xff);
        for f in self.functions.iter() {
            let start = usize::from(f.devfn) * ECAM_FUNCTION_SIZE;
            let Some(dst) = out.get_mut(start..) else {
                continue;
            };
            let n = dst.len().min(CONFIG_SPACE_SIZE);
            dst[..n].copy_from_slice(&lock(&f.config).bytes()[..n]);
        }
    }

    /// Keep `sink` (the host side of a read-only memslot) equal to
    /// [`Self::render_shadow`] from now on: it is filled now, and every
    /// changing configuration write rewrites that function's 256 bytes
    /// before the write returns (so before the writing vCPU resumes). Only
    /// one sink can be attached.
    pub fn attach_shadow_sink(&self, sink: Arc<dyn ShadowSink>) -> Result<(), PciError> {
        self.sink
            .set(sink.clone())
            .map_err(|_| PciError::ShadowAttached)?;
        // Fill after publishing the sink: a write racing with this sees the
        // sink and rewrites its function itself; both happen under that
        // function's lock, so neither can leave stale bytes behind.
        sink.write(0, &[0xff; ECAM_FUNCTION_SIZE].repeat(DEVFNS));
        for f in self.functions.iter() {
            let cfg = lock(&f.config);
            sink.write(usize::from(f.devfn) * ECAM_FUNCTION_SIZE, cfg.bytes());
        }
        Ok(())
    }
}
