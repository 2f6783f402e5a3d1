/*
 * arm64's side of the anatomy pass (common/probe/anatomy.c): one access
 * per user path, stamped with ISB; MRS CNTVCT_EL0 just before and just
 * after. Each access is the instruction its scenario's loop repeats
 * (exits.c); the HVC is forwarded to trapline by KVM's SMCCC filter,
 * which the lab's machine sets where the host's KVM has it.
 */
#include "probe/probe.h"

bool anatomy_access(u32 id, u64 *t0, u64 *t3)
{
    u64 v = 0;

    switch (id) {
    case SCENARIO_MMIO_USER_READ:
        *t0 = counter_now();
        asm volatile("ldr %w0, [%1]" : "=r"(v) : "r"((u64)VIRT_PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_MMIO_USER_WRITE:
        *t0 = counter_now();
        asm volatile("str %w0, [%1]" : : "r"(v), "r"((u64)VIRT_PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_RO_MEMSLOT_WRITE:
        *t0 = counter_now();
        asm volatile("str %w0, [%1]" : : "r"(v), "r"((u64)VIRT_PROBE_RO_MEMSLOT + 4) : "memory");
        break;
    case SCENARIO_HYPERCALL_USER:
        *t0 = counter_now();
        asm volatile("mov x0, %1\n\thvc #0\n\tmov %0, x0" : "=r"(v) : "r"((u64)SMCCC_PROBE_USER_FN)
                     : "x0", "x1", "x2", "x3", "memory");
        break;
    case SCENARIO_PCI_MMIO_NO_EVENTFD:
    case SCENARIO_PCI_PORTIO_NO_EVENTFD:
        *t0 = counter_now();
        pci_testdev_once();
        break;
    default:
        return false;
    }
    *t3 = counter_now();
    (void)v;
    return true;
}
