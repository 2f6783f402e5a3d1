/* Per-CPU areas and stacks. Slot i belongs to the CPU started with index i (0: the boot CPU). */
#include "rt.h"

struct percpu percpu[MAX_CPUS];
/* Referenced by start.S: CPU i's stack top is cpu_stacks + (i + 1) * STACK_SIZE. */
u8 cpu_stacks[MAX_CPUS][STACK_SIZE] __attribute__((aligned(16)));

void percpu_init(u32 index)
{
    struct percpu *c = &percpu[index];
    c->index = index;
    /* The affinity fields only (bits 39:32 and 23:0), as the device tree's reg. */
    c->mpidr = read_sysreg(mpidr_el1) & 0xff00ffffffULL;
    write_sysreg(tpidr_el1, (u64)(uintptr_t)c);
}
