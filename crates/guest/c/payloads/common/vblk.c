/*
 * A minimal virtio-blk driver over virtio-mmio (register layout 2), to
 * check and time trapline's device without Linux. The machine half
 * (payloads/<arch>/vblk_machine.c) says where the device is and brings
 * its interrupt in: on x86 the `virtio_mmio.device=4K@ADDR:GSI` word
 * trapline appends and an IOAPIC route to a handler that acks
 * InterruptStatus; on arm64 transport 0 and its SPI's pending bit in the
 * GIC distributor, looked at after each request. The driver negotiates
 * VERSION_1 (+EVENT_IDX where the machine half asks for it, event_idx=
 * overrides), sets up queue 0 and then:
 *   - reads sector 0 and prints `vblk: read status=S [sum=0x..] head=<32 hex>`;
 *   - writes 512 bytes of `VBLK-WROTE-<n>` text at sector `wsector=` (1)
 *     and flushes, printing each status (`vblk: write status=S`; a
 *     read-only disk must refuse the write with status 1);
 *   - with bench=N: N reads and N writes of 4 KiB and of 64 KiB, printing
 *     `vblk: bench op=read size=4096 n=N cycles=C irqs=I`.
 * One request is in flight at a time. Every wait is bounded; the interrupt
 * count is printed at the end (`vblk: irqs=N`). Exits 0 when every request
 * completed as expected; 2 no device named; 3 no virtio-blk there; 4
 * FEATURES_OK refused; 5 queue too small; 1 otherwise.
 */
#include "vblk.h"

#define QSZ 16

#define F_RO 5
#define F_EVENT_IDX 29

static struct virtq_desc descs[QSZ] __attribute__((aligned(4096)));
static VIRTQ_AVAIL(QSZ) avail __attribute__((aligned(4096)));
static VIRTQ_USED(QSZ) used __attribute__((aligned(4096)));
static struct {
    u32 type, ioprio;
    u64 sector;
} hdr __attribute__((aligned(16)));
static u8 data[65536] __attribute__((aligned(4096)));
static volatile u8 status_byte;

static u32 line;
volatile u64 vblk_irqs;
static u16 used_seen;
static bool event_idx;

/* One request: header, optional data (len bytes), status. Returns the status or -1 on timeout. */
static int request(u32 type, u64 sector, u32 len)
{
    hdr.type = type;
    hdr.ioprio = 0;
    hdr.sector = sector;
    status_byte = 0xff;
    descs[0] = (struct virtq_desc){ (u64)&hdr, sizeof(hdr), D_NEXT, 1 };
    if (len)
        descs[1] = (struct virtq_desc){ (u64)data, len, (u16)(D_NEXT | (type == 1 ? 0 : D_WRITE)), 2 };
    else
        descs[0].next = 2;
    descs[2] = (struct virtq_desc){ (u64)&status_byte, 1, D_WRITE, 0 };
    avail.ring[avail.idx % QSZ] = 0;
    avail.used_event = used_seen; /* interrupt for the next completion (with EVENT_IDX) */
    dma_mb();
    avail.idx++;
    io_wmb();
    vmmio_wr(R_QUEUE_NOTIFY, 0);
    u64 t0 = clock_now(), limit = vblk_wait_limit();
    while (*(volatile u16 *)&used.idx == used_seen) {
        if (clock_now() - t0 > limit)
            return -1;
        cpu_relax();
    }
    dma_rmb();
    used_seen++;
    vblk_completed();
    return status_byte;
}

static u64 bench(u32 type, u32 size, u64 n, u64 sectors)
{
    u64 span = sectors > size / 512 ? sectors - size / 512 : 0;
    u64 t0 = clock_now();
    for (u64 i = 0; i < n; i++) {
        u64 sector = span ? (i * (size / 512)) % span : 0;
        if (request(type, sector, size) != 0)
            return 0;
    }
    return (clock_now() - t0) / (n ? n : 1);
}

/* Status handshake, features and queue 0; finishes with 4 or 5 when the device will not have them. Returns RO. */
static bool setup(void)
{
    u32 f0, f1;
    vmmio_begin(&f0, &f1);
    event_idx = cmdline_u64("event_idx", vblk_machine.event_idx) && (f0 & (1u << F_EVENT_IDX));
    bool ro = f0 & (1u << F_RO);
    u32 want0 = (f0 & ((1u << F_RO) | (1u << 9) | (1u << 2))) | (event_idx ? 1u << F_EVENT_IDX : 0);
    vmmio_set_features(want0, f1 & 1);
    if (!vmmio_features_ok()) {
        printf("vblk: FEATURES_OK refused (features 0x%x%08x)\n", f1, f0);
        finish(4);
    }
    if (vmmio_queue_max(0) < QSZ) {
        printf("vblk: queue too small\n");
        finish(5);
    }
    vmmio_queue_on(QSZ, descs, &avail, &used);
    vmmio_driver_ok();
    return ro;
}

/* Sector 0, then a write at wsector= and a flush; nonzero if any of them went wrong. */
static int check(bool ro)
{
    int bad = 0;
    int st = request(0, 0, 512);
    printf("vblk: read status=%d", st);
    if (vblk_machine.read_sum) {
        u32 sum = 0;
        for (int i = 0; i < 512; i++)
            sum = sum * 31 + data[i];
        printf(" sum=0x%x", sum);
    }
    printf(" head=");
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
    return bad;
}

/* bench=N: mean clock ticks per request of each kind; nonzero if one failed. */
static int benchmark(u64 reps, u64 sectors, bool ro)
{
    static const u32 sizes[] = { 4096, 65536 };
    int bad = 0;
    for (int s = 0; s < 2; s++) {
        for (u32 type = 0; type < 2; type++) {
            if (type == 1 && ro)
                continue;
            u64 before = vblk_irqs;
            u64 c = bench(type, sizes[s], reps, sectors);
            printf("vblk: bench op=%s size=%u n=%lu cycles=%lu irqs=%lu\n", type ? "write" : "read", sizes[s], reps, c,
                   vblk_irqs - before);
            bad |= c == 0;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!vblk_find(&vmmio_base, &line))
        finish(2);
    if (!vmmio_is(2)) {
        printf("vblk: no virtio-blk (v2) at 0x%lx%s\n", vmmio_base, vblk_machine.no_device_hint);
        finish(3);
    }
    vblk_irq_on(line);
    bool ro = setup();
    u64 sectors = (u64)vmmio_rd(R_CONFIG) | (u64)vmmio_rd(R_CONFIG + 4) << 32;
    printf("vblk: device at 0x%lx %s %u: %lu sectors%s%s\n", vmmio_base, vblk_machine.line_name, line, sectors,
           ro ? ", read-only" : "", event_idx ? ", event-idx" : "");

    int bad = check(ro);
    u64 reps = cmdline_u64("bench", 0);
    if (reps)
        bad |= benchmark(reps, sectors, ro);
    printf("vblk: irqs=%lu\n", vblk_irqs);
    printf(bad ? "vblk: FAIL\n" : "vblk: OK\n");
    finish(bad ? 1 : 0);
}
