/* Per-CPU areas and stacks. Slot 0 is the BSP's; APs claim slots in arrival order. */
#include "rt.h"

struct percpu percpu[MAX_CPUS];
/* Referenced by the entry code: CPU i's stack top is cpu_stacks + (i + 1) * STACK_SIZE. */
u8 cpu_stacks[MAX_CPUS][STACK_SIZE] __attribute__((aligned(16)));

void percpu_init(u32 index)
{
    struct percpu *c = &percpu[index];
    c->self = c;
    c->index = index;
    wrmsr(MSR_GS_BASE, (u64)(uintptr_t)c);
}
