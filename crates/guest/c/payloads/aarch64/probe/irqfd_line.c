/*
 * The arm64 probe's irqfd line: SPI VIRT_IRQFD_SPI, edge-triggered and
 * routed to the boot CPU (gic.c acknowledges it; this EOIs after the
 * irqfd scenario's handler).
 */
#include "probe/probe.h"
#include "gic.h"

#define IRQFD_INTID (GIC_SPI_INTID_BASE + VIRT_IRQFD_SPI)

static void (*line_handler)(void);

static void irqfd_line_irq(u32 iar)
{
    line_handler();
    gic_eoi(iar);
}

void irqfd_line_init(void (*handler)(void))
{
    line_handler = handler;
    gic_set_handler(IRQFD_INTID, irqfd_line_irq);
}

/* The virt machine always has the SPI. */
u32 irqfd_line_check(const char *name)
{
    (void)name;
    return RESULT_OK;
}

void irqfd_line_route(void) { gic_spi_route_edge(IRQFD_INTID, this_cpu()->mpidr); }

/* The SPI stays routed: only the host raises it, and only after an IrqfdStart. */
void irqfd_line_mask(void) {}
