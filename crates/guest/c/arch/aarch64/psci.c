/*
 * PSCI 0.2 calls through HVC (SMC Calling Convention: function id in w0,
 * arguments in x1-x3, result in x0; x4-x17 may be clobbered under SMCCC
 * 1.0). KVM serves them in the kernel for an EL1 guest; SYSTEM_OFF and
 * SYSTEM_RESET end KVM_RUN with a system event the VMM turns into the end
 * of the run.
 */
#include "rt.h"

static u64 psci_call(u64 fn, u64 a1, u64 a2, u64 a3)
{
    register u64 x0 asm("x0") = fn;
    register u64 x1 asm("x1") = a1;
    register u64 x2 asm("x2") = a2;
    register u64 x3 asm("x3") = a3;
    asm volatile("hvc #0"
                 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
                 :
                 : "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17",
                   "memory");
    return x0;
}

u64 psci_version(void) { return psci_call(PSCI_0_2_FN_PSCI_VERSION, 0, 0, 0); }

s64 psci_cpu_on(u64 mpidr, u64 entry, u64 context)
{
    return (s64)(s32)psci_call(PSCI_0_2_FN64_CPU_ON, mpidr, entry, context);
}

noreturn void psci_system_off(void)
{
    psci_call(PSCI_0_2_FN_SYSTEM_OFF, 0, 0, 0);
    park();
}

noreturn void psci_system_reset(void)
{
    psci_call(PSCI_0_2_FN_SYSTEM_RESET, 0, 0, 0);
    park();
}

noreturn void psci_cpu_off(void)
{
    psci_call(PSCI_0_2_FN_CPU_OFF, 0, 0, 0);
    park();
}
