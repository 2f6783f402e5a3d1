/*
 * What vblk's shared driver (vblk.c) and its machine half
 * (payloads/<arch>/vblk_machine.c) share: the virtio-mmio registers
 * (layout 2), the transport, and the machine's answers.
 */
#ifndef VBLK_H
#define VBLK_H

#include "rt.h"

#define R_MAGIC 0x00
#define R_VERSION 0x04
#define R_DEVICE_ID 0x08
#define R_DEV_FEAT 0x10
#define R_DEV_FEAT_SEL 0x14
#define R_DRV_FEAT 0x20
#define R_DRV_FEAT_SEL 0x24
#define R_QUEUE_SEL 0x30
#define R_QUEUE_NUM_MAX 0x34
#define R_QUEUE_NUM 0x38
#define R_QUEUE_READY 0x44
#define R_QUEUE_NOTIFY 0x50
#define R_ISR 0x60
#define R_ACK 0x64
#define R_STATUS 0x70
#define R_DESC_LO 0x80
#define R_DESC_HI 0x84
#define R_AVAIL_LO 0x90
#define R_AVAIL_HI 0x94
#define R_USED_LO 0xa0
#define R_USED_HI 0xa4
#define R_CONFIG 0x100

u32 vblk_rd(u32 off);
void vblk_wr(u32 off, u32 v);
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
