/* The arm64 probe's GICv3 (see gic.h). */
#include "probe/probe.h"
#include "gic.h"

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

/* The INTIDs the probe serves and their handlers (an SGI and the irqfd SPI). */
#define MAX_HANDLERS 4
static struct {
    u32 intid;
    void (*fn)(u32 iar);
} handlers[MAX_HANDLERS];
static u32 nhandlers;

static u64 redist(u32 cpu) { return VIRT_GIC_REDIST_BASE + (u64)cpu * VIRT_GIC_REDIST_STRIDE; }

void gic_set_handler(u32 intid, void (*handler)(u32 iar))
{
    if (nhandlers < MAX_HANDLERS)
        handlers[nhandlers++] = (typeof(handlers[0])){ intid, handler };
}

/* Acknowledge and hand over to the INTID's handler (which EOIs); an INTID nobody serves is just ended. */
static void gic_irq(void)
{
    u32 iar = (u32)read_icc_iar1();
    u32 intid = iar & 0xffffff;
    if (intid >= INTID_SPECIAL)
        return;
    u32 k = 0;
    while (k < nhandlers && handlers[k].intid != intid)
        k++;
    if (k < nhandlers)
        handlers[k].fn(iar);
    else
        gic_eoi(iar);
    isb();
}

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

void gic_spi_route_edge(u32 intid, u64 mpidr)
{
    u64 d = VIRT_GIC_DIST_BASE;
    mmio_write32(d + GICD_IGROUPR(intid / 32), mmio_read32(d + GICD_IGROUPR(intid / 32)) | 1u << (intid % 32));
    mmio_write32(d + GICD_ICFGR(intid / 16), mmio_read32(d + GICD_ICFGR(intid / 16)) | 2u << (2 * (intid % 16)));
    mmio_write64(d + GICD_IROUTER(intid), mpidr & 0xff00ffffffULL);
    mmio_write32(d + GICD_ISENABLER(intid / 32), 1u << (intid % 32));
}

void gic_init(void)
{
    mmio_write32(VIRT_GIC_DIST_BASE + GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_ENABLE_G1A);
    gic_cpu_init(0);
    rt_irq_handler = gic_irq;
}
