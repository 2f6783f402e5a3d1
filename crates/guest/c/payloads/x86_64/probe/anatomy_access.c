/*
 * x86's side of the anatomy pass (common/probe/anatomy.c): one access per
 * user path, stamped with LFENCE; RDTSC just before and just after, all in
 * one asm statement. On a nested host the guest's instructions around an
 * exit may be emulated (about a microsecond each: see crates/floor's
 * code.rs), so nothing but two register moves (and the port, for PIO)
 * lies between the first stamp and the access, and nothing but the fence
 * between the access and the second: the same as the raw floor's
 * anatomy program, so the two sides' legs hold the same instructions.
 */
#include "probe/probe.h"

/* Stamp around `access` (which may use %[a], an address, and %[p], a port already in DX). */
#define STAMPED(access, ...)                                                                     \
    asm volatile("lfence\n\trdtsc\n\tmov %%eax, %k[lo0]\n\tmov %%edx, %k[hi0]\n\t"             \
                 "mov %k[p], %%edx\n\t" access "\n\tlfence\n\trdtsc"                             \
                 : "=&a"(lo3), "=&d"(hi3), [lo0] "=&r"(lo0), [hi0] "=&r"(hi0)                   \
                 : [p] "r"(port), [a] "r"(addr) __VA_ARGS__                                     \
                 : "memory")

void anatomy_stamps(u64 *t0, u64 *t3)
{
    u32 lo0, hi0, lo3, hi3, port = PROBE_PIO_USER_PORT;
    u64 addr = 0;

    STAMPED("");
    *t0 = ((u64)hi0 << 32) | lo0;
    *t3 = ((u64)hi3 << 32) | lo3;
}

bool anatomy_access(u32 id, u64 *t0, u64 *t3)
{
    u32 lo0, hi0, lo3, hi3, port = PROBE_PIO_USER_PORT;
    u64 addr = PROBE_MMIO_USER;
    const struct testdev_target *t;

    switch (id) {
    case SCENARIO_PIO_USER_OUT:
        STAMPED("outl %%eax, %%dx");
        break;
    case SCENARIO_PIO_USER_IN:
        STAMPED("inl %%dx, %%eax");
        break;
    case SCENARIO_MMIO_USER_READ:
        STAMPED("movl (%[a]), %%eax");
        break;
    case SCENARIO_MMIO_USER_WRITE:
        STAMPED("movl %%eax, (%[a])");
        break;
    case SCENARIO_HLT:
        /* Without an in-kernel irqchip (the lab's no-irqchip machine) each hlt is a user exit. */
        STAMPED("hlt");
        break;
    case SCENARIO_RO_MEMSLOT_WRITE:
        addr = PROBE_RO_MEMSLOT + 4;
        STAMPED("movl %%eax, (%[a])");
        break;
    case SCENARIO_PCI_MMIO_NO_EVENTFD:
    case SCENARIO_PCI_PORTIO_NO_EVENTFD:
        /* The selected test's own write: its width, its BAR (the data does not matter to the exit). */
        t = pci_testdev_selected();
        addr = t->addr;
        port = (u32)t->addr;
        if (t->how == PT_MMIO && t->width == 1)
            STAMPED("movb %%al, (%[a])");
        else if (t->how == PT_MMIO && t->width == 2)
            STAMPED("movw %%ax, (%[a])");
        else if (t->how == PT_MMIO)
            STAMPED("movl %%eax, (%[a])");
        else if (t->width == 1)
            STAMPED("outb %%al, %%dx");
        else if (t->width == 2)
            STAMPED("outw %%ax, %%dx");
        else
            STAMPED("outl %%eax, %%dx");
        break;
    default:
        return false;
    }
    *t0 = ((u64)hi0 << 32) | lo0;
    *t3 = ((u64)hi3 << 32) | lo3;
    return true;
}
