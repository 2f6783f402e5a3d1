/*
 * The first C code of every CPU (from start.S, MMU on, on its own stack).
 * The boot CPU finds the device tree, builds argv from its bootargs and
 * runs main(); a secondary runs ap_main() and powers itself off.
 */
#include "rt.h"

/* The name argv[0] carries (the device tree passes only the arguments). */
#define ARGV0 "payload"

__attribute__((weak)) void ap_main(u32 cpu, u64 mpidr)
{
    (void)cpu;
    (void)mpidr;
}

/*
 * x0 is the device tree's address (trapline, Linux's boot protocol). QEMU
 * enters an ELF image that is not a Linux kernel with x0 = 0 and places its
 * device tree at the start of RAM instead, so look there too.
 */
static const void *find_fdt(u64 x0)
{
    struct dt_info probe;
    if (x0 && dt_parse((const void *)(uintptr_t)x0, &probe))
        return (const void *)(uintptr_t)x0;
    if (dt_parse((const void *)(uintptr_t)VIRT_RAM_BASE, &probe))
        return (const void *)(uintptr_t)VIRT_RAM_BASE;
    return NULL;
}

void rt_start(u32 cpu, u64 x0);

void rt_start(u32 cpu, u64 x0)
{
    percpu_init(cpu);
    if (cpu) {
        ap_main(cpu, this_cpu()->mpidr);
        psci_cpu_off();
    }
    dt_parse(find_fdt(x0), &dt);
    args_init(ARGV0, dt.bootargs);
    exit(main(rt_argc, rt_argv));
}
