/*
 * Leaving the VM. A status goes out through trapline's debug-exit page
 * (status (code << 1) | 1, as isa-debug-exit on x86); where there is none
 * (QEMU: the store aborts and is skipped) PSCI SYSTEM_OFF ends the VM.
 */
#include "rt.h"

noreturn void park(void)
{
    for (;;)
        asm volatile("wfi" : : : "memory");
}

noreturn void exit(int code)
{
    struct percpu *c = this_cpu();
    if (c)
        c->skip_faults = 1;
    io_wmb();
    mmio_write32(VIRT_DEBUG_EXIT_MMIO, (u32)code);
    psci_system_off();
}

noreturn void finish(int code)
{
    ucall(UCALL_DONE, "done", (u64)(u32)code);
    if (code == 0)
        psci_system_off();
    exit(code);
}
