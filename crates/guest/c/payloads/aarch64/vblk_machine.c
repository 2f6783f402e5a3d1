/*
 * vblk's arm64 machine half: the device is the virt machine's first
 * virtio-mmio transport; its SPI is configured edge-triggered in the GIC
 * distributor (the device tree says edge) and, after each request, its
 * pending bit there is read and cleared, so an interrupt raised through
 * KVM_IRQ_LINE or an irqfd is counted without a GIC driver. Each request
 * waits for its own interrupt before the next is sent, so the count is the
 * number of completions whose interrupt reached the GIC (the test asks for
 * all of them). Requests may take 10 s of the counter.
 */
#include "vblk.h"

/* GICv3 distributor registers (one bit / two bits per INTID). */
#define GICD_ISPENDR 0x200
#define GICD_ICPENDR 0x280
#define GICD_ICFGR 0xc00

static const u32 intid = GIC_SPI_INTID_BASE + VIRT_VIRTIO_MMIO_FIRST_SPI;

const struct vblk_machine vblk_machine = {
    .line_name = "intid",
    .no_device_hint = " (give trapline a --disk)",
    .event_idx = false,
    .read_sum = false,
};

static u64 pend_reg(u32 reg) { return VIRT_GIC_DIST_BASE + reg + 4 * (intid / 32); }

/* Whether the SPI is pending in the distributor; clears it only then.
 * Clearing it unconditionally after the read (as this once did) lost
 * edges: a pulse the host's notify worker latched between the read that
 * saw nothing and the clear was wiped unseen, so 0-2 of 3 completions'
 * interrupts were counted on the ioeventfd paths (issue 33). */
static bool take_pending(void)
{
    u32 bit = 1u << (intid % 32);
    if (!(mmio_read32(pend_reg(GICD_ISPENDR)) & bit))
        return false;
    mmio_write32(pend_reg(GICD_ICPENDR), bit);
    return true;
}

bool vblk_find(u64 *base, u32 *line)
{
    *base = VIRT_VIRTIO_MMIO_BASE;
    *line = intid;
    return true;
}

/* Edge-triggered (ICFGR: bit 1 of the INTID's two-bit field), so a pulse latches; nothing stale pending. */
void vblk_irq_on(u32 line)
{
    u64 cfg = VIRT_GIC_DIST_BASE + GICD_ICFGR + 4 * (line / 16);
    mmio_write32(cfg, mmio_read32(cfg) | 2u << (2 * (line % 16)));
    take_pending();
}

u64 vblk_wait_limit(void) { return 10 * counter_freq(); }

/*
 * The device publishes the used entry before it raises the interrupt,
 * and with --virtio-notify ioeventfd it does so from another host
 * thread: wait for the pending bit (10 s at most, as for the
 * completion) rather than look once. Then ack InterruptStatus.
 */
void vblk_completed(void)
{
    u64 t1 = counter_now(), irq_limit = 10 * counter_freq();
    for (;;) {
        if (take_pending()) {
            vblk_irqs++;
            break;
        }
        if (counter_now() - t1 > irq_limit)
            break;
        cpu_relax();
    }
    vmmio_wr(R_ACK, vmmio_rd(R_ISR));
}
