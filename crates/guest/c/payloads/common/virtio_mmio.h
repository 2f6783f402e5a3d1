/*
 * The virtio-mmio transport (register layout 2) and the split virtqueue's
 * ring layout, as the bare-metal drivers (vblk.c, vnet.c) drive them: one
 * device at a time, at vmmio_base. Each helper makes exactly the register
 * accesses it names, in that order (the lab counts the exits they cost).
 */
#ifndef VIRTIO_MMIO_H
#define VIRTIO_MMIO_H

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

/* A descriptor of a split virtqueue, and its flags. */
struct virtq_desc {
    u64 addr;
    u32 len;
    u16 flags;
    u16 next;
};
#define D_NEXT 1
#define D_WRITE 2

/* The available and used rings of a queue of n entries (anonymous struct types). */
#define VIRTQ_AVAIL(n)                                                                                                 \
    struct {                                                                                                           \
        u16 flags, idx, ring[n], used_event;                                                                           \
    }
#define VIRTQ_USED(n)                                                                                                  \
    struct {                                                                                                           \
        u16 flags, idx;                                                                                                \
        struct {                                                                                                       \
            u32 id, len;                                                                                               \
        } ring[n];                                                                                                     \
        u16 avail_event;                                                                                               \
    }

/* The transport the driver talks to. */
extern u64 vmmio_base;
u32 vmmio_rd(u32 off);
void vmmio_wr(u32 off, u32 v);

/* Whether the transport at vmmio_base is virtio-mmio version 2 with this DeviceID. */
bool vmmio_is(u32 device_id);
/* Reset, ACKNOWLEDGE, DRIVER; then the device's feature words 0 and 1. */
void vmmio_begin(u32 *f0, u32 *f1);
/* The driver's feature words 0 and 1, then FEATURES_OK. */
void vmmio_set_features(u32 f0, u32 f1);
/* Whether the device kept FEATURES_OK (one Status read). */
bool vmmio_features_ok(void);
/* Selects queue `index`; its QueueNumMax. */
u32 vmmio_queue_max(u32 index);
/* The selected queue: `size` entries at these rings, then QueueReady. */
void vmmio_queue_on(u32 size, const void *desc, const void *avail, const void *used);
/* DRIVER_OK: the device is live. */
void vmmio_driver_ok(void);

#endif
