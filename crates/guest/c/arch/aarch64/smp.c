/* Secondary CPUs: started with PSCI CPU_ON at secondary_entry (start.S). */
#include "rt.h"

s64 smp_start_cpu(u32 index, u64 mpidr)
{
    if (index == 0 || index >= MAX_CPUS)
        return -2; /* PSCI INVALID_PARAMETERS */
    return psci_cpu_on(mpidr, (u64)(uintptr_t)secondary_entry, index);
}

/* KVM's reset MPIDR_EL1 for vCPU i: Aff0 = i % 16, Aff1 = i / 16 (arch/arm64/kvm/sys_regs.c reset_mpidr). */
u64 smp_default_mpidr(u32 index) { return (index & 0xf) | ((u64)(index >> 4) & 0xff) << 8; }
