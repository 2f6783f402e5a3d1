/*
 * A minimal virtio-blk driver for the virt machine's first virtio-mmio
 * transport (register layout 2), polling the used ring. It checks that a
 * disk given with --disk reaches the guest on every notify and interrupt
 * path: it configures the transport's SPI edge-triggered in the GIC
 * distributor (the device tree says edge) and, after each request, reads
 * the SPI's pending bit there and clears it, so an interrupt raised through
 * KVM_IRQ_LINE or an irqfd is counted without a GIC driver.
 *   - reads sector 0: `vblk: read status=S head=<32 hex>`;
 *   - writes 512 bytes of `VBLK-WROTE-<n>` text at sector `wsector=` (1)
 *     and flushes, printing each status (a read-only disk must refuse the
 *     write with status 1);
 *   - prints `vblk: irqs=N` (requests whose interrupt reached the GIC) and
 *     `vblk: OK` or `vblk: FAIL`.
 * Each request waits for its own interrupt before the next is sent, so N
 * is the number of completions whose interrupt reached the GIC (the test
 * asks for all of them). Exits 0 when every request completed as expected;
 * 3 when transport 0 is no virtio-blk; 4 FEATURES_OK refused; 5 queue too
 * small; 1 otherwise. Every wait is bounded.
 */
#include "rt.h"

#define QSZ 16

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

#define F_RO 5

#define D_NEXT 1
#define D_WRITE 2

/* GICv3 distributor registers (one bit / two bits per INTID). */
#define GICD_ISPENDR 0x200
#define GICD_ICPENDR 0x280
#define GICD_ICFGR 0xc00

struct desc {
    u64 addr;
    u32 len;
    u16 flags;
    u16 next;
};

static struct desc descs[QSZ] __attribute__((aligned(4096)));
static struct {
    u16 flags, idx, ring[QSZ], used_event;
} avail __attribute__((aligned(4096)));
static struct {
    u16 flags, idx;
    struct {
        u32 id, len;
    } ring[QSZ];
    u16 avail_event;
} used __attribute__((aligned(4096)));
static struct {
    u32 type, ioprio;
    u64 sector;
} hdr __attribute__((aligned(16)));
static u8 data[4096] __attribute__((aligned(4096)));
static volatile u8 status_byte;

static const u64 base = VIRT_VIRTIO_MMIO_BASE;
static const u32 intid = GIC_SPI_INTID_BASE + VIRT_VIRTIO_MMIO_FIRST_SPI;
static u64 irqs;
static u16 used_seen;

static u32 rd(u32 off) { return mmio_read32(base + off); }
static void wr(u32 off, u32 v) { mmio_write32(base + off, v); }

static u64 pend_reg(u32 reg) { return VIRT_GIC_DIST_BASE + reg + 4 * (intid / 32); }

/* Whether the SPI is pending in the distributor; clears it only then.
 * Clearing it unconditionally after the read (as this once did) lost
 * edges: a pulse the host's notify worker latched between the read that
 * saw nothing and the clear was wiped unseen, so 0-2 of 3 completions'
 * interrupts were counted on the ioeventfd paths (issue 33). */
static bool take_pending(void)
{
    u32 bit = 1u << (intid % 32);
    if (!(mmio_read32(pend_reg(GICD_ISPENDR)) & bit))
        return false;
    mmio_write32(pend_reg(GICD_ICPENDR), bit);
    return true;
}

/* One request: header, optional data (len bytes), status. Returns the
 * status, or -1 when the device did not complete it within 10 s. */
