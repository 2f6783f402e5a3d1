//! The ucall port: structured messages from trapline's own guest payloads.
//!
//! The guest writes the guest-physical address of a [`Ucall`](trapline_abi::Ucall) to
//! [`UCALL_PORT`]; this device reads the message out of guest memory and
//! hands it, with the calling vCPU's exit counters at that instant, to the
//! host runner. Anything malformed (address outside RAM, bad magic, unknown
//! kind) is counted and dropped: a guest can't make the host misbehave
//! through it.
//!
//! [`UCALL_PORT`]: trapline_abi::UCALL_PORT

use std::sync::mpsc::Sender;
use std::sync::Arc;

use trapline_abi::{UcallKind, UCALL_ARGS, UCALL_MAGIC, UCALL_SIZE, UCALL_TEXT_LEN};
use trapline_bus::{
    AccessSizes, BusDevice, ExitCounters, ExitKind, ExitProfile, ExitSnapshot, HandlingTotals,
    IoOutcome,
};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

/// KVM's own per-vCPU exit counters a ucall can be stamped with (defined
/// in the ABI crate, which the raw-KVM floor reads too).
pub use trapline_abi::KERNEL_EXIT_COUNTERS;

/// Values of [`KERNEL_EXIT_COUNTERS`], in order (0 where the kernel has no
/// such counter).
pub type KernelExitCounts = [u64; KERNEL_EXIT_COUNTERS.len()];

/// Reads a vCPU's [`KERNEL_EXIT_COUNTERS`] (the machine implements it over
/// KVM's stats fds). Called on the vCPU's own thread, during a ucall exit.
pub trait KernelCounters: Send + Sync {
    /// The counters now, or `None` when they cannot be read.
    fn read(&self, vcpu: usize) -> Option<KernelExitCounts>;
}

/// One message as the host sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UcallEvent {
    /// The vCPU that sent it.
    pub vcpu: usize,
    /// What it says.
    pub kind: UcallKind,
    /// Its arguments.
    pub args: [u64; UCALL_ARGS],
    /// Its text, up to the first NUL, lossily decoded.
    pub text: String,
    /// The sending vCPU's exit counters when the message arrived (the
    /// ucall's own exit included).
    pub exits: ExitSnapshot,
    /// With `--stat`'s profile on: the sending vCPU's exits and handling
    /// cycles so far, ucalls left out (see [`UcallPort::with_profiles`]).
    pub handling: Option<HandlingTotals>,
    /// KVM's own exit counters of the sending vCPU, when a
    /// [`KernelCounters`] reader was given (the ucall's own exit included).
    pub kernel: Option<KernelExitCounts>,
}

/// Decode a raw message; `None` when it is not one.
pub fn decode(raw: &[u8; UCALL_SIZE]) -> Option<(UcallKind, [u64; UCALL_ARGS], String)> {
    let word = |i: usize| u32::from_le_bytes([raw[i], raw[i + 1], raw[i + 2], raw[i + 3]]);
    if word(0) != UCALL_MAGIC {
        return None;
    }
    let kind = UcallKind::from_raw(word(4))?;
    let mut args = [0u64; UCALL_ARGS];
    for (i, a) in args.iter_mut().enumerate() {
        let o = 8 + i * 8;
        *a = u64::from_le_bytes(raw[o..o + 8].try_into().ok()?);
    }
    let text_raw = &raw[8 + UCALL_ARGS * 8..8 + UCALL_ARGS * 8 + UCALL_TEXT_LEN];
    let end = text_raw
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(text_raw.len());
    Some((
        kind,
        args,
        String::from_utf8_lossy(&text_raw[..end]).into_owned(),
    ))
}

/// The ucall port device.
pub struct UcallPort {
    memory: GuestMemoryMmap,
    counters: Arc<[Arc<ExitCounters>]>,
    sink: Option<Sender<UcallEvent>>,
    profiles: Vec<Arc<ExitProfile>>,
    kernel: Option<Arc<dyn KernelCounters>>,
    /// The profile key of the exits that carry ucalls (left out of the
    /// handling totals): the PIO port on x86, the MMIO word on `virt`.
    key: (ExitKind, u64),
}

impl UcallPort {
    /// A port reading messages from `memory`, stamping them with the
    /// sending vCPU's `counters`, and sending them to `sink` (dropped when
    /// there is none, or when the receiver is gone).
    pub fn new(
        memory: GuestMemoryMmap,
        counters: Arc<[Arc<ExitCounters>]>,
        sink: Option<Sender<UcallEvent>>,
    ) -> Self {
        Self {
            memory,
            counters,
            sink,
            profiles: Vec::new(),
            kernel: None,
            key: (ExitKind::PioWrite, u64::from(trapline_abi::UCALL_PORT)),
        }
    }

    /// The exits that carry ucalls are `kind` at `addr` (default: a PIO
    /// write to `UCALL_PORT`; the arm64 `virt` machine's is an MMIO write
    /// to `VIRT_UCALL_MMIO`).
    pub fn with_key(mut self, kind: ExitKind, addr: u64) -> Self {
        self.key = (kind, addr);
        self
    }

    /// Stamp each message with KVM's own exit counters of the sending vCPU.
    pub fn with_kernel_counters(mut self, reader: Arc<dyn KernelCounters>) -> Self {
        self.kernel = Some(reader);
        self
    }

