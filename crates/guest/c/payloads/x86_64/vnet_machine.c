/*
 * vnet's x86 machine half: the transports are the
 * `virtio_mmio.device=SIZE@ADDR:GSI` words of the command line (trapline
 * appends one per virtio device; QEMU's microvm is given them by whoever
 * runs it), the device's GSI routed through the IOAPIC to VECTOR on this
 * CPU, edge-triggered. The TSC's rate: `tsc_khz=` on the command line,
 * else the hypervisor timing leaf (0x40000010), else unknown.
 */
#include "gsi_irq.h"
#include "vnet.h"

#define VECTOR 0x41

const struct vnet_machine vnet_machine = {
    .line_name = "gsi",
    .hint = " (give trapline a --net, or the command line virtio_mmio.device= words)",
};

static void (*device_handler)(void);

DEFINE_IRQ_ENTRY(vnet_entry, vnet_irq);

void vnet_irq(void)
{
    device_handler();
    lapic_eoi();
}

int vnet_transports(struct vnet_transport *t, int max)
{
    int n = 0;
    static const char key[] = "virtio_mmio.device=";
    for (int i = 1; i < rt_argc && n < max; i++) {
        const char *w = rt_argv[i], *end;
        u64 a, g;
        if (strncmp(w, key, sizeof(key) - 1))
            continue;
        while (*w && *w != '@')
            w++;
        if (*w != '@' || !parse_u64(w + 1, &end, &a) || *end != ':' || !parse_u64(end + 1, &end, &g) || g > 23)
            continue;
        t[n++] = (struct vnet_transport){ a, (u32)g };
    }
    return n;
}

/* GSI -> VECTOR on this CPU (gsi_irq.h). */
void vnet_irq_on(u32 gsi, void (*handler)(void))
{
    device_handler = handler;
    gsi_irq_on(gsi, VECTOR, vnet_entry);
}

u64 vnet_clock_hz(void)
{
    u64 khz = cmdline_u64("tsc_khz", 0);
    if (khz)
        return khz * 1000;
    u32 r[4];
    cpuid(0x40000000, 0, r);
    if (r[0] >= 0x40000010) {
        cpuid(0x40000010, 0, r);
        return (u64)r[0] * 1000;
    }
    return 0;
}
