/*
 * x86's side of the anatomy pass (common/probe/anatomy.c): one access per
 * user path, stamped with LFENCE; RDTSC just before and just after. Each
 * access is the instruction its scenario's loop repeats (exits.c).
 */
#include "probe/probe.h"

bool anatomy_access(u32 id, u64 *t0, u64 *t3)
{
    u32 v = 0;

    switch (id) {
    case SCENARIO_PIO_USER_OUT:
        *t0 = rdtsc_ordered();
        asm volatile("outl %%eax, %%dx" : : "a"(0u), "d"((u16)PROBE_PIO_USER_PORT) : "memory");
        break;
    case SCENARIO_PIO_USER_IN:
        *t0 = rdtsc_ordered();
        asm volatile("inl %%dx, %%eax" : "=a"(v) : "d"((u16)PROBE_PIO_USER_PORT) : "memory");
        break;
    case SCENARIO_MMIO_USER_READ:
        *t0 = rdtsc_ordered();
        asm volatile("movl (%1), %0" : "=r"(v) : "r"((u64)PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_MMIO_USER_WRITE:
        *t0 = rdtsc_ordered();
        asm volatile("movl %0, (%1)" : : "r"(v), "r"((u64)PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_HLT:
        /* Without an in-kernel irqchip (the lab's no-irqchip machine) each hlt is a user exit. */
        *t0 = rdtsc_ordered();
        asm volatile("hlt" : : : "memory");
        break;
    case SCENARIO_RO_MEMSLOT_WRITE:
        *t0 = rdtsc_ordered();
        asm volatile("movl %0, (%1)" : : "r"(v), "r"((u64)PROBE_RO_MEMSLOT + 4) : "memory");
        break;
    case SCENARIO_PCI_MMIO_NO_EVENTFD:
    case SCENARIO_PCI_PORTIO_NO_EVENTFD:
        /* The scenario's own loop, once (its LFENCE; RDTSC pair falls inside the legs). */
        *t0 = rdtsc_ordered();
        pci_testdev_once();
        break;
    default:
        return false;
    }
    *t3 = rdtsc_ordered();
    (void)v;
    return true;
}
