/*
 * The arm64 probe's IPI scenarios (ROUTINE_IPI) on the GICv3 (gic.c):
 * vCPU 1 serving SGIs spinning or in WFI, self-SGIs and timed EOIs.
 */
#include "probe/probe.h"
#include "gic.h"

/* vCPU 1 serves SGIs in one of these modes. */
enum { AP_WFI, AP_SPIN };
static volatile u32 ap_online;
static volatile u32 ap_mode = AP_WFI;

/* VIRT_IPI_SGI handler counts, one cache line per CPU. */
static struct {
    volatile u64 n;
} __attribute__((aligned(64))) sgi_count[MAX_CPUS];
static volatile bool eoi_timed; /* the boot CPU's handler times its EOI write */
static volatile u64 eoi_ticks;  /* sum of those EOI writes */

/* The MPIDR of CPU i as the device tree lists it (KVM's numbering without one). */
static u64 cpu_mpidr(u32 i) { return i < dt.ncpus ? dt.mpidr[i] : smp_default_mpidr(i); }

/* ICC_SGI1R_EL1 value sending `sgi` to the CPU with affinity `mpidr` (Aff0 < 16). */
static u64 sgi1r(u32 sgi, u64 mpidr)
{
    u64 aff1 = (mpidr >> 8) & 0xff, aff2 = (mpidr >> 16) & 0xff, aff3 = (mpidr >> 32) & 0xff;
    return (aff3 << 48) | (aff2 << 32) | ((u64)sgi << 24) | (aff1 << 16) | (1u << (mpidr & 0xf));
}

static void send_sgi(u32 sgi, u64 mpidr)
{
    write_icc_sgi1r(sgi1r(sgi, mpidr));
    isb();
}

/* VIRT_IPI_SGI on any CPU: count, then EOI (timed on the boot CPU for eoi). */
static void sgi_irq(u32 iar)
{
    u32 cpu = this_cpu()->index;
    sgi_count[cpu].n++;
    if (eoi_timed && cpu == 0) {
        u64 t0 = counter_now();
        gic_eoi(iar);
        u64 t1 = counter_now();
        eoi_ticks += t1 - t0;
    } else {
        gic_eoi(iar);
    }
}

/* The GIC on the boot CPU, and the SGI's handler. */
void irq_init(void)
{
    gic_init();
    gic_set_handler(VIRT_IPI_SGI, sgi_irq);
}

/* vCPU 1: serve SGIs with IRQs unmasked, spinning or in WFI as ap_mode says, forever. */
void ap_main(u32 cpu, u64 mpidr)
{
    (void)mpidr;
    gic_cpu_init(cpu);
    __atomic_store_n(&ap_online, 1, __ATOMIC_RELEASE);
    irqs_on();
    for (;;) {
        if (ap_mode == AP_WFI)
            asm volatile("wfi" : : : "memory");
        else
            cpu_relax();
    }
}

/* Waits (bounded) until *count moves past `from`; false on a timeout. */
static bool wait_past(volatile u64 *count, u64 from)
{
    u64 t0 = counter_now(), limit = WAIT_LIMIT;
    while (*count == from)
        if (counter_now() - t0 > limit)
            return false;
    return true;
}

u32 ipi_prepare(u32 id, const char *name)
{
    if (dt.ncpus < 2 && id != SCENARIO_EOI && id != SCENARIO_SELF_IPI) {
        printf("probe: %s: needs cpus=2 (the machine has %u vCPU)\n", name, dt.ncpus);
        return RESULT_UNSUPPORTED;
    }
    switch (id) {
    case SCENARIO_IPI:
    case SCENARIO_IPI_HALT:
    case SCENARIO_SELF_IPI:
    case SCENARIO_EOI:
        break;
    default:
        return RESULT_UNSUPPORTED; /* the x2APIC twins have no arm64 meaning */
    }
    if (dt.ncpus >= 2 && !ap_online) {
        s64 ret = smp_start_cpu(1, cpu_mpidr(1));
        u64 t0 = counter_now();
        while (ret == PSCI_RET_SUCCESS && !__atomic_load_n(&ap_online, __ATOMIC_ACQUIRE))
            if (counter_now() - t0 > WAIT_LIMIT)
                break;
        if (!ap_online) {
            printf("probe: %s: vCPU 1 did not come up (PSCI CPU_ON %ld)\n", name, ret);
            return RESULT_BAD_VALUE;
        }
    }
    ap_mode = id == SCENARIO_IPI_HALT ? AP_WFI : AP_SPIN;
    return RESULT_OK;
}

/*
 * ipi, ipi-halt: SGI to vCPU 1 and wait for its handler, n times (the
 * round trip). self-ipi: SGI to this CPU with IRQs on, taken by its
 * handler. eoi: the same, but the result is the sum of the EOI writes the
 * handler timed.
 */
void ipi_run(u32 id, u64 n, u64 *cycles, u64 *value)
{
    bool self = id == SCENARIO_SELF_IPI || id == SCENARIO_EOI;
    u32 target = self ? 0 : 1;
    u64 mpidr = self ? this_cpu()->mpidr : cpu_mpidr(1);
    volatile u64 *count = &sgi_count[target].n;
    u64 i = 0;

    eoi_timed = id == SCENARIO_EOI;
    eoi_ticks = 0;
    if (self)
        irqs_on();
    u64 t0 = counter_now();
    for (; i < n; i++) {
        u64 before = *count;
        send_sgi(VIRT_IPI_SGI, mpidr);
        if (!wait_past(count, before))
            break;
    }
    u64 t1 = counter_now();
    if (self)
        irqs_off();
    eoi_timed = false;
    if (i != n) {
        printf("probe: SGI %u to cpu %u: %lu of %lu arrived\n", (u32)VIRT_IPI_SGI, target, i, n);
        run_status = RESULT_BAD_VALUE;
    }
    *cycles = id == SCENARIO_EOI ? eoi_ticks : t1 - t0;
    *value = i;
}

void ipi_cleanup(u32 id)
{
    (void)id;
    ap_mode = AP_WFI;
}
