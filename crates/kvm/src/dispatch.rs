//! What one exit does: an [`Exit`] turned into bus accesses, counter
//! bumps and the loop's next step.
//!
//! [`dispatch`] needs no KVM file descriptor: it takes the exit as
//! [`Exit::decode`] made it and the vCPU's buses and counters, so tests
//! feed it synthetic exits. The exits only one architecture has go to that
//! architecture's hook ([`crate::arch::handle_exit`]). What can only be
//! read from or done to the vCPU (registers after a crash, the `internal`
//! block of `kvm_run`, an arm64 SMCCC answer) it leaves to the loop, by
//! returning [`ExitOutcome::Crashed`] or [`ExitOutcome::Arch`].
//!
//! It is on the hot path: no lock, no allocation, no logging, except on
//! the way out of the loop (an unhandled exit is described in a `String`).

use trapline_bus::{Access, ExitKind, IoOutcome};

use crate::arch::{self, VcpuAction};
use crate::exit::Exit;
use crate::vcpu::{VcpuContext, VcpuEnd};

/// What the run loop does after [`dispatch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExitOutcome {
    /// Enter the guest again (after looking at the stop flag).
    Resume,
    /// KVM_RUN returned EINTR (a kick or a stray signal): clear
    /// `immediate_exit` so the next KVM_RUN enters the guest, then look at
    /// the stop flag.
    Kicked,
    /// The vCPU's loop ends with this.
    End(VcpuEnd),
    /// The architecture's exit needs the vCPU itself: the loop hands this
    /// to [`crate::arch::finish_exit`], which resumes or ends.
    Arch(VcpuAction),
    /// KVM cannot run the guest on; the loop reads what the end needs from
    /// the vCPU and ends.
    Crashed(Crash),
}

/// An exit after which the guest cannot run on, whose [`VcpuEnd`] needs the
/// vCPU's file descriptor or its `kvm_run` to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crash {
    /// KVM_EXIT_SHUTDOWN: the guest triple-faulted; the loop reads RIP.
    TripleFault,
    /// KVM_EXIT_INTERNAL_ERROR: the loop copies the suberror and its data
    /// out of `kvm_run` and dumps the vCPU.
    InternalError,
    /// KVM_EXIT_FAIL_ENTRY: the loop dumps the vCPU.
    FailEntry {
        /// Hardware entry failure reason.
        reason: u64,
    },
}

/// Handle one exit: call the device it is for, count it, and say what the
/// loop does next.
///
/// A string PIO access (`rep outs`/`ins`) is split into one device access
/// per element, as the hardware issues them. Unmapped reads return
/// all-ones; unmapped writes are dropped; both are counted.
#[inline(always)]
pub fn dispatch(ctx: &VcpuContext, exit: Exit<'_>) -> ExitOutcome {
    let counters = &*ctx.counters;
    let outcome = match exit {
        Exit::PioOut { port, data, size } => {
            if Some(port) == ctx.fast_port {
                counters.bump(ExitKind::FastPort);
                return ExitOutcome::Resume;
            }
            counters.bump(ExitKind::PioWrite);
            pio_out(ctx, port, data, size)
        }
        Exit::PioIn { port, data, size } => {
            counters.bump(ExitKind::PioRead);
            pio_in(ctx, port, data, size)
        }
        Exit::MmioRead { addr, data } => {
            counters.bump(ExitKind::MmioRead);
            mmio_outcome(ctx, ctx.mmio.read(ctx.index, addr, data))
        }
        Exit::MmioWrite { addr, data } => {
            counters.bump(ExitKind::MmioWrite);
            mmio_outcome(ctx, ctx.mmio.write(ctx.index, addr, data))
        }
        Exit::Hlt => {
            // Only without an in-kernel irqchip; resume (the lab's `hlt`
            // scenario measures exactly this round trip).
            counters.bump(ExitKind::Hlt);
            IoOutcome::Continue
        }
        Exit::Intr => {
            counters.bump(ExitKind::Interrupted);
            IoOutcome::Continue
        }
        Exit::Shutdown => return ExitOutcome::Crashed(Crash::TripleFault),
        Exit::InternalError => return ExitOutcome::Crashed(Crash::InternalError),
        Exit::FailEntry { reason } => return ExitOutcome::Crashed(Crash::FailEntry { reason }),
        Exit::SystemEvent { kind } => return ExitOutcome::End(VcpuEnd::SystemEvent { kind }),
        Exit::Arch(exit) => return arch::handle_exit(ctx, exit),
        Exit::Unhandled(other) => {
            counters.bump(ExitKind::Other);
            return ExitOutcome::End(VcpuEnd::Unhandled {
                what: format!("{other:?}"),
            });
        }
        Exit::Kicked => {
            counters.bump(ExitKind::Interrupted);
            return ExitOutcome::Kicked;
        }
        Exit::Again => IoOutcome::Continue,
        Exit::RunError { errno } => return ExitOutcome::End(VcpuEnd::RunError { errno }),
    };
    match outcome {
        IoOutcome::Continue => ExitOutcome::Resume,
        IoOutcome::Stop(reason) => ExitOutcome::End(VcpuEnd::Device(reason)),
    }
}

