/*
 * The probe's scenarios whose loop is one trapping (or not) instruction:
 * the baseline, traps, PIO and MMIO to user space and to KVM's fast paths,
 * memslots, the VMM floor and the doorbells (seed 002).
 */
#include "probe/probe.h"

/* An ordinary RAM word for ram-read; same value as the devices so one check fits all. */
static u32 ram_word = PROBE_READ_VALUE;

/* vmcall on Intel, vmmcall on AMD (exits_init()). A global, not a call in
 * exits_run(): a call there would reshape the code around every loop, and
 * the raw-KVM floor copies the loops at their addresses (crates/floor/
 * src/arch/x86_64/code.rs). */
static bool intel;

void exits_init(void)
{
    u32 r[4];
    cpuid(0, 0, r);
    intel = r[1] == 0x756e6547 && r[3] == 0x49656e69 && r[2] == 0x6c65746e; /* "GenuineIntel" */
}

/* Runs n >= 1 iterations of scenario id; false if it is not one of these.
 * Every loop takes n in RSI ("S"), so each compares against the same
 * register and the raw-KVM floor's copies need set only RSI; hypercall's
 * loops clobber RSI (a hypercall argument), so theirs take "r". */
/* Aligned to a cache line, so the loops keep their offsets in their lines
 * (and the raw-KVM floor its copies') whatever the files before this one
 * add; only their addresses move, by whole lines. */
__attribute__((aligned(64))) bool exits_run(u32 id, u64 n, u64 *cycles, u64 *value)
{
    u64 i = 0, v = 0, t0 = 0, t1 = 0;

    switch (id) {
    case SCENARIO_NOOP:
        LOOP("", : [i] "+r"(i) : [n] "S"(n) : "memory");
        break;
    case SCENARIO_HYPERCALL:
        /* KVM's ABI: nr in RAX (0 is no hypercall), result in RAX; RBX/RCX/RDX/RSI are args. */
        if (intel)
            LOOP("xor %%eax, %%eax\n\tvmcall", : [i] "+r"(i), "+a"(v) : [n] "r"(n) : "rbx", "rcx", "rdx", "rsi", "memory");
        else
            LOOP("xor %%eax, %%eax\n\tvmmcall", : [i] "+r"(i), "+a"(v) : [n] "r"(n) : "rbx", "rcx", "rdx", "rsi", "memory");
        break;
    case SCENARIO_CPUID:
        LOOP("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\tcpuid", : [i] "+r"(i), "+a"(v) : [n] "S"(n) : "rbx", "rcx", "rdx", "memory");
        break;
    case SCENARIO_HLT:
        /* IF=0 throughout the runtime: without an in-kernel irqchip each hlt exits to user space. */
        LOOP("hlt", : [i] "+r"(i) : [n] "S"(n) : "memory");
        break;
    case SCENARIO_PIO_USER_OUT:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "S"(n), "d"((u16)PROBE_PIO_USER_PORT) : "memory");
        break;
    case SCENARIO_PIO_UART_OUT:
        /* The 16550's scratch register: a real device exit, no console output. */
        LOOP("outb %%al, %%dx", : [i] "+a"(i) : [n] "S"(n), "d"((u16)(COM1_PORT + 7)) : "memory");
        break;
    case SCENARIO_PIO_USER_IN:
        LOOP("inl %%dx, %%eax", : [i] "+r"(i), "+a"(v) : [n] "S"(n), "d"((u16)PROBE_PIO_USER_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_WILDCARD:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "S"(n), "a"((u32)PROBE_WILDCARD_VALUE), "d"((u16)PROBE_PIO_WILDCARD_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_DATAMATCH:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "S"(n), "a"((u32)PROBE_DATAMATCH_VALUE), "d"((u16)PROBE_PIO_DATAMATCH_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_PIC:
        /* 0x4d0 is the ELCR of KVM's in-kernel PIC: a PIO exit that never leaves the kernel. */
        LOOP("inb %%dx, %%al", : [i] "+r"(i), "+a"(v) : [n] "S"(n), "d"((u16)0x4d0) : "memory");
        break;
    case SCENARIO_MMIO_USER_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "S"(n), [a] "r"((u64)PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_MMIO_USER_WRITE:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "S"(n), [a] "r"((u64)PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_MMIO_KERNEL_WILDCARD:
        LOOP("movl %k[val], (%[a])", : [i] "+r"(i) : [n] "S"(n), [a] "r"((u64)PROBE_MMIO_WILDCARD), [val] "r"((u32)PROBE_WILDCARD_VALUE) : "memory");
        break;
    case SCENARIO_MMIO_KERNEL_DATAMATCH:
        LOOP("movl %k[val], (%[a])", : [i] "+r"(i) : [n] "S"(n), [a] "r"((u64)PROBE_MMIO_DATAMATCH), [val] "r"((u32)PROBE_DATAMATCH_VALUE) : "memory");
        break;
    case SCENARIO_COALESCED_MMIO:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "S"(n), [a] "r"((u64)PROBE_MMIO_COALESCED) : "memory");
        break;
    case SCENARIO_COALESCED_PIO:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "S"(n), "d"((u16)PROBE_PIO_COALESCED_PORT) : "memory");
        break;
    case SCENARIO_RAM_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "S"(n), [a] "r"(&ram_word) : "memory");
        break;
    case SCENARIO_RO_MEMSLOT_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "S"(n), [a] "r"((u64)PROBE_RO_MEMSLOT) : "memory");
        break;
    case SCENARIO_RO_MEMSLOT_WRITE:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "S"(n), [a] "r"((u64)PROBE_RO_MEMSLOT + 4) : "memory");
        break;
    case SCENARIO_VMM_FLOOR_PIO:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "S"(n), "d"((u16)PROBE_PIO_FLOOR_PORT) : "memory");
        break;
    case SCENARIO_DOORBELL_USER_MMIO:
        /* One ring = one 32-bit store; user-space doorbell: an MMIO exit to trapline per ring. */
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "S"(n), [a] "r"((u64)DOORBELL_MMIO_USER) : "memory");
        break;
    case SCENARIO_DOORBELL_IOEVENTFD_MMIO:
        /* The wildcard value, so a datamatch fallback (no any-length ioeventfd) matches too. */
        LOOP("movl %k[val], (%[a])", : [i] "+r"(i) : [n] "S"(n), [a] "r"((u64)DOORBELL_MMIO_KERNEL), [val] "r"((u32)PROBE_WILDCARD_VALUE) : "memory");
        break;
    case SCENARIO_DOORBELL_IOEVENTFD_PIO:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "S"(n), "a"((u32)PROBE_WILDCARD_VALUE), "d"((u16)DOORBELL_PIO_PORT) : "memory");
        break;
    case SCENARIO_DOORBELL_PV:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "S"(n), "a"((u32)DOORBELL_PV_IDENTITY), "d"((u16)PV_DOORBELL_PORT) : "memory");
        break;
    default:
        return false;
    }
    *cycles = t1 - t0;
    *value = v;
    return true;
}
