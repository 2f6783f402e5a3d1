/*
 * A minimal virtio-blk driver over virtio-mmio (register layout 2), to
 * check and time trapline's device without Linux. It finds the first
 * device from the `virtio_mmio.device=4K@ADDR:GSI` word trapline appends,
 * routes the GSI through the IOAPIC to a handler that reads and acks
 * InterruptStatus, negotiates VERSION_1 (+EVENT_IDX unless event_idx=0),
 * sets up queue 0 and then:
 *   - reads sector 0 and prints `vblk: sector0 sum=0x.. head=<32 hex>`;
 *   - writes 512 bytes of `VBLK-WROTE-<n>` text at sector `wsector=` (1)
 *     and flushes, printing each status (`vblk: write status=S`);
 *   - with bench=N: N reads and N writes of 4 KiB and of 64 KiB, printing
 *     `vblk: bench op=read size=4096 n=N cycles=C irqs=I`.
 * Every wait is bounded; completions are seen in the used ring while
 * interrupts are enabled, and the interrupt count is printed at the end
 * (`vblk: irqs=N`). Exits 0 when every request completed as expected.
 */
#include "rt.h"

#define VECTOR 0x40
#define QSZ 16
#define WAIT_CYCLES (1ULL << 36)

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
#define F_EVENT_IDX 29
#define F_VERSION_1 32

#define D_NEXT 1
#define D_WRITE 2

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
static u8 data[65536] __attribute__((aligned(4096)));
static volatile u8 status_byte;

static u64 base;
static u32 gsi;
static volatile u64 irqs;
static u16 used_seen;
static bool event_idx;

static u32 rd(u32 off) { return mmio_read32(base + off); }
static void wr(u32 off, u32 v) { mmio_write32(base + off, v); }

DEFINE_IRQ_ENTRY(vblk_entry, vblk_handler);

void vblk_handler(void)
{
    u32 isr = rd(R_ISR);
    wr(R_ACK, isr);
    irqs++;
    lapic_eoi();
}

static bool find_device(void)
{
    const char *w = cmdline_get("virtio_mmio.device");
    if (!w)
        return false;
    while (*w && *w != '@')
        w++;
    if (*w != '@')
        return false;
    const char *end;
    u64 a, g;
    if (!parse_u64(w + 1, &end, &a) || *end != ':' || !parse_u64(end + 1, &end, &g))
        return false;
    base = a;
    gsi = (u32)g;
    return true;
}

/* One request: header, optional data (len bytes), status. Returns the status or -1 on timeout. */
static int request(u32 type, u64 sector, u32 len)
{
    hdr.type = type;
    hdr.ioprio = 0;
    hdr.sector = sector;
    status_byte = 0xff;
    int n = 0;
    descs[n] = (struct desc){ (u64)&hdr, sizeof(hdr), D_NEXT, 1 };
    n++;
    if (len) {
        descs[n] = (struct desc){ (u64)data, len, (u16)(D_NEXT | (type == 1 ? 0 : D_WRITE)), 2 };
        n++;
    } else {
        descs[0].next = 2;
    }
    descs[2] = (struct desc){ (u64)&status_byte, 1, D_WRITE, 0 };
    avail.ring[avail.idx % QSZ] = 0;
    avail.used_event = used_seen; /* interrupt for the next completion */
    asm volatile("mfence" : : : "memory");
    avail.idx++;
    asm volatile("mfence" : : : "memory");
    wr(R_QUEUE_NOTIFY, 0);
    u64 t0 = rdtsc_ordered();
    while (*(volatile u16 *)&used.idx == used_seen) {
        if (rdtsc_ordered() - t0 > WAIT_CYCLES)
            return -1;
        cpu_relax();
    }
    used_seen++;
    return status_byte;
}

static u64 bench(u32 type, u32 size, u64 n, u64 sectors)
{
    u64 span = sectors > size / 512 ? sectors - size / 512 : 0;
    u64 t0 = rdtsc_ordered();
    for (u64 i = 0; i < n; i++) {
        u64 sector = span ? (i * (size / 512)) % span : 0;
        if (request(type, sector, size) != 0)
            return 0;
    }
    return (rdtsc_ordered() - t0) / (n ? n : 1);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!find_device()) {
        printf("vblk: no virtio_mmio.device= on the command line (give trapline a --disk)\n");
        finish(2);
    }
    if (rd(R_MAGIC) != 0x74726976 || rd(R_VERSION) != 2 || rd(R_DEVICE_ID) != 2) {
        printf("vblk: no virtio-blk (v2) at 0x%lx\n", base);
        finish(3);
    }
    /* Interrupts: PICs masked, LAPIC on, GSI -> VECTOR on this CPU, edge, active high. */
    idt_set(VECTOR, vblk_entry);
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
    lapic_enable();
    ioapic_write(IOAPIC_REDTBL(gsi) + 1, lapic_id() << 24);
    ioapic_write(IOAPIC_REDTBL(gsi), VECTOR);
    asm volatile("sti" : : : "memory");

    wr(R_STATUS, 0);
    wr(R_STATUS, 1);
    wr(R_STATUS, 3);
    wr(R_DEV_FEAT_SEL, 0);
    u32 f0 = rd(R_DEV_FEAT);
    wr(R_DEV_FEAT_SEL, 1);
    u32 f1 = rd(R_DEV_FEAT);
    event_idx = cmdline_u64("event_idx", 1) && (f0 & (1u << F_EVENT_IDX));
    bool ro = f0 & (1u << F_RO);
    u32 want0 = (f0 & ((1u << F_RO) | (1u << 9) | (1u << 2))) | (event_idx ? 1u << F_EVENT_IDX : 0);
    wr(R_DRV_FEAT_SEL, 0);
    wr(R_DRV_FEAT, want0);
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
    printf("vblk: device at 0x%lx gsi %u: %lu sectors%s%s\n", base, gsi, sectors, ro ? ", read-only" : "",
           event_idx ? ", event-idx" : "");

    int bad = 0;
    int st = request(0, 0, 512);
    u32 sum = 0;
    for (int i = 0; i < 512; i++)
        sum = sum * 31 + data[i];
    printf("vblk: read status=%d sum=0x%x head=", st, sum);
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

    u64 reps = cmdline_u64("bench", 0);
    if (reps) {
        static const u32 sizes[] = { 4096, 65536 };
        for (int s = 0; s < 2; s++) {
            for (u32 type = 0; type < 2; type++) {
                if (type == 1 && ro)
                    continue;
                u64 before = irqs;
                u64 c = bench(type, sizes[s], reps, sectors);
                printf("vblk: bench op=%s size=%u n=%lu cycles=%lu irqs=%lu\n", type ? "write" : "read", sizes[s],
                       reps, c, irqs - before);
                bad |= c == 0;
            }
        }
    }
    printf("vblk: irqs=%lu\n", irqs);
    printf(bad ? "vblk: FAIL\n" : "vblk: OK\n");
    finish(bad ? 1 : 0);
}
