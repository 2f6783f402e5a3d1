//! The raw-KVM floor: the same PIO loop measured on /dev/kvm with no VMM
//! around it — one memslot, one vCPU in real mode, a run loop that answers
//! the OUT and nothing else. The user-exit premium measured here is the
//! least any VMM can pay; trapline's premium is compared with it.
//!
//! The guest is 25 bytes of 64-bit code (hand-assembled below, so it needs
//! no toolchain), run in long mode like trapline's probe so both pay for the
//! same kind of exit: RDTSC, N iterations of `out dx, eax; dec ecx; jnz`,
//! RDTSC, HLT. Without an in-kernel irqchip the HLT exits to us, and the two
//! timestamps are read from the registers. The `noop` variant replaces the
//! OUT with a NOP of the same length, so subtracting it leaves the OUT.

use kvm_bindings::kvm_userspace_memory_region;
use kvm_ioctls::{IoEventAddress, Kvm, NoDatamatch, VcpuExit};
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend, GuestMemoryMmap};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

/// The port the floor loop writes.
pub const FLOOR_PORT: u16 = 0x0710;
const CODE_ADDR: u64 = 0x1000;
const MEM_SIZE: usize = 0x10000;

/// What the loop body does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorKind {
    /// Two NOPs: the loop overhead.
    Noop,
    /// OUT to a port the run loop answers: a full exit to user space.
    PioUserOut,
    /// OUT to a port with a wildcard ioeventfd: served in the kernel.
    PioKernelWildcard,
}

impl FloorKind {
    /// Every kind, in report order.
    pub const ALL: [FloorKind; 3] = [
        FloorKind::Noop,
        FloorKind::PioUserOut,
        FloorKind::PioKernelWildcard,
    ];

    /// The scenario name it reports under (VMM `raw-kvm`).
    pub fn name(self) -> &'static str {
        match self {
            FloorKind::Noop => "noop",
            FloorKind::PioUserOut => "pio-user-out",
            FloorKind::PioKernelWildcard => "pio-kernel-wildcard",
        }
    }
}

/// One floor measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloorSample {
    /// Iterations timed.
    pub iterations: u64,
    /// TSC cycles for all of them.
    pub cycles: u64,
    /// Exits to user space during the loop.
    pub user_exits: u64,
    /// Times the ioeventfd fired.
    pub eventfd_count: u64,
}

/// 64-bit code for `kind`, looping `n` times (the same mode as the probe).
pub fn code(kind: FloorKind, n: u32) -> Vec<u8> {
    let mut c = vec![
        0x0f, 0x31, // rdtsc
        0x89, 0xc6, // mov esi, eax
        0x89, 0xd7, // mov edi, edx
        0xb9, // mov ecx, imm32
    ];
    c.extend_from_slice(&n.to_le_bytes());
    c.extend_from_slice(&[0x66, 0xba]); // mov dx, imm16
    c.extend_from_slice(&FLOOR_PORT.to_le_bytes());
    match kind {
        FloorKind::Noop => c.push(0x90), // nop
        _ => c.push(0xef),               // out dx, eax
    }
    c.extend_from_slice(&[
        0xff, 0xc9, // dec ecx
        0x75, 0xfb, // jnz back to the body (-5)
        0x0f, 0x31, // rdtsc
        0xf4, // hlt
    ]);
    c
}

const PML4: u64 = 0x2000;
const PDPT: u64 = 0x3000;
const PD: u64 = 0x4000;

/// Identity-map the first 2 MiB with one large page.
fn page_tables(mem: &GuestMemoryMmap) -> Result<(), String> {
    let w = |v: u64, at: u64| {
        mem.write_obj(v, GuestAddress(at))
            .map_err(|e| e.to_string())
    };
    w(PDPT | 0x3, PML4)?; // present, writable
    w(PD | 0x3, PDPT)?;
    w(0x83, PD) // 2 MiB page at 0: present, writable, PS
}

/// 64-bit long mode, paging on, flat segments (no GDT needed: nothing
/// reloads a selector).
fn long_mode(s: &mut kvm_bindings::kvm_sregs) {
    let code = kvm_bindings::kvm_segment {
        base: 0,
        limit: 0xffff_ffff,
        selector: 0x8,
        type_: 0xb,
        present: 1,
        dpl: 0,
        db: 0,
        s: 1,
        l: 1,
        g: 1,
        ..Default::default()
    };
    let data = kvm_bindings::kvm_segment {
        selector: 0x10,
        type_: 0x3,
        l: 0,
        db: 1,
        ..code
    };
    s.cs = code;
    s.ds = data;
    s.es = data;
    s.fs = data;
    s.gs = data;
    s.ss = data;
    s.cr3 = PML4;
    s.cr4 = 1 << 5; // PAE
    s.cr0 = (1 << 0) | (1 << 4) | (1 << 5) | (1 << 31); // PE, ET, NE, PG
    s.efer = (1 << 8) | (1 << 10); // LME, LMA
}