/// What an MMIO access did; an unmapped one is counted and ignored.
#[inline]
fn mmio_outcome(ctx: &VcpuContext, access: Access) -> IoOutcome {
    match access {
        Access::Handled(o) => o,
        Access::Unmapped => {
            ctx.counters.bump(ExitKind::UnmappedMmio);
            IoOutcome::Continue
        }
    }
}

/// An OUT, possibly a string OUT (`rep outs`): each element is one access
/// of `size` bytes, as the hardware would issue it.
#[inline]
fn pio_out(ctx: &VcpuContext, port: u16, data: &[u8], size: usize) -> IoOutcome {
    for chunk in data.chunks(size.max(1)) {
        match ctx.pio.write(ctx.index, port as u64, chunk) {
            Access::Handled(IoOutcome::Continue) => {}
            Access::Handled(stop) => return stop,
            Access::Unmapped => ctx.counters.bump(ExitKind::UnmappedPio),
        }
    }
    IoOutcome::Continue
}

/// An IN, possibly a string IN.
#[inline]
fn pio_in(ctx: &VcpuContext, port: u16, data: &mut [u8], size: usize) -> IoOutcome {
    let mut outcome = IoOutcome::Continue;
    for chunk in data.chunks_mut(size.max(1)) {
        match ctx.pio.read(ctx.index, port as u64, chunk) {
            Access::Unmapped => ctx.counters.bump(ExitKind::UnmappedPio),
            // A stopping read (an absent device) still completes the
            // string; the VM stops after it.
            Access::Handled(IoOutcome::Stop(r)) => outcome = IoOutcome::Stop(r),
            Access::Handled(IoOutcome::Continue) => {}
        }
    }
    outcome
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, Mutex};

    use kvm_bindings::{KVM_SYSTEM_EVENT_CRASH, KVM_SYSTEM_EVENT_RESET, KVM_SYSTEM_EVENT_SHUTDOWN};
    use trapline_bus::{
        AbsentDevice, AccessSizes, BusBuilder, BusDevice, ExitCounters, StopReason,
    };

    use kvm_ioctls::VcpuExit;

    use super::*;

    const PORT: u16 = 0x3f8;
    const FLOOR: u16 = 0x500;
    const MMIO: u64 = 0xd000_0000;

    /// Records every access; reads return `0x10 + offset` per byte.
    /// A write of `0xde` asks the VM to stop (debug exit 7).
    #[derive(Default)]
    struct Recorder {
        accesses: Mutex<Vec<(char, u64, Vec<u8>)>>,
    }

    impl BusDevice for Recorder {
        fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
            data.fill(0x10 + offset as u8);
            self.accesses
                .lock()
                .unwrap()
                .push(('r', offset, data.to_vec()));
        }
        fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
            self.accesses
                .lock()
                .unwrap()
                .push(('w', offset, data.to_vec()));
            if data == [0xde] {
                IoOutcome::Stop(StopReason::DebugExit(7))
            } else {
                IoOutcome::Continue
            }
        }
        fn access_sizes(&self) -> AccessSizes {
            AccessSizes::ANY
        }
    }

    /// A device the VM was built without: every read stops it.
    struct Absent;

    impl BusDevice for Absent {
        fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
            data.fill(0xff);
        }
        fn write(&self, _vcpu: usize, _base: u64, _offset: u64, _data: &[u8]) -> IoOutcome {
            IoOutcome::Stop(StopReason::AbsentDevice(AbsentDevice::Pit))
        }
        fn read_stops(&self) -> Option<StopReason> {
            Some(StopReason::AbsentDevice(AbsentDevice::Pit))
        }
        fn access_sizes(&self) -> AccessSizes {
            AccessSizes::ANY
        }
    }

    /// A vCPU context with a recorder on each bus (the architectures'
    /// exit hooks are tested with it too).
    pub(crate) struct Fixture {
        pub(crate) ctx: VcpuContext,
        pio_dev: Arc<Recorder>,
        mmio_dev: Arc<Recorder>,
    }

    impl Fixture {
        pub(crate) fn new() -> Self {
            let pio_dev = Arc::new(Recorder::default());
            let mmio_dev = Arc::new(Recorder::default());
            let mut pio = BusBuilder::new();
            pio.insert("recorder", PORT as u64, 8, pio_dev.clone())
                .unwrap();
            pio.insert("absent", 0x40, 4, Arc::new(Absent)).unwrap();
            pio.insert("floor-shadow", FLOOR as u64, 1, pio_dev.clone())
                .unwrap();
            let mut mmio = BusBuilder::new();
            mmio.insert("recorder", MMIO, 0x1000, mmio_dev.clone())
                .unwrap();
            let ctx = VcpuContext {
                index: 0,
                pio: Arc::new(pio.build()),
                mmio: Arc::new(mmio.build()),
                counters: Arc::new(ExitCounters::default()),
                fast_port: Some(FLOOR),
                ring: None,
                stop: Arc::new(AtomicBool::new(false)),
                memory: None,
                profile: None,
                exit_stamps: None,
            };
            Fixture {
                ctx,
                pio_dev,
                mmio_dev,
            }
        }

        /// Decode `exit` (PIO elements `io_size` wide) and dispatch it.
        pub(crate) fn dispatch(
            &self,
            exit: Result<VcpuExit<'_>, kvm_ioctls::Error>,
            io_size: usize,
        ) -> ExitOutcome {
            dispatch(&self.ctx, Exit::decode(exit, io_size))
        }

        pub(crate) fn count(&self, kind: ExitKind) -> u64 {
            self.ctx.counters.snapshot().get(kind)
        }

        fn pio_log(&self) -> Vec<(char, u64, Vec<u8>)> {
            self.pio_dev.accesses.lock().unwrap().clone()
        }

        fn mmio_log(&self) -> Vec<(char, u64, Vec<u8>)> {
            self.mmio_dev.accesses.lock().unwrap().clone()
        }
    }

    pub(crate) fn errno(e: i32) -> kvm_ioctls::Error {
        kvm_ioctls::Error::new(e)
    }

    #[test]
    fn pio_out_reaches_the_registered_device() {
        let f = Fixture::new();
        let out = f.dispatch(Ok(VcpuExit::IoOut(PORT + 2, &[0x41])), 1);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(f.pio_log(), vec![('w', 2, vec![0x41])]);
        assert_eq!(f.count(ExitKind::PioWrite), 1);
        assert_eq!(f.count(ExitKind::UnmappedPio), 0);
    }

    #[test]
    fn string_pio_out_is_one_access_per_element() {
        let f = Fixture::new();
        let out = f.dispatch(Ok(VcpuExit::IoOut(PORT, &[1, 2, 3, 4])), 2);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(
            f.pio_log(),
            vec![('w', 0, vec![1, 2]), ('w', 0, vec![3, 4])]
        );
        assert_eq!(f.count(ExitKind::PioWrite), 1);
    }

    #[test]
    fn a_stopping_pio_write_ends_the_loop_with_the_device_reason() {
        let f = Fixture::new();
        let out = f.dispatch(Ok(VcpuExit::IoOut(PORT, &[0xde, 0x01])), 1);
        assert_eq!(
            out,
            ExitOutcome::End(VcpuEnd::Device(StopReason::DebugExit(7)))
        );
        // The rest of the string is not written once the VM stops.
        assert_eq!(f.pio_log(), vec![('w', 0, vec![0xde])]);
    }

    #[test]
    fn the_fast_port_is_counted_and_never_reaches_the_bus() {
        let f = Fixture::new();
        let out = f.dispatch(Ok(VcpuExit::IoOut(FLOOR, &[0])), 1);
        assert_eq!(out, ExitOutcome::Resume);
        assert!(f.pio_log().is_empty());
        assert_eq!(f.count(ExitKind::FastPort), 1);
        assert_eq!(f.count(ExitKind::PioWrite), 0);
    }

    #[test]
    fn unmapped_pio_reads_all_ones_and_writes_are_dropped_and_counted() {
        let f = Fixture::new();
        let mut data = [0u8; 4];
        let out = f.dispatch(Ok(VcpuExit::IoIn(0x1234, &mut data)), 4);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(data, [0xff; 4]);
        let out = f.dispatch(Ok(VcpuExit::IoOut(0x1234, &[5])), 1);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(f.count(ExitKind::UnmappedPio), 2);
        assert_eq!(f.count(ExitKind::PioRead), 1);
        assert_eq!(f.count(ExitKind::PioWrite), 1);
        assert!(f.pio_log().is_empty());
    }

    #[test]
    fn pio_in_is_filled_by_the_device_element_by_element() {
        let f = Fixture::new();
        let mut data = [0u8; 3];
        let out = f.dispatch(Ok(VcpuExit::IoIn(PORT + 1, &mut data)), 1);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(data, [0x11; 3]);
        assert_eq!(f.pio_log().len(), 3);
        assert_eq!(f.count(ExitKind::PioRead), 1);
    }

    #[test]
    fn a_stopping_read_completes_the_string_then_ends_the_loop() {
        let f = Fixture::new();
        let mut data = [0u8; 2];
        let out = f.dispatch(Ok(VcpuExit::IoIn(0x40, &mut data)), 1);
        assert_eq!(
            out,
            ExitOutcome::End(VcpuEnd::Device(StopReason::AbsentDevice(AbsentDevice::Pit)))
        );
        assert_eq!(data, [0xff; 2]);
    }

    #[test]
    fn mmio_reads_and_writes_reach_the_device() {
        let f = Fixture::new();
        let mut data = [0u8; 4];
        let out = f.dispatch(Ok(VcpuExit::MmioRead(MMIO + 8, &mut data)), 1);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(data, [0x18; 4]);
        let out = f.dispatch(Ok(VcpuExit::MmioWrite(MMIO + 4, &[9, 9])), 1);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(
            f.mmio_log(),
            vec![('r', 8, vec![0x18; 4]), ('w', 4, vec![9, 9])]
        );
        assert_eq!(f.count(ExitKind::MmioRead), 1);
        assert_eq!(f.count(ExitKind::MmioWrite), 1);
        assert_eq!(f.count(ExitKind::UnmappedMmio), 0);
    }

    #[test]
    fn unmapped_mmio_reads_all_ones_and_is_counted() {
        let f = Fixture::new();
        let mut data = [0u8; 8];
        let out = f.dispatch(Ok(VcpuExit::MmioRead(0x1000, &mut data)), 1);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(data, [0xff; 8]);
        let out = f.dispatch(Ok(VcpuExit::MmioWrite(0x1000, &[1])), 1);
        assert_eq!(out, ExitOutcome::Resume);
        assert_eq!(f.count(ExitKind::UnmappedMmio), 2);
    }

    #[test]
    fn a_stopping_mmio_write_ends_the_loop() {
        let f = Fixture::new();
        let out = f.dispatch(Ok(VcpuExit::MmioWrite(MMIO, &[0xde])), 1);
        assert_eq!(
            out,
            ExitOutcome::End(VcpuEnd::Device(StopReason::DebugExit(7)))
        );
    }

    #[test]
    fn hlt_and_intr_resume_and_are_counted() {
        let f = Fixture::new();
        assert_eq!(f.dispatch(Ok(VcpuExit::Hlt), 1), ExitOutcome::Resume);
        assert_eq!(f.dispatch(Ok(VcpuExit::Intr), 1), ExitOutcome::Resume);
        assert_eq!(f.count(ExitKind::Hlt), 1);
        assert_eq!(f.count(ExitKind::Interrupted), 1);
    }

    #[test]
    fn shutdown_internal_error_and_fail_entry_are_crashes_for_the_loop() {
        let f = Fixture::new();
        assert_eq!(
            f.dispatch(Ok(VcpuExit::Shutdown), 1),
            ExitOutcome::Crashed(Crash::TripleFault)
        );
        assert_eq!(
            f.dispatch(Ok(VcpuExit::InternalError), 1),
            ExitOutcome::Crashed(Crash::InternalError)
        );
        assert_eq!(
            f.dispatch(Ok(VcpuExit::FailEntry(0x80000021, 0)), 1),
            ExitOutcome::Crashed(Crash::FailEntry { reason: 0x80000021 })
        );
        // None of them is counted, as before the split.
        assert_eq!(f.ctx.counters.snapshot().total_exits(), 0);
    }

    #[test]
    fn system_events_end_the_loop_with_their_kind() {
        let f = Fixture::new();
        for kind in [
            KVM_SYSTEM_EVENT_SHUTDOWN,
            KVM_SYSTEM_EVENT_RESET,
            KVM_SYSTEM_EVENT_CRASH,
        ] {
            assert_eq!(
                f.dispatch(Ok(VcpuExit::SystemEvent(kind, &[0])), 1),
                ExitOutcome::End(VcpuEnd::SystemEvent { kind })
            );
        }
    }

    #[test]
    fn an_unhandled_exit_is_described_and_counted() {
        let f = Fixture::new();
        assert_eq!(
            f.dispatch(Ok(VcpuExit::IrqWindowOpen), 1),
            ExitOutcome::End(VcpuEnd::Unhandled {
                what: "IrqWindowOpen".into()
            })
        );
        assert_eq!(f.count(ExitKind::Other), 1);
    }

    #[test]
    fn run_errors_eintr_kicks_eagain_resumes_others_end() {
        let f = Fixture::new();
        assert_eq!(f.dispatch(Err(errno(libc::EINTR)), 1), ExitOutcome::Kicked);
        assert_eq!(f.count(ExitKind::Interrupted), 1);
        assert_eq!(f.dispatch(Err(errno(libc::EAGAIN)), 1), ExitOutcome::Resume);
        assert_eq!(
            f.dispatch(Err(errno(libc::EFAULT)), 1),
            ExitOutcome::End(VcpuEnd::RunError {
                errno: libc::EFAULT
            })
        );
        assert_eq!(f.count(ExitKind::Interrupted), 1);
    }
}
