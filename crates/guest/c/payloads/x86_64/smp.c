/*
 * SMP bring-up check. The BSP broadcasts INIT+SIPI, every AP checks in
 * (ucall CHECKIN + "cpu <id> online") and the BSP waits, TSC-bounded, for
 * N-1 of them. N is the machine's CPU count as its firmware interface
 * tells it (fw_cfg key 0x05, as kvm-unit-tests reads it), or cpus=N to
 * wait for another count. exit 0 when all arrived, 1 on timeout.
 */
#include "rt.h"

#define WAIT_CYCLES (1ULL << 33)

static u32 expected;
static volatile u32 online;

void ap_main(u32 cpu, u32 apic_id)
{
    (void)cpu;
    ucall(UCALL_CHECKIN, "ap", apic_id, expected);
    printf("cpu %u online\n", apic_id);
    /* Last, so the BSP cannot exit while this AP is still talking. */
    __atomic_fetch_add(&online, 1, __ATOMIC_RELEASE);
}

/* The CPU count fw_cfg announces; 1 on a machine without fw_cfg. */
static u32 machine_cpus(void)
{
    char sig[4];
    fwcfg_read_bytes(FW_CFG_SIGNATURE, sig, sizeof(sig));
    if (memcmp(sig, "QEMU", sizeof(sig)))
        return 1;
    return (u32)fwcfg_read(FW_CFG_NB_CPUS, 2);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    expected = (u32)cmdline_u64("cpus", machine_cpus());
    if (expected == 0 || expected > MAX_CPUS) {
        printf("smp: cpus=%u out of range 1..%u\n", expected, MAX_CPUS);
        finish(1);
    }

    if (expected > 1) {
        smp_start_aps();
        u64 t0 = rdtsc_ordered();
        while (__atomic_load_n(&online, __ATOMIC_ACQUIRE) < expected - 1) {
            if (rdtsc_ordered() - t0 > WAIT_CYCLES) {
                printf("smp: timeout, %u of %u APs online\n", online, expected - 1);
                finish(1);
            }
            cpu_relax();
        }
    } else {
        percpu[0].apic_id = lapic_id();
    }

    ucall(UCALL_CHECKIN, "bsp", percpu[0].apic_id, expected);
    printf("cpu %u online (bsp)\n", percpu[0].apic_id);
    printf("smp: %u of %u cpus online\n", online + 1, expected);
    finish(0);
}
