//! One return of KVM_RUN, decoded once into an [`Exit`]: the run loop keys
//! the `--stat` profile by [`Exit::key`] and [`crate::dispatch()`] acts on
//! the same value, so what an exit was is read from KVM's answer in one
//! place. The exits only one architecture has are decoded by it
//! ([`crate::arch::decode_exit`] into an [`ArchExit`]).
//!
//! Decoding is on the hot path: a match, no lock, no allocation.

use kvm_ioctls::VcpuExit;
use trapline_bus::ExitKind;

use crate::arch::{self, ArchExit};

/// What one KVM_RUN returned.
#[derive(Debug)]
pub enum Exit<'a> {
    /// KVM_EXIT_IO, OUT: `size` is one element's width (a string OUT,
    /// `rep outs`, carries several).
    PioOut {
        /// The port.
        port: u16,
        /// Every element's bytes.
        data: &'a [u8],
        /// One element's width (`kvm_run.io.size`).
        size: usize,
    },
    /// KVM_EXIT_IO, IN (a string IN fills several elements).
    PioIn {
        /// The port.
        port: u16,
        /// Where every element's bytes go.
        data: &'a mut [u8],
        /// One element's width.
        size: usize,
    },
    /// KVM_EXIT_MMIO, read.
    MmioRead {
        /// The guest-physical address.
        addr: u64,
        /// Where the bytes go.
        data: &'a mut [u8],
    },
    /// KVM_EXIT_MMIO, write.
    MmioWrite {
        /// The guest-physical address.
        addr: u64,
        /// The bytes.
        data: &'a [u8],
    },
    /// KVM_EXIT_HLT (only without an in-kernel irqchip).
    Hlt,
    /// KVM_EXIT_INTR.
    Intr,
    /// KVM_RUN failed with EINTR: a kick, or a stray signal.
    Kicked,
    /// KVM_RUN failed with EAGAIN: enter again.
    Again,
    /// KVM_EXIT_SHUTDOWN: the guest triple-faulted.
    Shutdown,
    /// KVM_EXIT_INTERNAL_ERROR.
    InternalError,
    /// KVM_EXIT_FAIL_ENTRY.
    FailEntry {
        /// Hardware entry failure reason.
        reason: u64,
    },
    /// KVM_EXIT_SYSTEM_EVENT.
    SystemEvent {
        /// The event type.
        kind: u32,
    },
    /// An exit only this architecture has, for its hook
    /// ([`crate::arch::handle_exit`]).
    Arch(ArchExit),
    /// An exit trapline does not handle.
    Unhandled(VcpuExit<'a>),
    /// KVM_RUN failed otherwise.
    RunError {
        /// The errno.
        errno: i32,
    },
}

impl<'a> Exit<'a> {
    /// Decode what `VcpuFd::run` returned; `io_size` is the width of one
    /// element of a PIO access (`kvm_run.io.size`, the one thing
    /// `VcpuExit` leaves out), ignored for every other exit.
    #[inline(always)]
    pub fn decode(exit: Result<VcpuExit<'a>, kvm_ioctls::Error>, io_size: usize) -> Self {
        match exit {
            Ok(VcpuExit::IoOut(port, data)) => Exit::PioOut {
                port,
                data,
                size: io_size,
            },
            Ok(VcpuExit::IoIn(port, data)) => Exit::PioIn {
                port,
                data,
                size: io_size,
            },
            Ok(VcpuExit::MmioRead(addr, data)) => Exit::MmioRead { addr, data },
            Ok(VcpuExit::MmioWrite(addr, data)) => Exit::MmioWrite { addr, data },
            Ok(VcpuExit::Hlt) => Exit::Hlt,
            Ok(VcpuExit::Intr) => Exit::Intr,
            Ok(VcpuExit::Shutdown) => Exit::Shutdown,
            Ok(VcpuExit::InternalError) => Exit::InternalError,
            Ok(VcpuExit::FailEntry(reason, _cpu)) => Exit::FailEntry { reason },
            Ok(VcpuExit::SystemEvent(kind, _)) => Exit::SystemEvent { kind },
            Err(e) if e.errno() == libc::EINTR => Exit::Kicked,
            Err(e) if e.errno() == libc::EAGAIN => Exit::Again,
            other => arch::decode_exit(other),
        }
    }

