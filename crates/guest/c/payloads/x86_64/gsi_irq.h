/* A device's GSI brought to this CPU, for the x86 machine halves (vblk, vnet). */
#ifndef GSI_IRQ_H
#define GSI_IRQ_H

#include "rt.h"

/* PICs masked, LAPIC on, `gsi` -> `vector` (whose entry is `entry`) on this
 * CPU through the IOAPIC, edge, active high; IF=1. */
void gsi_irq_on(u32 gsi, u8 vector, void (*entry)(void));

#endif