static int request(u32 type, u64 sector, u32 len)
{
    hdr.type = type;
    hdr.ioprio = 0;
    hdr.sector = sector;
    status_byte = 0xff;
    descs[0] = (struct desc){ (u64)&hdr, sizeof(hdr), D_NEXT, 1 };
    if (len)
        descs[1] = (struct desc){ (u64)data, len, (u16)(D_NEXT | (type == 1 ? 0 : D_WRITE)), 2 };
    else
        descs[0].next = 2;
    descs[2] = (struct desc){ (u64)&status_byte, 1, D_WRITE, 0 };
    avail.ring[avail.idx % QSZ] = 0;
    asm volatile("dmb ish" : : : "memory");
    avail.idx++;
    io_wmb();
    wr(R_QUEUE_NOTIFY, 0);
    u64 t0 = counter_now(), limit = 10 * counter_freq();
    while (*(volatile u16 *)&used.idx == used_seen) {
        if (counter_now() - t0 > limit)
            return -1;
        cpu_relax();
    }
    asm volatile("dmb ish" : : : "memory");
    used_seen++;
    /* The device publishes the used entry before it raises the interrupt,
     * and with --virtio-notify ioeventfd it does so from another host
     * thread: wait for the pending bit (10 s at most, as for the
     * completion) rather than look once. */
    u64 t1 = counter_now(), irq_limit = 10 * counter_freq();
    for (;;) {
        if (take_pending()) {
            irqs++;
            break;
        }
        if (counter_now() - t1 > irq_limit)
            break;
        cpu_relax();
    }
    wr(R_ACK, rd(R_ISR));
    return status_byte;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (rd(R_MAGIC) != 0x74726976 || rd(R_VERSION) != 2 || rd(R_DEVICE_ID) != 2) {
        printf("vblk: no virtio-blk (v2) at 0x%lx (give trapline a --disk)\n", base);
        finish(3);
    }
    /* Edge-triggered (ICFGR: bit 1 of the INTID's two-bit field), so a pulse latches. */
    u64 cfg = VIRT_GIC_DIST_BASE + GICD_ICFGR + 4 * (intid / 16);
    mmio_write32(cfg, mmio_read32(cfg) | 2u << (2 * (intid % 16)));
    take_pending();

    wr(R_STATUS, 0);
    wr(R_STATUS, 1);
    wr(R_STATUS, 3);
    wr(R_DEV_FEAT_SEL, 0);
    u32 f0 = rd(R_DEV_FEAT);
    wr(R_DEV_FEAT_SEL, 1);
    u32 f1 = rd(R_DEV_FEAT);
    bool ro = f0 & (1u << F_RO);
    wr(R_DRV_FEAT_SEL, 0);
    wr(R_DRV_FEAT, f0 & ((1u << F_RO) | (1u << 9) | (1u << 2)));
    wr(R_DRV_FEAT_SEL, 1);
    wr(R_DRV_FEAT, f1 & 1);
    wr(R_STATUS, 11);
    if (!(rd(R_STATUS) & 8)) {
        printf("vblk: FEATURES_OK refused (features 0x%x%08x)\n", f1, f0);
        finish(4);
    }
    wr(R_QUEUE_SEL, 0);
    if (rd(R_QUEUE_NUM_MAX) < QSZ) {
        printf("vblk: queue too small\n");
        finish(5);
    }
    wr(R_QUEUE_NUM, QSZ);
    wr(R_DESC_LO, (u32)(u64)descs);
    wr(R_DESC_HI, (u32)((u64)descs >> 32));
    wr(R_AVAIL_LO, (u32)(u64)&avail);
    wr(R_AVAIL_HI, (u32)((u64)&avail >> 32));
    wr(R_USED_LO, (u32)(u64)&used);
    wr(R_USED_HI, (u32)((u64)&used >> 32));
    wr(R_QUEUE_READY, 1);
    wr(R_STATUS, 15);
    u64 sectors = (u64)rd(R_CONFIG) | (u64)rd(R_CONFIG + 4) << 32;
    printf("vblk: device at 0x%lx intid %u: %lu sectors%s\n", base, intid, sectors, ro ? ", read-only" : "");

    int bad = 0;
    int st = request(0, 0, 512);
    printf("vblk: read status=%d head=", st);
    for (int i = 0; i < 16; i++)
        printf("%02x", data[i]);
    printf("\n");
    bad |= st != 0;

    u64 ws = cmdline_u64("wsector", 1);
    int n = snprintf((char *)data, 512, "VBLK-WROTE-%lu", ws);
    for (int i = n; i < 512; i++)
        data[i] = (u8)i;
    st = request(1, ws, 512);
    printf("vblk: write status=%d\n", st);
    bad |= ro ? st != 1 : st != 0;
    st = request(4, 0, 0);
    printf("vblk: flush status=%d\n", st);
    bad |= st != 0;

    printf("vblk: irqs=%lu\n", irqs);
    printf(bad ? "vblk: FAIL\n" : "vblk: OK\n");
    finish(bad ? 1 : 0);
}