    /// What the shared code makes of an exit the architecture does not
    /// know either.
    #[inline]
    pub fn unknown(exit: Result<VcpuExit<'a>, kvm_ioctls::Error>) -> Self {
        match exit {
            Ok(other) => Exit::Unhandled(other),
            Err(e) => Exit::RunError { errno: e.errno() },
        }
    }

    /// The `--stat` profile's key for this exit: the exit itself, so an
    /// OUT to the fast port is keyed as the `PioWrite` it is (the counters
    /// count it as [`ExitKind::FastPort`]).
    #[inline(always)]
    pub fn key(&self) -> (ExitKind, u64) {
        match self {
            Exit::PioOut { port, .. } => (ExitKind::PioWrite, u64::from(*port)),
            Exit::PioIn { port, .. } => (ExitKind::PioRead, u64::from(*port)),
            Exit::MmioRead { addr, .. } => (ExitKind::MmioRead, *addr),
            Exit::MmioWrite { addr, .. } => (ExitKind::MmioWrite, *addr),
            Exit::Hlt => (ExitKind::Hlt, 0),
            Exit::Intr | Exit::Kicked | Exit::Again => (ExitKind::Interrupted, 0),
            Exit::Shutdown => (ExitKind::Shutdown, 0),
            Exit::Arch(a) => (a.kind(), 0),
            Exit::Unhandled(VcpuExit::Hypercall(_)) => (ExitKind::Hypercall, 0),
            Exit::InternalError
            | Exit::FailEntry { .. }
            | Exit::SystemEvent { .. }
            | Exit::Unhandled(_)
            | Exit::RunError { .. } => (ExitKind::Other, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errno(e: i32) -> Result<VcpuExit<'static>, kvm_ioctls::Error> {
        Err(kvm_ioctls::Error::new(e))
    }

    #[test]
    fn keys_are_the_exit_itself() {
        let key = |e, size| Exit::decode(e, size).key();
        assert_eq!(
            key(Ok(VcpuExit::IoOut(0xf4, &[1])), 1),
            (ExitKind::PioWrite, 0xf4)
        );
        let mut b = [0u8; 4];
        assert_eq!(
            key(Ok(VcpuExit::IoIn(0x3f8, &mut b)), 1),
            (ExitKind::PioRead, 0x3f8)
        );
        assert_eq!(
            key(Ok(VcpuExit::MmioWrite(0x1000, &[1])), 1),
            (ExitKind::MmioWrite, 0x1000)
        );
        assert_eq!(key(Ok(VcpuExit::Hlt), 1), (ExitKind::Hlt, 0));
        for e in [Ok(VcpuExit::Intr), errno(libc::EINTR), errno(libc::EAGAIN)] {
            assert_eq!(key(e, 1), (ExitKind::Interrupted, 0));
        }
        assert_eq!(key(Ok(VcpuExit::Shutdown), 1), (ExitKind::Shutdown, 0));
        for e in [
            Ok(VcpuExit::InternalError),
            Ok(VcpuExit::IrqWindowOpen),
            errno(libc::EFAULT),
        ] {
            assert_eq!(key(e, 1), (ExitKind::Other, 0));
        }
    }

    #[test]
    fn the_element_width_travels_with_a_pio_exit_only() {
        match Exit::decode(Ok(VcpuExit::IoOut(0x80, &[1, 2, 3, 4])), 2) {
            Exit::PioOut { port, data, size } => {
                assert_eq!((port, data, size), (0x80, &[1u8, 2, 3, 4][..], 2))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            Exit::decode(Ok(VcpuExit::FailEntry(7, 0)), 4),
            Exit::FailEntry { reason: 7 }
        ));
    }
}
