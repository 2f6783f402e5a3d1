/*
 * The smallest arm64 end-to-end check: console, device tree, command line,
 * ucall and the two ways out. exit=<n> (default 0): 0 powers off with PSCI
 * SYSTEM_OFF, anything else goes out through the debug-exit page;
 * reset=1 asks for PSCI SYSTEM_RESET instead.
 */
#include "rt.h"

int main(int argc, char **argv)
{
    int code = (int)cmdline_u64("exit", 0);
    u64 v = psci_version();

    printf("hello from trapline arm64 guest\n");
    printf("psci %u.%u, %u cpus in the device tree, ram 0x%lx+0x%lx\n", (u32)(v >> 16) & 0x7fff, (u32)v & 0xffff,
           dt.ncpus, dt.mem_base, dt.mem_size);
    for (int i = 0; i < argc; i++)
        printf("argv[%d]=%s\n", i, argv[i]);
    if (cmdline_u64("reset", 0)) {
        ucall(UCALL_DONE, "reset", (u64)(u32)code);
        psci_system_reset();
    }
    finish(code);
}
