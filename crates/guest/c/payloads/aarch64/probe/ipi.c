/*
 * The arm64 probe's GICv3 and its IPI scenarios (ROUTINE_IPI): the
 * distributor and each CPU's redistributor and system-register CPU
 * interface, vCPU 1 serving SGIs spinning or in WFI, self-SGIs and timed
 * EOIs. KVM's vGICv3 serves all of it; with a GICv3 host the SGI write
 * (ICC_SGI1R_EL1) traps to KVM, the acknowledge and EOI stay in the CPU.
 */
#include "../../common/probe/probe.h"

/* Distributor registers (offsets from VIRT_GIC_DIST_BASE). */
#define GICD_CTLR 0x0
#define GICD_CTLR_ENABLE_G1A (1u << 1)
#define GICD_CTLR_ARE (1u << 4)
#define GICD_IGROUPR(n) (0x80 + 4 * (n))
#define GICD_ISENABLER(n) (0x100 + 4 * (n))
#define GICD_ICENABLER(n) (0x180 + 4 * (n))
#define GICD_ICFGR(n) (0xc00 + 4 * (n))
#define GICD_IROUTER(n) (0x6000 + 8 * (n))
/* Redistributor registers (offsets from a CPU's frames). */
#define GICR_WAKER 0x14
#define GICR_WAKER_PROCESSOR_SLEEP (1u << 1)
#define GICR_SGI_BASE 0x10000
#define GICR_IGROUPR0 (GICR_SGI_BASE + 0x80)
#define GICR_ISENABLER0 (GICR_SGI_BASE + 0x100)
/* INTIDs from 1020 up are special (1023: nothing pending). */
#define INTID_SPECIAL 1020

#define read_icc_iar1() read_sysreg(S3_0_C12_C12_0)
#define write_icc_eoir1(v) write_sysreg(S3_0_C12_C12_1, v)
#define write_icc_sgi1r(v) write_sysreg(S3_0_C12_C11_5, v)
#define read_icc_sre() read_sysreg(S3_0_C12_C12_5)
#define write_icc_sre(v) write_sysreg(S3_0_C12_C12_5, v)

static inline void irqs_on(void) { asm volatile("msr daifclr, #2" : : : "memory"); }
static inline void irqs_off(void) { asm volatile("msr daifset, #2" : : : "memory"); }

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

static u64 redist(u32 cpu) { return VIRT_GIC_REDIST_BASE + (u64)cpu * VIRT_GIC_REDIST_STRIDE; }

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

/* Acknowledge, count, (time and) EOI: every IRQ of the probe comes here. */
static void probe_irq(void)
{
    u32 iar = (u32)read_icc_iar1();
    u32 intid = iar & 0xffffff;
    if (intid >= INTID_SPECIAL)
        return;
    u32 cpu = this_cpu()->index;
    if (intid == VIRT_IPI_SGI)
        sgi_count[cpu].n++;
    else if (intid == GIC_SPI_INTID_BASE + VIRT_IRQFD_SPI)
        irqfd_irq();
    if (eoi_timed && cpu == 0 && intid == VIRT_IPI_SGI) {
        u64 t0 = counter_now();
        write_icc_eoir1(iar);
        u64 t1 = counter_now();
        eoi_ticks += t1 - t0;
    } else {
        write_icc_eoir1(iar);
    }
    isb();
}

void gic_eoi(u32 iar) { write_icc_eoir1(iar); }

/* This CPU's redistributor awake with the SGIs in group 1 and ours enabled; its CPU interface on. */
void gic_cpu_init(u32 cpu)
{
    u64 rd = redist(cpu);
    mmio_write32(rd + GICR_WAKER, mmio_read32(rd + GICR_WAKER) & ~GICR_WAKER_PROCESSOR_SLEEP);
    mmio_write32(rd + GICR_IGROUPR0, ~0u);
    mmio_write32(rd + GICR_ISENABLER0, 1u << VIRT_IPI_SGI);
    write_icc_sre(read_icc_sre() | 1); /* the system-register interface (RAO/WI under KVM) */
    isb();
    write_sysreg(S3_0_C4_C6_0, 0xff); /* ICC_PMR_EL1: let every priority through */
    write_sysreg(S3_0_C12_C12_7, 1);  /* ICC_IGRPEN1_EL1: group 1 on */
    isb();
}

/* An SPI in group 1, edge-triggered, routed to `mpidr`, enabled. */
void gic_spi_route_edge(u32 intid, u64 mpidr)
{
    u64 d = VIRT_GIC_DIST_BASE;
    mmio_write32(d + GICD_IGROUPR(intid / 32), mmio_read32(d + GICD_IGROUPR(intid / 32)) | 1u << (intid % 32));
    mmio_write32(d + GICD_ICFGR(intid / 16), mmio_read32(d + GICD_ICFGR(intid / 16)) | 2u << (2 * (intid % 16)));
    mmio_write64(d + GICD_IROUTER(intid), mpidr & 0xff00ffffffULL);
    mmio_write32(d + GICD_ISENABLER(intid / 32), 1u << (intid % 32));
}

/* The distributor on (affinity routing, group 1), the boot CPU's interface, the IRQ handler. */
void irq_init(void)
{
    mmio_write32(VIRT_GIC_DIST_BASE + GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_ENABLE_G1A);
    gic_cpu_init(0);
    rt_irq_handler = probe_irq;
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
    u64 t0 = counter_now(), limit = WAIT_TICKS;
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
            if (counter_now() - t0 > WAIT_TICKS)
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
