/*
 * arm64's side of the anatomy pass (common/probe/anatomy.c): one access
 * per user path, stamped with ISB; MRS CNTVCT_EL0 just before and just
 * after, in one asm statement (nothing else between the stamps and the
 * access, as on x86). The HVC is forwarded to trapline by KVM's SMCCC
 * filter, which the lab's machine sets where the host's KVM has it.
 */
#include "probe/probe.h"

#define STAMPED(access, ...)                                                                     \
    asm volatile("isb\n\tmrs %[c0], cntvct_el0\n\t" access "\n\tisb\n\tmrs %[c3], cntvct_el0"  \
                 : [c0] "=&r"(c0), [c3] "=&r"(c3), [v] "=&r"(v)                                 \
                 : [a] "r"(addr), [d] "r"(data)__VA_ARGS__                                      \
                 : "memory")

void anatomy_stamps(u64 *t0, u64 *t3)
{
    u64 c0, c3, v, addr = 0, data = 0;

    STAMPED("");
    (void)v;
    *t0 = c0;
    *t3 = c3;
}

bool anatomy_access(u32 id, u64 *t0, u64 *t3)
{
    u64 c0, c3, v, addr = VIRT_PROBE_MMIO_USER, data = 0;
    const struct testdev_target *t;

    switch (id) {
    case SCENARIO_MMIO_USER_READ:
        STAMPED("ldr %w[v], [%[a]]");
        break;
    case SCENARIO_MMIO_USER_WRITE:
        STAMPED("str %w[d], [%[a]]");
        break;
    case SCENARIO_RO_MEMSLOT_WRITE:
        addr = VIRT_PROBE_RO_MEMSLOT + 4;
        STAMPED("str %w[d], [%[a]]");
        break;
    case SCENARIO_HYPERCALL_USER:
        /* x0 = the function id the SMCCC filter forwards; x0-x3 are results. */
        data = SMCCC_PROBE_USER_FN;
        asm volatile("isb\n\tmrs %[c0], cntvct_el0\n\tmov x0, %[d]\n\thvc #0\n\tisb\n\tmrs %[c3], cntvct_el0"
                     : [c0] "=&r"(c0), [c3] "=&r"(c3)
                     : [d] "r"(data)
                     : "x0", "x1", "x2", "x3", "memory");
        break;
    case SCENARIO_PCI_MMIO_NO_EVENTFD:
    case SCENARIO_PCI_PORTIO_NO_EVENTFD:
        /* Every pci-testdev write on arm64 is a store of the header's width (its I/O BAR is MMIO too). */
        t = pci_testdev_selected();
        addr = t->addr;
        data = t->data;
        if (t->width == 1)
            STAMPED("strb %w[d], [%[a]]");
        else if (t->width == 2)
            STAMPED("strh %w[d], [%[a]]");
        else
            STAMPED("str %w[d], [%[a]]");
        break;
    default:
        return false;
    }
    (void)v;
    *t0 = c0;
    *t3 = c3;
    return true;
}