    /// Stamp each message with the sending vCPU's handling totals from
    /// its exit profile, less the ucall port's own exits, so the lab can
    /// take trapline's handling time over the window between two ucalls.
    pub fn with_profiles(mut self, profiles: Vec<Arc<ExitProfile>>) -> Self {
        self.profiles = profiles;
        self
    }
}

impl BusDevice for UcallPort {
    fn access_sizes(&self) -> AccessSizes {
        // trapline's own port: the guest's 32-bit OUT arrives whole.
        AccessSizes::ANY
    }

    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        data.fill(0xff);
    }

    fn write(&self, vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let counters = self.counters.get(vcpu);
        let bad = || {
            // The device runs on the sending vCPU's thread, the counters'
            // only writer, so bumping here keeps the single-writer rule.
            if let Some(c) = counters {
                c.bump(ExitKind::BadUcall);
            }
            IoOutcome::Continue
        };
        if offset != 0 || data.len() != 4 {
            return bad();
        }
        let gpa = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as u64;
        let mut raw = [0u8; UCALL_SIZE];
        if !gpa.is_multiple_of(8) || self.memory.read_slice(&mut raw, GuestAddress(gpa)).is_err() {
            return bad();
        }
        let Some((kind, args, text)) = decode(&raw) else {
            return bad();
        };
        if kind == UcallKind::Clock {
            // Served here, during the exit: the stamp must fall between the
            // guest's TSC readings before and after its OUT.
            let now = trapline_bus::cycles();
            if !args[0].is_multiple_of(8)
                || self.memory.write_obj(now, GuestAddress(args[0])).is_err()
            {
                return bad();
            }
        }
        if let Some(sink) = &self.sink {
            let exits = counters.map(|c| c.snapshot()).unwrap_or_default();
            let handling = self
                .profiles
                .get(vcpu)
                .map(|p| p.totals_excluding(self.key.0, self.key.1));
            let kernel = self.kernel.as_ref().and_then(|k| k.read(vcpu));
            // A receiver that went away just means nobody listens any more.
            let _ = sink.send(UcallEvent {
                vcpu,
                kind,
                args,
                text,
                exits,
                handling,
                kernel,
            });
        }
        IoOutcome::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    fn message(kind: u32, args: [u64; UCALL_ARGS], text: &str) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&UCALL_MAGIC.to_le_bytes());
        v.extend_from_slice(&kind.to_le_bytes());
        for a in args {
            v.extend_from_slice(&a.to_le_bytes());
        }
        let mut t = [0u8; UCALL_TEXT_LEN];
        t[..text.len()].copy_from_slice(text.as_bytes());
        v.extend_from_slice(&t);
        v
    }

    fn setup() -> (
        UcallPort,
        GuestMemoryMmap,
        std::sync::mpsc::Receiver<UcallEvent>,
        Arc<ExitCounters>,
    ) {
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), 0x10000)]).unwrap();
        let c = Arc::new(ExitCounters::default());
        let (tx, rx) = channel();
        (
            UcallPort::new(mem.clone(), Arc::from(vec![c.clone()]), Some(tx)),
            mem,
            rx,
            c,
        )
    }

    #[test]
    fn a_well_formed_message_reaches_the_sink() {
        let (port, mem, rx, c) = setup();
        mem.write_slice(
            &message(3, [4, 1000, 5000, 7, 0, 0], "pio-user-out"),
            GuestAddress(0x2000),
        )
        .unwrap();
        c.bump(ExitKind::PioWrite);
        assert_eq!(
            port.write(0, 0x700, 0, &0x2000u32.to_le_bytes()),
            IoOutcome::Continue
        );
        let ev = rx.try_recv().unwrap();
        assert_eq!(ev.kind, UcallKind::Result);
        assert_eq!(ev.args[..4], [4, 1000, 5000, 7]);
        assert_eq!(ev.text, "pio-user-out");
        assert_eq!(ev.exits.get(ExitKind::PioWrite), 1);
    }

    #[test]
    fn malformed_messages_are_counted_and_dropped() {
        let (port, mem, rx, c) = setup();
        mem.write_slice(&message(99, [0; 6], ""), GuestAddress(0x1000))
            .unwrap();
        let mut bad_magic = message(1, [0; 6], "");
        bad_magic[0] ^= 1;
        mem.write_slice(&bad_magic, GuestAddress(0x3000)).unwrap();
        for (off, data) in [
            (0u64, 0x1000u32.to_le_bytes().to_vec()),   // unknown kind
            (0, 0x3000u32.to_le_bytes().to_vec()),      // bad magic
            (0, 0x1004u32.to_le_bytes().to_vec()),      // misaligned
            (0, 0xffff_fff8u32.to_le_bytes().to_vec()), // outside RAM
            (0, 0xfff8u32.to_le_bytes().to_vec()),      // straddles the end of RAM
            (0, vec![0, 0x10]),                         // wrong width
            (2, 0x1000u32.to_le_bytes().to_vec()),      // wrong offset
        ] {
            assert_eq!(port.write(0, 0x700, off, &data), IoOutcome::Continue);
        }
        assert!(rx.try_recv().is_err());
        assert_eq!(c.snapshot().get(ExitKind::BadUcall), 7);
        // An out-of-range vCPU index is not a panic either.
        assert_eq!(port.write(9, 0x700, 0, &[1]), IoOutcome::Continue);
    }
}
