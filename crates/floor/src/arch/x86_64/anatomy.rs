//! The x86 floor's anatomy VM: a bare raw VM (no irqchip, 8 MiB, the
//! floor's page tables and long mode) whose guest does, per access,
//! `lfence; rdtsc` into r8/r9, the path's one instruction, `lfence; rdtsc`,
//! then stores both stamps into an array in its RAM; the host's bare loop
//! (`crate::anatomy::run_stamped`) stamps each exit. The paths are the
//! probe's user paths that need nothing but the bare VM: PIO out and in,
//! MMIO read and write (an unmapped page), HLT (no irqchip: a user exit).

use kvm_ioctls::{Kvm, VcpuExit};
use trapline_abi::{self as abi, Stamps};
use vm_memory::{Bytes, GuestAddress};

use super::vm::{bare_vm, BareVm};
use crate::anatomy::{run_stamped, FloorAnatomy};
use crate::raw::Seen;

/// Where the code goes (away from the floor's other loops: nothing pins it).
const CODE: u64 = 0x50_0000;
/// Where the guest stores its stamps: 16 bytes per access.
const STAMPS: u64 = 0x10_0000;
/// Most accesses one run stamps (the array's room below the code).
pub const MAX_ACCESSES: usize = ((CODE - STAMPS) / 16) as usize;
/// The port whose OUT ends a run.
const DONE_PORT: u16 = super::code::DONE_PORT;

/// The paths the floor can stamp, by the probe's scenario names.
pub const PATHS: [&str; 5] = [
    "pio-user-out",
    "pio-user-in",
    "mmio-user-read",
    "mmio-user-write",
    "hlt",
];

/// The path's one instruction: `out dx, eax`, `in eax, dx`, `mov eax,
/// [r13]`, `mov [r13], eax`, `hlt`.
fn body(path: &str) -> Option<&'static [u8]> {
    Some(match path {
        "pio-user-out" => &[0xef],
        "pio-user-in" => &[0xed],
        "mmio-user-read" => &[0x41, 0x8b, 0x45, 0x00],
        "mmio-user-write" => &[0x41, 0x89, 0x45, 0x00],
        "hlt" => &[0xf4],
        _ => return None,
    })
}

/// The guest program for `path`: RSI accesses, stamps from RDI on, the
/// port in R12, the MMIO address in R13.
fn program(body: &[u8]) -> Vec<u8> {
    let mut c = vec![
        0x0f, 0xae, 0xe8, // top: lfence
        0x0f, 0x31, // rdtsc
        0x41, 0x89, 0xc0, // mov r8d, eax
        0x41, 0x89, 0xd1, // mov r9d, edx
        0x44, 0x89, 0xe2, // mov edx, r12d (the port)
    ];
    c.extend_from_slice(body);
    c.extend_from_slice(&[
        0x0f, 0xae, 0xe8, // lfence
        0x0f, 0x31, // rdtsc
        0x44, 0x89, 0x07, // mov [rdi], r8d
        0x44, 0x89, 0x4f, 0x04, // mov [rdi+4], r9d
        0x89, 0x47, 0x08, // mov [rdi+8], eax
        0x89, 0x57, 0x0c, // mov [rdi+12], edx
        0x48, 0x83, 0xc7, 0x10, // add rdi, 16
        0x48, 0xff, 0xce, // dec rsi
    ]);
    // jnz top (rel8 from the end of this 2-byte jump)
    let back = -((c.len() + 2) as isize);
    c.extend_from_slice(&[0x75, back as i8 as u8]);
    c.extend_from_slice(&[0x66, 0xba]); // mov dx, DONE_PORT
    c.extend_from_slice(&DONE_PORT.to_le_bytes());
    c.extend_from_slice(&[0xee, 0xeb, 0xfe]); // out dx, al; jmp $
    c
}

/// Which exits are the path's own.
fn seen_for(path: &'static str) -> impl Fn(&VcpuExit) -> Seen {
    move |exit| match (path, exit) {
        (_, VcpuExit::IoOut(DONE_PORT, _)) => Seen::Done,
        ("pio-user-out", VcpuExit::IoOut(p, _)) | ("pio-user-in", VcpuExit::IoIn(p, _))
            if *p == abi::PROBE_PIO_USER_PORT =>
        {
            Seen::UserExit
        }
        ("mmio-user-read", VcpuExit::MmioRead(a, _))
        | ("mmio-user-write", VcpuExit::MmioWrite(a, _))
            if *a == abi::PROBE_MMIO_USER =>
        {
            Seen::UserExit
        }
        ("hlt", VcpuExit::Hlt) => Seen::UserExit,
        _ => Seen::Unexpected,
    }
}