/// Errors are plain strings: the floor is a measurement, and its caller
/// reports a failure as the scenario's reason.
pub fn measure(kvm: &Kvm, kind: FloorKind, iterations: u32) -> Result<FloorSample, String> {
    let e = |what: &str| {
        let what = what.to_string();
        move |err: kvm_ioctls::Error| format!("raw floor: {what}: {err}")
    };
    let vm = kvm.create_vm().map_err(e("KVM_CREATE_VM"))?;
    vm.set_tss_address(0xfffb_d000)
        .map_err(e("KVM_SET_TSS_ADDR"))?;
    let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), MEM_SIZE)])
        .map_err(|x| x.to_string())?;
    let region = mem.iter().next().ok_or("raw floor: no memory region")?;
    let desc = kvm_userspace_memory_region {
        slot: 0,
        flags: 0,
        guest_phys_addr: 0,
        memory_size: MEM_SIZE as u64,
        userspace_addr: region.as_ptr() as u64,
    };
    // SAFETY: `mem` outlives `vm` in this function (declared first, dropped
    // last), so the host range stays mapped while KVM may use it.
    unsafe { vm.set_user_memory_region(desc) }.map_err(e("KVM_SET_USER_MEMORY_REGION"))?;
    mem.write_slice(&code(kind, iterations), GuestAddress(CODE_ADDR))
        .map_err(|x| x.to_string())?;
    let evt = EventFd::new(EFD_NONBLOCK).map_err(|x| x.to_string())?;
    if kind == FloorKind::PioKernelWildcard {
        vm.register_ioevent(&evt, &IoEventAddress::Pio(FLOOR_PORT.into()), NoDatamatch)
            .map_err(e("KVM_IOEVENTFD"))?;
    }
    let mut vcpu = vm.create_vcpu(0).map_err(e("KVM_CREATE_VCPU"))?;
    page_tables(&mem)?;
    let mut sregs = vcpu.get_sregs().map_err(e("KVM_GET_SREGS"))?;
    long_mode(&mut sregs);
    vcpu.set_sregs(&sregs).map_err(e("KVM_SET_SREGS"))?;
    let regs = kvm_bindings::kvm_regs {
        rip: CODE_ADDR,
        rflags: 2,
        ..Default::default()
    };
    vcpu.set_regs(&regs).map_err(e("KVM_SET_REGS"))?;
    let mut user_exits = 0u64;
    loop {
        match vcpu.run() {
            Ok(VcpuExit::IoOut(FLOOR_PORT, _)) => user_exits += 1,
            Ok(VcpuExit::Hlt) => break,
            Ok(other) => return Err(format!("raw floor: unexpected exit {other:?}")),
            Err(err) if err.errno() == libc::EINTR || err.errno() == libc::EAGAIN => {}
            Err(err) => return Err(format!("raw floor: KVM_RUN: {err}")),
        }
    }
    let r = vcpu.get_regs().map_err(e("KVM_GET_REGS"))?;
    let t0 = (r.rdi << 32) | (r.rsi & 0xffff_ffff);
    let t1 = ((r.rdx & 0xffff_ffff) << 32) | (r.rax & 0xffff_ffff);
    Ok(FloorSample {
        iterations: iterations.into(),
        cycles: t1.wrapping_sub(t0),
        user_exits,
        eventfd_count: evt.read().unwrap_or(0),
    })
}

/// Grow the loop from `min` iterations, doubling, until it lasts `goal`
/// cycles or reaches `max` iterations (the kvm-unit-tests method); returns
/// the last measurement.
pub fn measure_to_goal(
    kvm: &Kvm,
    kind: FloorKind,
    goal: u64,
    min: u32,
    max: u32,
) -> Result<FloorSample, String> {
    let mut n = min.max(1);
    loop {
        let s = measure(kvm, kind, n)?;
        if s.cycles >= goal || n >= max {
            return Ok(s);
        }
        n = n.saturating_mul(2).min(max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_bodies_have_the_same_length_and_the_jump_lands_on_the_body() {
        let a = code(FloorKind::Noop, 7);
        let b = code(FloorKind::PioUserOut, 7);
        assert_eq!(a.len(), b.len());
        // jnz's displacement is at len-4; the jump lands on its end + disp.
        let disp = b[b.len() - 4] as i8 as isize;
        let target = (b.len() as isize - 3) + disp;
        assert_eq!(b[target as usize], 0xef);
        assert_eq!(a[target as usize], 0x90);
        assert_eq!(&b[7..11], &7u32.to_le_bytes());
    }
}
