//! BAR assignment at machine build time (trapline has no firmware to do it).
//!
//! kvm-unit-tests never assigns BARs and never touches COMMAND (spec §3.6):
//! it takes the addresses "firmware" left and expects decoding to be on.
//! So the machine places every BAR and enables decoding itself: memory BARs
//! naturally aligned inside the MMIO window, I/O BARs naturally aligned
//! upwards from the I/O window base (0xC000, like SeaBIOS).

use super::bus::{PciBus, Window};
use super::config::{BarKind, BAR0, COMMAND, COMMAND_IO, COMMAND_MEMORY};
use super::PciError;

/// Where in the MMIO window memory BARs go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AllocOrder {
    /// Downwards from the window's end, like SeaBIOS. With the window
    /// ending at 0xFEC0_0000 this puts pci-testdev's BAR0 at 0xFEBF_F000,
    /// the address QEMU+SeaBIOS gives it, so vmexit's
    /// `pci-testdev at 0x10 membar febff000 iobar c000` line matches QEMU's.
    #[default]
    TopDown,
    /// Upwards from the window's base.
    BottomUp,
}

/// One BAR the allocator placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarAssignment {
    /// Function.
    pub devfn: u8,
    /// BAR index.
    pub bar: usize,
    /// Kind of BAR.
    pub kind: BarKind,
    /// Assigned address.
    pub addr: u64,
    /// Size.
    pub size: u64,
}

fn align_up(v: u64, align: u64) -> Option<u64> {
    v.checked_add(align - 1).map(|x| x & !(align - 1))
}

/// Place every BAR of every function on `bus`, program the BARs and turn
/// on the matching COMMAND decode bits, through ordinary configuration
/// writes (so devices see `bars_changed` exactly as for a guest write).
/// Larger memory BARs are placed first so natural alignment wastes nothing.
pub fn assign_bars(
    bus: &PciBus,
    mmio: Window,
    io: Window,
    order: AllocOrder,
) -> Result<Vec<BarAssignment>, PciError> {
    let (mut mem, mut pio) = bars_of(bus);
    // Stable sort: equal sizes keep (devfn, bar) order.
    mem.sort_by_key(|a| std::cmp::Reverse(a.size));
    place_memory(&mut mem, mmio, order)?;
    place_io(&mut pio, io)?;

    let mut all = mem;
    all.append(&mut pio);
    all.sort_by_key(|a| (a.devfn, a.bar));
    program(bus, &all);
    // A window reaching 4 GiB could hand a 32-bit BAR an address it cannot
    // decode at; refuse rather than build a machine whose BAR is dead.
    if let Some(a) = all
        .iter()
        .find(|a| bus.bar_routed(a.devfn, a.bar) != Some(a.addr))
    {
        return Err(no_room(a, if a.kind.is_memory() { mmio } else { io }));
    }
    Ok(all)
}

/// Every BAR on `bus`, not yet placed: (memory BARs, I/O BARs), each in
/// (devfn, bar) order.
fn bars_of(bus: &PciBus) -> (Vec<BarAssignment>, Vec<BarAssignment>) {
    let mut mem = Vec::new();
    let mut pio = Vec::new();
    for devfn in bus.devfns() {
        let Some(cfg) = bus.config_snapshot(devfn) else {
            continue;
        };
        for bar in 0..cfg.bars().len() {
            let Some(def) = cfg.bar(bar) else { continue };
            let a = BarAssignment {
                devfn,
                bar,
                kind: def.kind,
                addr: 0,
                size: def.size,
            };
            if def.kind.is_memory() {
                mem.push(a);
            } else {
                pio.push(a);
            }
        }
    }
    (mem, pio)
}

fn no_room(a: &BarAssignment, window: Window) -> PciError {
    PciError::NoRoom {
        devfn: a.devfn,
        bar: a.bar,
        size: a.size,
        window,
    }
}

/// Memory BARs, naturally aligned, one after another from the window's
/// top down or its bottom up.
fn place_memory(
    mem: &mut [BarAssignment],
    mmio: Window,
    order: AllocOrder,
) -> Result<(), PciError> {
    let mut top = mmio.end();
    let mut bottom = mmio.base;
    for a in mem.iter_mut() {
        let addr = match order {
            AllocOrder::TopDown => top.checked_sub(a.size).map(|x| x & !(a.size - 1)),
            AllocOrder::BottomUp => align_up(bottom, a.size),
        };
        let addr = addr
            .filter(|&x| mmio.contains(x, a.size))
            .ok_or_else(|| no_room(a, mmio))?;
        a.addr = addr;
        top = addr;
        bottom = addr + a.size;
    }
    Ok(())
}

/// I/O BARs, naturally aligned, from the window's bottom up.
fn place_io(pio: &mut [BarAssignment], io: Window) -> Result<(), PciError> {
    let mut next = io.base;
    for a in pio.iter_mut() {
        let addr = align_up(next, a.size)
            .filter(|&x| io.contains(x, a.size))
            .ok_or_else(|| no_room(a, io))?;
        a.addr = addr;
        next = addr + a.size;
    }
    Ok(())
}

/// Each BAR's address, then each function's COMMAND decode bits for the
/// kinds of BAR it has, through configuration writes.
fn program(bus: &PciBus, all: &[BarAssignment]) {
    for a in all {
        let reg = (BAR0 + 4 * a.bar) as u64;
        match a.kind {
            BarKind::Mem64 { .. } => bus.config_write(a.devfn, reg, &a.addr.to_le_bytes()),
            _ => bus.config_write(a.devfn, reg, &(a.addr as u32).to_le_bytes()),
        }
    }
    for devfn in bus.devfns() {
        let mut cmd = 0u16;
        for a in all.iter().filter(|a| a.devfn == devfn) {
            cmd |= if a.kind.is_memory() {
                COMMAND_MEMORY
            } else {
                COMMAND_IO
            };
        }
        if cmd != 0 {
            let mut cur = [0u8; 2];
            bus.config_read(devfn, COMMAND as u64, &mut cur);
            bus.config_write(
                devfn,
                COMMAND as u64,
                &(u16::from_le_bytes(cur) | cmd).to_le_bytes(),
            );
        }
    }
}
