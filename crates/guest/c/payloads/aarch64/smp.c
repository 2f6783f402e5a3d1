/*
 * SMP bring-up through PSCI CPU_ON. cpus=N (default: the device tree's
 * count): the boot CPU starts CPUs 1..N-1 at the MPIDRs the device tree
 * lists (KVM's default numbering without one); each checks in (ucall
 * CHECKIN(mpidr, N) and "cpu <i> online") and powers itself off (CPU_OFF).
 * The boot CPU waits, bounded by wait=<seconds> of the generic timer
 * (default 30), then checks in itself. exit 0 (SYSTEM_OFF) when all
 * arrived; 1 when a CPU_ON failed or the wait ran out.
 */
#include "rt.h"

static u32 expected;
static volatile u32 online;

void ap_main(u32 cpu, u64 mpidr)
{
    ucall(UCALL_CHECKIN, "ap", mpidr, expected);
    printf("cpu %u online (mpidr 0x%lx)\n", cpu, mpidr);
    /* Last, so the boot CPU cannot power off while this CPU is still talking. */
    __atomic_fetch_add(&online, 1, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    expected = (u32)cmdline_u64("cpus", dt.ncpus ? dt.ncpus : 1);
    u64 wait = cmdline_u64("wait", 30) * counter_freq();

    if (expected == 0 || expected > MAX_CPUS) {
        printf("smp: cpus=%u out of range 1..%u\n", expected, MAX_CPUS);
        finish(1);
    }
    for (u32 i = 1; i < expected; i++) {
        u64 mpidr = i < dt.ncpus ? dt.mpidr[i] : smp_default_mpidr(i);
        s64 ret = smp_start_cpu(i, mpidr);
        if (ret != PSCI_RET_SUCCESS) {
            printf("smp: CPU_ON of cpu %u (mpidr 0x%lx) failed: %ld\n", i, mpidr, ret);
            finish(1);
        }
    }
    u64 t0 = counter_now();
    while (__atomic_load_n(&online, __ATOMIC_ACQUIRE) < expected - 1) {
        if (counter_now() - t0 > wait) {
            printf("smp: timeout, %u of %u secondaries online\n", online, expected - 1);
            finish(1);
        }
        cpu_relax();
    }

    ucall(UCALL_CHECKIN, "bsp", this_cpu()->mpidr, expected);
    printf("cpu 0 online (boot, mpidr 0x%lx)\n", this_cpu()->mpidr);
    printf("smp: %u of %u cpus online\n", online + 1, expected);
    finish(0);
}
