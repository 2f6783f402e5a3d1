/*
 * ringer: the doorbell reliability test. cpus=N n=<rings per cpu>
 * path=user-mmio|ioeventfd-mmio|ioeventfd-pio|pv. The BSP starts N-1 APs
 * (INIT/SIPI) and, once all are in, releases every CPU at once through a
 * shared start flag. Each CPU (the BSP too) rings the chosen doorbell n
 * times as fast as it can, then reports COUNT(apic id, rings made). The BSP
 * waits for all (bounded: WAIT_CYCLES without progress), prints
 * "ringer: <total> rings from <N> cpus" and exits 0 (DONE(0)); 1 if APs did
 * not come online or stopped making progress; 2 for a bad command line.
 *
 * The host checks that its consumer counted exactly N*n rings.
 */
#include "rt.h"

#define WAIT_CYCLES (1ULL << 33)

enum { PATH_USER_MMIO, PATH_IOEVENTFD_MMIO, PATH_IOEVENTFD_PIO, PATH_PV };
static const char *const path_names[] = { "user-mmio", "ioeventfd-mmio", "ioeventfd-pio", "pv" };

static u32 path;
static u64 rings; /* per CPU */
static u32 cpus;

static volatile u32 online; /* APs in and waiting */
static volatile u32 go;     /* the start flag */
static volatile u32 done;   /* APs that rang and reported */

/* Rings made so far, per CPU slot, one cache line each (the BSP's progress view). */
static struct {
    volatile u64 n;
} __attribute__((aligned(64))) made[MAX_CPUS];

/*
 * One ring is one 32-bit store or OUT, as the probe's doorbell scenarios
 * (the MMIO ioeventfd gets PROBE_WILDCARD_VALUE so a datamatch fallback
 * matches too; pv writes the doorbell identity to the PV port).
 */
static void ring_all(u32 cpu)
{
    volatile u64 *count = &made[cpu].n;
    for (u64 i = 0; i < rings; i++) {
        switch (path) {
        case PATH_USER_MMIO:
            mmio_write32(DOORBELL_MMIO_USER, (u32)i);
            break;
        case PATH_IOEVENTFD_MMIO:
            mmio_write32(DOORBELL_MMIO_KERNEL, PROBE_WILDCARD_VALUE);
            break;
        case PATH_IOEVENTFD_PIO:
            outl(DOORBELL_PIO_PORT, PROBE_WILDCARD_VALUE);
            break;
        default:
            outl(PV_DOORBELL_PORT, DOORBELL_PV_IDENTITY);
            break;
        }
        *count = i + 1;
    }
}

void ap_main(u32 cpu, u32 apic_id)
{
    __atomic_fetch_add(&online, 1, __ATOMIC_RELEASE);
    /* The BSP sets go within its own bounded wait, or ends the VM. */
    u64 t0 = rdtsc_plain();
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {
        if (rdtsc_plain() - t0 > 2 * WAIT_CYCLES)
            return; /* parks; the BSP reports the timeout */
        cpu_relax();
    }
    ring_all(cpu);
    ucall(UCALL_COUNT, "rings", apic_id, made[cpu].n);
    __atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
}

static u64 progress(void)
{
    u64 p = __atomic_load_n(&done, __ATOMIC_ACQUIRE);
    for (u32 c = 0; c < cpus; c++)
        p += made[c].n;
    return p;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *p = cmdline_get("path");
    cpus = (u32)cmdline_u64("cpus", 1);
    rings = cmdline_u64("n", 1000);
    path = ARRAY_SIZE(path_names);
    for (u32 k = 0; k < ARRAY_SIZE(path_names); k++)
        if (p && !strcmp(p, path_names[k]))
            path = k;
    if (!p)
        path = PATH_USER_MMIO;
    if (cpus == 0 || cpus > MAX_CPUS || path == ARRAY_SIZE(path_names)) {
        printf("ringer: usage: cpus=1..%u n=<rings per cpu> path=user-mmio|ioeventfd-mmio|ioeventfd-pio|pv\n",
               MAX_CPUS);
        finish(2);
    }
    printf("ringer: cpus=%u n=%lu path=%s\n", cpus, rings, path_names[path]);

    percpu[0].apic_id = lapic_id();
    if (cpus > 1) {
        smp_start_aps();
        u64 t0 = rdtsc_plain();
        while (__atomic_load_n(&online, __ATOMIC_ACQUIRE) < cpus - 1) {
            if (rdtsc_plain() - t0 > WAIT_CYCLES) {
                printf("ringer: timeout, %u of %u APs online\n", online, cpus - 1);
                finish(1);
            }
            cpu_relax();
        }
    }

    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    ring_all(0);
    ucall(UCALL_COUNT, "rings", percpu[0].apic_id, made[0].n);

    u64 last = progress(), t0 = rdtsc_plain();
    while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < cpus - 1) {
        u64 now = progress();
        if (now != last) {
            last = now;
            t0 = rdtsc_plain();
        } else if (rdtsc_plain() - t0 > WAIT_CYCLES) {
            printf("ringer: timeout, %u of %u APs done\n", done, cpus - 1);
            finish(1);
        }
        cpu_relax();
    }

    u64 total = 0;
    for (u32 c = 0; c < cpus; c++)
        total += made[c].n;
    printf("ringer: %lu rings from %u cpus\n", total, cpus);
    finish(0);
}
