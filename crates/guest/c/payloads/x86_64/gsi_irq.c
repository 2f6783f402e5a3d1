#include "gsi_irq.h"

void gsi_irq_on(u32 gsi, u8 vector, void (*entry)(void))
{
    idt_set(vector, entry);
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
    lapic_enable();
    ioapic_write(IOAPIC_REDTBL(gsi) + 1, lapic_id() << 24);
    ioapic_write(IOAPIC_REDTBL(gsi), vector);
    asm volatile("sti" : : : "memory");
}
