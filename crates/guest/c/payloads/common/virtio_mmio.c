/* The virtio-mmio transport's steps that vblk.c and vnet.c share (virtio_mmio.h). */
#include "virtio_mmio.h"

#define MMIO_MAGIC 0x74726976 /* "virt" */
#define S_ACKNOWLEDGE 1
#define S_DRIVER 2
#define S_DRIVER_OK 4
#define S_FEATURES_OK 8

u64 vmmio_base;

u32 vmmio_rd(u32 off) { return mmio_read32(vmmio_base + off); }
void vmmio_wr(u32 off, u32 v) { mmio_write32(vmmio_base + off, v); }

bool vmmio_is(u32 device_id)
{
    return vmmio_rd(R_MAGIC) == MMIO_MAGIC && vmmio_rd(R_VERSION) == 2 && vmmio_rd(R_DEVICE_ID) == device_id;
}

void vmmio_begin(u32 *f0, u32 *f1)
{
    vmmio_wr(R_STATUS, 0);
    vmmio_wr(R_STATUS, S_ACKNOWLEDGE);
    vmmio_wr(R_STATUS, S_ACKNOWLEDGE | S_DRIVER);
    vmmio_wr(R_DEV_FEAT_SEL, 0);
    *f0 = vmmio_rd(R_DEV_FEAT);
    vmmio_wr(R_DEV_FEAT_SEL, 1);
    *f1 = vmmio_rd(R_DEV_FEAT);
}

void vmmio_set_features(u32 f0, u32 f1)
{
    vmmio_wr(R_DRV_FEAT_SEL, 0);
    vmmio_wr(R_DRV_FEAT, f0);
    vmmio_wr(R_DRV_FEAT_SEL, 1);
    vmmio_wr(R_DRV_FEAT, f1);
    vmmio_wr(R_STATUS, S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK);
}

bool vmmio_features_ok(void) { return vmmio_rd(R_STATUS) & S_FEATURES_OK; }

u32 vmmio_queue_max(u32 index)
{
    vmmio_wr(R_QUEUE_SEL, index);
    return vmmio_rd(R_QUEUE_NUM_MAX);
}

void vmmio_queue_on(u32 size, const void *desc, const void *avail, const void *used)
{
    vmmio_wr(R_QUEUE_NUM, size);
    vmmio_wr(R_DESC_LO, (u32)(u64)desc);
    vmmio_wr(R_DESC_HI, (u32)((u64)desc >> 32));
    vmmio_wr(R_AVAIL_LO, (u32)(u64)avail);
    vmmio_wr(R_AVAIL_HI, (u32)((u64)avail >> 32));
    vmmio_wr(R_USED_LO, (u32)(u64)used);
    vmmio_wr(R_USED_HI, (u32)((u64)used >> 32));
    vmmio_wr(R_QUEUE_READY, 1);
}

void vmmio_driver_ok(void) { vmmio_wr(R_STATUS, S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK); }
