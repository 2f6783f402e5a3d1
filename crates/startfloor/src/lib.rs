//! trapline-start-floor: the start-up floor, as the raw-KVM floor is for
//! exits. The least a KVM VMM does before its guest runs — exec, open
//! /dev/kvm, create the VM, its in-kernel interrupt controller (x86: the
//! irqchip and PIT; arm64: the vGICv3 and its ITS, as trapline creates
//! them), guest RAM as a memory slot, one vCPU with its registers — then
//! one KVM_RUN into a guest whose first instruction exits to user space.
//!
//! It prints the lines `TRAPLINE_FOOTPRINT=1 trapline run` prints (the CPU
//! time to the first KVM_RUN, the memory beyond guest RAM, and one line per
//! phase), with the same measuring code at four of trapline's marks:
//! `main`, `vm created`, `vcpus created` and `first KVM_RUN`. `trapline
//! bench` runs it interleaved with trapline's own start and reports
//! trapline's start-up as a multiple of it (docs/bench.md#footprint).
//! Everything runs on the main thread: a VMM's vCPU thread is its own
//! choice, and counts as its own work. The binary is a target of the
//! `trapline` package (`crates/cli/src/bin/start_floor.rs`).

mod arch;
mod ram;

use std::process::ExitCode;
use std::time::Instant;

use trapline_machine::footprint::{self, marks};

/// Guest RAM, as `trapline run`'s default (`--mem 128`).
pub const RAM_BYTES: usize = 128 << 20;

/// The program: the start, its footprint lines on stderr, then the exit
/// status (`trapline-start-floor`'s `main`, in the `trapline` package so
/// that `cargo build` builds it beside trapline and `cargo run` still runs
/// trapline).
pub fn main() -> ExitCode {
    marks::enable("main");
    let wall = Instant::now();
    match start() {
        Ok(f) => {
            eprintln!(
                "trapline-footprint cpu_ns_to_first_kvm_run={} rss_beyond_guest_bytes={} wall_ns={}",
                f.cpu_at_first_run.as_nanos(),
                f.rss_beyond_guest,
                wall.elapsed().as_nanos()
            );
            marks::print_phases();
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("trapline-start-floor: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What the start measured.
struct Measured {
    cpu_at_first_run: std::time::Duration,
    rss_beyond_guest: u64,
}

/// The start, one step per mark, then the one guest entry.
fn start() -> Result<Measured, String> {
    let kvm = kvm_ioctls::Kvm::new().map_err(|e| {
        format!("cannot open /dev/kvm: {e} (is KVM enabled, and may this user open it?)")
    })?;
    let ram = ram::GuestRam::map(RAM_BYTES)?;
    let vm = arch::create_vm(&kvm, &ram)?;
    marks::mark("vm created");
    let mut vcpu = arch::create_vcpu(&kvm, &vm, &ram)?;
    marks::mark("vcpus created");
    let _platform = arch::finish_platform(&vm)?;
    marks::mark("first KVM_RUN");
    let cpu_at_first_run = footprint::process_cpu_time();
    let exit = vcpu.run().map_err(|e| format!("KVM_RUN: {e}"))?;
    arch::expected_exit(&exit)?;
    let (start, end) = ram.host_range();
    let rss_beyond_guest = footprint::rss_outside(start, end)
        .ok_or("cannot read /proc/self/smaps for the resident memory")?;
    Ok(Measured {
        cpu_at_first_run,
        rss_beyond_guest,
    })
}
