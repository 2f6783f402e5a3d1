/* Leaving the VM the way kvm-unit-tests does, so any of its VMMs can run us. */
#include "rt.h"

noreturn void park(void)
{
    for (;;)
        asm volatile("cli; hlt");
}

noreturn void exit(int code)
{
    outl(DEBUG_EXIT_PORT, (u32)code);
    /* Only reached when there is no isa-debug-exit: try Bochs power-off. */
    for (const char *p = "Shutdown"; *p; p++)
        outb(BOCHS_SHUTDOWN_PORT, (u8)*p);
    park();
}

noreturn void finish(int code)
{
    ucall(UCALL_DONE, "done", (u64)(u32)code);
    exit(code);
}
