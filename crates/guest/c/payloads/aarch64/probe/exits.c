/*
 * The arm64 probe's scenarios whose loop is one trapping (or not)
 * instruction (ROUTINE_EXITS): the baseline, the hypercall and the
 * system-register trap served by KVM, the hypercall forwarded to trapline
 * by KVM's SMCCC filter, MMIO to user space, to the in-kernel vGIC and to
 * KVM's ioeventfds, the coalesced zone, the memslots and the MMIO
 * doorbells (seed 002: user exit, ioeventfd, PV). Every address is a
 * trapline-abi constant (VIRT_PROBE_*, VIRT_DOORBELL_*, VIRT_GICD_IIDR).
 */
#include "probe/probe.h"

/* An ordinary RAM word for ram-read; same value as the devices so one check fits all. */
static u32 ram_word = PROBE_READ_VALUE;

void exits_init(void) {}

/* Runs n >= 1 iterations of scenario id; false if it is not one of these. */
/* Aligned to a cache line, so the loops keep their offsets in their lines
 * (and the raw-KVM floor its copies') whatever the files before this one
 * add; only their addresses move, by whole lines. */
__attribute__((aligned(64))) bool exits_run(u32 id, u64 n, u64 *cycles, u64 *value)
{
    u64 i = 0, v = 0, t0 = 0, t1 = 0;

    switch (id) {
    case SCENARIO_NOOP:
        LOOP("", : [i] "+r"(i) : [n] "r"(n) : "cc", "memory");
        break;
    case SCENARIO_HYPERCALL:
        /* SMCCC through HVC: x0 = an unknown function id; KVM answers
         * NOT_SUPPORTED in x0 itself (x0-x3 are results, so clobbered). */
        LOOP("mov x0, %[fn]\n\thvc #0\n\tmov %[v], x0", : [i] "+r"(i), [v] "+r"(v)
             : [n] "r"(n), [fn] "r"((u64)SMCCC_PROBE_UNKNOWN_FN)
             : "x0", "x1", "x2", "x3", "cc", "memory");
        if (v != SMCCC_RET_NOT_SUPPORTED)
            run_status = RESULT_BAD_VALUE;
        break;
    case SCENARIO_HYPERCALL_USER:
        /* The same call, with the id the lab's VM has KVM's SMCCC filter
         * forward to trapline, which answers SMCCC_PROBE_USER_RET in x0. */
        LOOP("mov x0, %[fn]\n\thvc #0\n\tmov %[v], x0", : [i] "+r"(i), [v] "+r"(v)
             : [n] "r"(n), [fn] "r"((u64)SMCCC_PROBE_USER_FN)
             : "x0", "x1", "x2", "x3", "cc", "memory");
        if (v != SMCCC_PROBE_USER_RET)
            run_status = RESULT_BAD_VALUE;
        break;
    case SCENARIO_SYSREG_TRAP:
        /* KVM traps every ID register read (HCR_EL2.TID3) and emulates it. */
        LOOP("mrs %[v], id_aa64pfr0_el1", : [i] "+r"(i), [v] "+r"(v) : [n] "r"(n) : "cc", "memory");
        break;
    case SCENARIO_MMIO_USER_READ:
        LOOP("ldr %w[v], [%[a]]", : [i] "+r"(i), [v] "+r"(v) : [n] "r"(n), [a] "r"((u64)VIRT_PROBE_MMIO_USER)
             : "cc", "memory");
        break;
    case SCENARIO_MMIO_USER_WRITE:
        LOOP("str %w[i], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)VIRT_PROBE_MMIO_USER) : "cc", "memory");
        break;
    case SCENARIO_MMIO_VGIC_READ:
        LOOP("ldr %w[v], [%[a]]", : [i] "+r"(i), [v] "+r"(v) : [n] "r"(n), [a] "r"((u64)VIRT_GICD_IIDR)
             : "cc", "memory");
        break;
    case SCENARIO_MMIO_KERNEL_WILDCARD:
        LOOP("str %w[val], [%[a]]", : [i] "+r"(i)
             : [n] "r"(n), [a] "r"((u64)VIRT_PROBE_MMIO_WILDCARD), [val] "r"((u32)PROBE_WILDCARD_VALUE)
             : "cc", "memory");
        break;
    case SCENARIO_MMIO_KERNEL_DATAMATCH:
        LOOP("str %w[val], [%[a]]", : [i] "+r"(i)
             : [n] "r"(n), [a] "r"((u64)VIRT_PROBE_MMIO_DATAMATCH), [val] "r"((u32)PROBE_DATAMATCH_VALUE)
             : "cc", "memory");
        break;
    case SCENARIO_COALESCED_MMIO:
        LOOP("str %w[i], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)VIRT_PROBE_MMIO_COALESCED)
             : "cc", "memory");
        break;
    case SCENARIO_RAM_READ:
        LOOP("ldr %w[v], [%[a]]", : [i] "+r"(i), [v] "+r"(v) : [n] "r"(n), [a] "r"(&ram_word) : "cc", "memory");
        break;
    case SCENARIO_RO_MEMSLOT_READ:
        LOOP("ldr %w[v], [%[a]]", : [i] "+r"(i), [v] "+r"(v) : [n] "r"(n), [a] "r"((u64)VIRT_PROBE_RO_MEMSLOT)
             : "cc", "memory");
        break;
    case SCENARIO_RO_MEMSLOT_WRITE:
        LOOP("str %w[i], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)VIRT_PROBE_RO_MEMSLOT + 4)
             : "cc", "memory");
        break;
    case SCENARIO_DOORBELL_USER_MMIO:
        /* One ring = one 32-bit store exiting to trapline's doorbell device. */
        LOOP("str %w[i], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)VIRT_DOORBELL_MMIO_USER) : "cc", "memory");
        break;
    case SCENARIO_DOORBELL_IOEVENTFD_MMIO:
        /* The wildcard value, so a datamatch fallback (no any-length ioeventfd) matches too. */
        LOOP("str %w[val], [%[a]]", : [i] "+r"(i)
             : [n] "r"(n), [a] "r"((u64)VIRT_DOORBELL_MMIO_KERNEL), [val] "r"((u32)PROBE_WILDCARD_VALUE)
             : "cc", "memory");
        break;
    case SCENARIO_DOORBELL_PV:
        /* PV as x86 defines it: the identity, matched by a 32-bit datamatch ioeventfd. */
        LOOP("str %w[val], [%[a]]", : [i] "+r"(i)
             : [n] "r"(n), [a] "r"((u64)VIRT_DOORBELL_PV_MMIO), [val] "r"((u32)DOORBELL_PV_IDENTITY)
             : "cc", "memory");
        break;
    default:
        return false;
    }
    *cycles = t1 - t0;
    *value = v;
    return true;
}
