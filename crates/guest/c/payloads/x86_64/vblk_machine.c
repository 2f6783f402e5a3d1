/*
 * vblk's x86 machine half: the device is the one trapline names on the
 * command line (`virtio_mmio.device=4K@ADDR:GSI`), its GSI routed through
 * the IOAPIC to VECTOR on this CPU, whose handler reads InterruptStatus,
 * acks it and counts. Requests may take 2^36 TSC cycles.
 */
#include "gsi_irq.h"
#include "vblk.h"

#define VECTOR 0x40
#define WAIT_CYCLES (1ULL << 36)

const struct vblk_machine vblk_machine = {
    .line_name = "gsi",
    .no_device_hint = "",
    .event_idx = true,
    .read_sum = true,
};

DEFINE_IRQ_ENTRY(vblk_entry, vblk_handler);

void vblk_handler(void)
{
    u32 isr = vmmio_rd(R_ISR);
    vmmio_wr(R_ACK, isr);
    vblk_irqs++;
    lapic_eoi();
}

bool vblk_find(u64 *base, u32 *gsi)
{
    const char *w = cmdline_get("virtio_mmio.device");
    const char *end;
    u64 a, g;
    while (w && *w && *w != '@')
        w++;
    if (!w || *w != '@' || !parse_u64(w + 1, &end, &a) || *end != ':' || !parse_u64(end + 1, &end, &g)) {
        printf("vblk: no virtio_mmio.device= on the command line (give trapline a --disk)\n");
        return false;
    }
    *base = a;
    *gsi = (u32)g;
    return true;
}

/* GSI -> VECTOR on this CPU (gsi_irq.h). */
void vblk_irq_on(u32 gsi)
{
    gsi_irq_on(gsi, VECTOR, vblk_entry);
}

u64 vblk_wait_limit(void) { return WAIT_CYCLES; }

/* The handler counted the interrupt already. */
void vblk_completed(void) {}
