/*
 * chr-testdev's exit status, driven as kvm-unit-tests' lib/chr-testdev.c
 * drives it (trapline needs `--device chr-testdev`, or QEMU's spelling):
 *   - finds the virtio console (DeviceID 3) among the virtio-mmio
 *     transports, prints `chrtestdev: console at 0x<addr> version=<v>`;
 *   - sets up its two queues the legacy way (GuestPageSize, QueueNum 128,
 *     QueueAlign, QueuePFN), writing neither Status nor features;
 *   - sends `hello` on the transmitq (no command in it), waits for its used
 *     entry and prints `chrtestdev: used=1 irq=<0|1>` (the transport's SPI
 *     pending in the GIC distributor);
 *   - sends `code=` (default 0) as decimal digits and then `q`, in two
 *     chains, as a packet may arrive in pieces: the VM should end there
 *     with status (code << 1) | 1.
 * If it is still running after the `q`, it prints `chrtestdev: still
 * running` and powers off with PSCI (status 0, which no code gives). Exit 3
 * (status 7 through the debug-exit page) when there is no console.
 */
#include "rt.h"

#define QSZ 128
#define PAGE 4096

#define R_MAGIC 0x00
#define R_VERSION 0x04
#define R_DEVICE_ID 0x08
#define R_PAGE_SIZE 0x28
#define R_QUEUE_SEL 0x30
#define R_QUEUE_NUM_MAX 0x34
#define R_QUEUE_NUM 0x38
#define R_QUEUE_ALIGN 0x3c
#define R_QUEUE_PFN 0x40
#define R_QUEUE_NOTIFY 0x50
#define R_ISR 0x60
#define R_ACK 0x64

#define GICD_ISPENDR 0x200
#define GICD_ICPENDR 0x280
#define GICD_ICFGR 0xc00

struct desc {
    u64 addr;
    u32 len;
    u16 flags;
    u16 next;
};

/* One legacy ring: descriptors, then the available ring, the used ring on
 * the next page (QueueAlign = 4096). */
struct ring {
    struct desc desc[QSZ];
    u16 avail_flags, avail_idx, avail_ring[QSZ], used_event;
    u8 pad[PAGE - QSZ * sizeof(struct desc) - (3 + QSZ) * sizeof(u16)];
    u16 used_flags, used_idx;
    struct {
        u32 id, len;
    } used_ring[QSZ];
} __attribute__((aligned(PAGE)));
_Static_assert(__builtin_offsetof(struct ring, used_flags) == PAGE, "legacy layout");

static struct ring rings[2];
static char bufs[4][16];
static u64 base;
static u32 intid;

static u32 rd(u32 off) { return mmio_read32(base + off); }
static void wr(u32 off, u32 v) { mmio_write32(base + off, v); }
static u64 dist(u32 reg) { return VIRT_GIC_DIST_BASE + reg + 4 * (intid / 32); }

static bool take_pending(void)
{
    u32 bit = 1u << (intid % 32);
    bool pending = mmio_read32(dist(GICD_ISPENDR)) & bit;
    mmio_write32(dist(GICD_ICPENDR), bit);
    return pending;
}

/* Put buffer `n` (len bytes) on the transmitq and notify it. */
static void send(u32 n, u32 len)
{
    struct ring *t = &rings[1];
    t->desc[n] = (struct desc){ (u64)bufs[n], len, 0, 0 };
    t->avail_ring[t->avail_idx % QSZ] = (u16)n;
    asm volatile("dmb ish" : : : "memory");
    t->avail_idx++;
    io_wmb();
    wr(R_QUEUE_NOTIFY, 1);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    u32 found = 0;
    for (u32 n = 0; n < VIRT_VIRTIO_MMIO_COUNT && !found; n++) {
        base = VIRT_VIRTIO_MMIO_BASE + n * VIRT_VIRTIO_MMIO_STRIDE;
        if (rd(R_MAGIC) == 0x74726976 && rd(R_DEVICE_ID) == 3) {
            found = 1;
            intid = GIC_SPI_INTID_BASE + VIRT_VIRTIO_MMIO_FIRST_SPI + n;
        }
    }
    if (!found) {
        printf("chrtestdev: no virtio console (run with --device chr-testdev)\n");
        exit(3);
    }
    printf("chrtestdev: console at 0x%lx version=%u\n", base, rd(R_VERSION));

    /* Edge-triggered, as the device tree says, so a pulse latches. */
    u64 cfg = VIRT_GIC_DIST_BASE + GICD_ICFGR + 4 * (intid / 16);
    mmio_write32(cfg, mmio_read32(cfg) | 2u << (2 * (intid % 16)));
    take_pending();

    wr(R_PAGE_SIZE, PAGE);
    for (u32 q = 0; q < 2; q++) {
        wr(R_QUEUE_SEL, q);
        if (rd(R_QUEUE_NUM_MAX) < QSZ || rd(R_QUEUE_PFN) != 0) {
            printf("chrtestdev: queue %u: max %u, pfn %u\n", q, rd(R_QUEUE_NUM_MAX), rd(R_QUEUE_PFN));
            exit(1);
        }
        wr(R_QUEUE_NUM, QSZ);
        wr(R_QUEUE_ALIGN, PAGE);
        wr(R_QUEUE_PFN, (u32)((u64)&rings[q] / PAGE));
    }

    memcpy(bufs[0], "hello", 5);
    send(0, 5);
    u64 t0 = counter_now(), limit = 10 * counter_freq();
    while (*(volatile u16 *)&rings[1].used_idx != 1 && counter_now() - t0 < limit)
        cpu_relax();
    bool irq = false;
    for (u64 t1 = counter_now(); !irq && counter_now() - t1 < 2 * counter_freq();)
        irq = take_pending();
    wr(R_ACK, rd(R_ISR));
    printf("chrtestdev: used=%u irq=%u\n", *(volatile u16 *)&rings[1].used_idx, irq);

    u64 code = cmdline_u64("code", 0);
    int len = snprintf(bufs[1], sizeof(bufs[1]), "%lu", code);
    send(1, (u32)len);
    bufs[2][0] = 'q';
    send(2, 1);
    printf("chrtestdev: still running after %luq\n", code);
    psci_system_off();
}
