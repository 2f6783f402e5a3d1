/*
 * What vblk's shared driver (vblk.c) and its machine half
 * (payloads/<arch>/vblk_machine.c) share: the transport
 * (virtio_mmio.h) and the machine's answers.
 */
#ifndef VBLK_H
#define VBLK_H

#include "virtio_mmio.h"

/* Completions whose interrupt arrived (the machine half counts them). */
extern volatile u64 vblk_irqs;

/* The machine half: where the device is and how its interrupt reaches this CPU. */
struct vblk_machine {
    const char *line_name;      /* the device line's name for the interrupt: "gsi", "intid" */
    const char *no_device_hint; /* said after "no virtio-blk (v2) at <base>" */
    bool event_idx;             /* negotiate EVENT_IDX unless event_idx=0 (else only with event_idx=1) */
    bool read_sum;              /* the read line carries the sector's checksum */
};
extern const struct vblk_machine vblk_machine;
/* The transport's base and interrupt line; false (said why) when the machine names none. */
bool vblk_find(u64 *base, u32 *line);
/* The device's interrupt on its way to this CPU, before the device is set up. */
void vblk_irq_on(u32 line);
/* Clock ticks (clock_now()) a request may take. */
u64 vblk_wait_limit(void);
/* After each completion was seen in the used ring: account for its interrupt. */
void vblk_completed(void);

#endif
