/*
 * The x86 probe's irqfd line: IOAPIC pin IRQFD_GSI, delivered as
 * IRQFD_VECTOR to the BSP (fixed, physical, edge, active high). The entry
 * calls the irqfd scenario's handler, then EOIs.
 */
#include "probe/probe.h"

static void (*line_handler)(void);

DEFINE_IRQ_ENTRY(irqfd_entry, irqfd_line_handler);

void irqfd_line_handler(void)
{
    line_handler();
    apic_eoi();
}

void irqfd_line_init(void (*handler)(void))
{
    line_handler = handler;
    idt_set(IRQFD_VECTOR, irqfd_entry);
}

/* The BSP's APIC on (the PICs masked: GSI 10 reaches the CPU only through the IOAPIC), and the pin there. */
u32 irqfd_line_check(const char *name)
{
    bsp_apic_on();
    u32 ver = ioapic_read(IOAPIC_VER);
    if (ver == 0 || ver == ~0u || ((ver >> 16) & 0xff) < IRQFD_GSI) {
        printf("probe: %s: no IOAPIC with pin %u (version register 0x%x)\n", name, (u32)IRQFD_GSI, ver);
        return RESULT_UNSUPPORTED;
    }
    return RESULT_OK;
}

/* High dword first, unmasked last. */
void irqfd_line_route(void)
{
    ioapic_write(IOAPIC_REDTBL(IRQFD_GSI) + 1, percpu[0].apic_id << 24);
    ioapic_write(IOAPIC_REDTBL(IRQFD_GSI), IRQFD_VECTOR);
}

void irqfd_line_mask(void) { ioapic_write(IOAPIC_REDTBL(IRQFD_GSI), IOAPIC_MASKED | IRQFD_VECTOR); }