/// Stamp `n` accesses of `path` (after `warmup` unstamped ones on the same
/// VM); `Err` for a path the floor has no program for, or a failed run.
pub fn measure(
    kvm: &Kvm,
    path: &'static str,
    n: usize,
    warmup: usize,
) -> Result<FloorAnatomy, String> {
    let body =
        body(path).ok_or_else(|| format!("the raw floor has no anatomy program for {path}"))?;
    let n = n.clamp(1, MAX_ACCESSES);
    let mut vm = bare_vm(kvm)?;
    vm.mem
        .write_slice(&program(body), GuestAddress(CODE))
        .map_err(|e| format!("raw floor anatomy: writing the code: {e}"))?;
    let offset = trapline_kvm::clock_offset(&vm.vcpu);
    run_once(&mut vm, path, warmup.max(1), warmup.max(1))?;
    let host = run_once(&mut vm, path, n, n)?;
    let stamps = read_stamps(&vm, &host);
    let stamp_cost = stamp_cost(kvm)?;
    Ok(FloorAnatomy {
        path,
        stamps,
        stamp_cost,
        offset,
    })
}

/// The guest's stamps of the last run beside the host's.
fn read_stamps(vm: &BareVm, host: &[(u64, u64)]) -> Vec<Stamps> {
    crate::anatomy::read_stamps(&vm.mem, STAMPS, host)
}

/// The median of the program's two stamps with nothing between them (no
/// access, so no exit: the run's only exit is the done one).
fn stamp_cost(kvm: &Kvm) -> Result<u64, String> {
    const N: usize = 128;
    let mut vm = bare_vm(kvm)?;
    vm.mem
        .write_slice(&program(&[]), GuestAddress(CODE))
        .map_err(|e| format!("raw floor anatomy: writing the code: {e}"))?;
    run_once(&mut vm, "none", N, 0)?;
    Ok(crate::anatomy::median_gap(&vm.mem, STAMPS, N))
}

/// One run of `n` accesses making `exits` exits: the host's stamps per exit.
fn run_once(
    vm: &mut BareVm,
    path: &'static str,
    n: usize,
    exits: usize,
) -> Result<Vec<(u64, u64)>, String> {
    let regs = kvm_bindings::kvm_regs {
        rip: CODE,
        rflags: 2,
        rsi: n as u64,
        rdi: STAMPS,
        r12: abi::PROBE_PIO_USER_PORT.into(),
        r13: abi::PROBE_MMIO_USER,
        rsp: 0x7ff0,
        ..Default::default()
    };
    vm.vcpu
        .set_regs(&regs)
        .map_err(|e| format!("raw floor anatomy: KVM_SET_REGS: {e}"))?;
    run_stamped(&mut vm.vcpu, exits, seen_for(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_jumps_back_to_its_first_instruction() {
        for path in PATHS {
            let b = body(path).unwrap();
            let c = program(b);
            let jnz = c.iter().rposition(|&x| x == 0x75).unwrap();
            let disp = c[jnz + 1] as i8 as isize;
            assert_eq!(jnz as isize + 2 + disp, 0, "{path}");
            assert_eq!(
                &c[14..14 + b.len()],
                b,
                "{path}: the access follows the stamp"
            );
        }
        assert!(body("ro-memslot-write").is_none());
    }

    #[test]
    fn every_floor_path_splits_into_ordered_legs_on_kvm() {
        let Ok(kvm) = Kvm::new() else {
            eprintln!(
                "SKIPPED: /dev/kvm is not available; the floor's anatomy runs were not tested"
            );
            return;
        };
        for path in PATHS {
            let a = measure(&kvm, path, 64, 8).unwrap();
            assert_eq!(a.stamps.len(), 64, "{path}");
            let Ok((offset, _, _)) = a.offset else {
                eprintln!("{path}: no clock offset ({:?}): legs not checked", a.offset);
                continue;
            };
            let split: Vec<_> = a
                .stamps
                .iter()
                .filter_map(|s| abi::legs(*s, offset))
                .collect();
            assert_eq!(
                split.len(),
                64,
                "{path}: every access in order on one time line"
            );
            for l in split {
                assert_eq!(l.exit + l.vmm + l.entry, l.round, "{path}");
            }
            if std::env::var_os("TRAPLINE_SHOW").is_some() {
                let mut r: Vec<_> = a
                    .stamps
                    .iter()
                    .filter_map(|s| abi::legs(*s, offset))
                    .collect();
                r.sort_by_key(|l| l.round);
                eprintln!("{path}: median {:?}", r[r.len() / 2]);
            }
        }
    }
}
