/*
 * vnet's arm64 machine half: the transports are the virt machine's
 * (VIRT_VIRTIO_MMIO_COUNT of them from VIRT_VIRTIO_MMIO_BASE, SPI
 * VIRT_VIRTIO_MMIO_FIRST_SPI + n; QEMU's virt has the same), the SPI
 * edge-triggered and routed to this CPU through the probe's GICv3 code
 * (probe/gic.c: distributor, redistributor, CPU interface, the IRQ entry
 * that acknowledges and EOIs). The clock is the virtual counter (CNTFRQ).
 */
#include "vnet.h"
#include "probe/gic.h"

const struct vnet_machine vnet_machine = {
    .line_name = "intid",
    .hint = " (give trapline a --net)",
};

static void (*device_handler)(void);

int vnet_transports(struct vnet_transport *t, int max)
{
    int n = 0;
    for (u32 i = 0; i < VIRT_VIRTIO_MMIO_COUNT && n < max; i++)
        t[n++] = (struct vnet_transport){ VIRT_VIRTIO_MMIO_BASE + i * VIRT_VIRTIO_MMIO_STRIDE,
                                          GIC_SPI_INTID_BASE + VIRT_VIRTIO_MMIO_FIRST_SPI + i };
    return n;
}

static void vnet_irq(u32 iar)
{
    device_handler();
    gic_eoi(iar);
}

void vnet_irq_on(u32 intid, void (*handler)(void))
{
    device_handler = handler;
    gic_init();
    gic_set_handler(intid, vnet_irq);
    gic_spi_route_edge(intid, this_cpu()->mpidr);
    asm volatile("msr daifclr, #2" : : : "memory");
}

u64 vnet_clock_hz(void) { return counter_freq(); }
