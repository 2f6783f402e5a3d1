/*
 * A minimal virtio-net driver over virtio-mmio (layout 2) and a UDP data
 * path to time trapline's (and QEMU's) network device from inside the
 * guest. The machine half (payloads/<arch>/vnet_machine.c) names the
 * transports and brings the interrupt in; this file finds DeviceID 1
 * among them, negotiates VERSION_1 (+MAC, STATUS, EVENT_IDX where offered;
 * no offloads, no mergeable buffers: each receive buffer holds the 12-byte
 * header and a whole 1514-byte frame), posts every receive buffer of queue
 * 0 and sends on queue 1. Then:
 *   - pairs: `pairs=` request/response pairs of `size=` payload bytes, one
 *     in flight; each round trip (send to the receive interrupt) recorded
 *     in a struct guest_hist;
 *   - bursts: `bursts=` bursts of `depth=` frames of `bsize=` bytes in
 *     flight at once, timed from the first send to the last receive.
 * `mode=echo` (a back end that reflects each frame) wants every frame back
 * byte for byte; `mode=udp` wants a UDP echo's reply at `peer_ip=` /
 * `peer_mac=` (`ip=`, `mac=`, `port=`, `sport=` for this side). Every wait
 * is bounded by `wait_ms=` (1000): a frame that does not come back is
 * counted lost, never waited for forever. Interrupts drive the waits: the
 * driver waits for the receive interrupt and then takes what the used
 * ring holds; an entry whose interrupt never came is taken after the
 * bound and counted (`missed_irqs`).
 *
 * Results: `vnet: ...` lines on the console (pairs, the histogram's
 * buckets, bursts, OK/FAIL) for peers that only see the console, and
 * COUNT ucalls for trapline (the histogram's address among them).
 * Exits 0 when nothing was lost, reordered or wrong; 1 otherwise; 2 no
 * transport named; 3 no virtio-net; 4 FEATURES_OK refused; 5 queue too
 * small; 6 a bad command line.
 */
#include "hist.h"
#include "vnet.h"

#define QMAX 128
#define BUF_SIZE 2048
#define NET_HDR 12
#define MAX_DEPTH 64

#define F_MAC 5
#define F_STATUS 16
#define F_EVENT_IDX 29
#define F_VERSION_1 0 /* in the high word */

#define AVAIL_F_NO_INTERRUPT 1
#define USED_F_NO_NOTIFY 1

typedef VIRTQ_AVAIL(QMAX) avail_ring;
typedef VIRTQ_USED(QMAX) used_ring;

/* One split virtqueue and the driver's view of it. */
struct vq {
    struct virtq_desc *desc;
    avail_ring *avail;
    used_ring *used;
    u8 (*buf)[BUF_SIZE];
    u16 size, next_avail, used_seen, notified;
    u32 index;
};

static struct virtq_desc rx_desc[QMAX] __attribute__((aligned(4096)));
static avail_ring rx_avail __attribute__((aligned(4096)));
static used_ring rx_used __attribute__((aligned(4096)));
static struct virtq_desc tx_desc[QMAX] __attribute__((aligned(4096)));
static avail_ring tx_avail __attribute__((aligned(4096)));
static used_ring tx_used __attribute__((aligned(4096)));
static u8 rx_buf[QMAX][BUF_SIZE] __attribute__((aligned(4096)));
static u8 tx_buf[QMAX][BUF_SIZE] __attribute__((aligned(4096)));
static struct vq rxq = { rx_desc, &rx_avail, &rx_used, rx_buf, 0, 0, 0, 0, 0 };
static struct vq txq = { tx_desc, &tx_avail, &tx_used, tx_buf, 0, 0, 0, 0, 1 };

static struct guest_hist rtt_hist;
static bool event_idx;
static volatile u64 irqs;
static u64 irqs_taken;
static bool rx_unsignalled;

/* What the run counted. */
static struct {
    u64 lost, reordered, bad, dup, other, missed_irqs, notifies;
} count;

static struct endpoint self, peer;
static bool udp_mode;
static u64 wait_limit;

static void on_irq(void)
{
    vmmio_wr(R_ACK, vmmio_rd(R_ISR));
    irqs++;
}

/* The event-index words sit right after the queue's `size` ring entries,
 * not after the QMAX the rings are laid out for: a device offering fewer
 * than QMAX entries looks for them there. */
static volatile u16 *used_event(struct vq *q) { return &q->avail->ring[q->size]; }
static volatile u16 *avail_event(struct vq *q) { return (volatile u16 *)&q->used->ring[q->size]; }

/* Whether the device asked to be told about avail index `now` (was `old`). */
static bool need_notify(struct vq *q, u16 old, u16 now)
{
    if (!event_idx)
        return !(*(volatile u16 *)&q->used->flags & USED_F_NO_NOTIFY);
    u16 ev = *avail_event(q);
    return (u16)(now - ev - 1) < (u16)(now - old);
}

/* Publish what was added since the last notify; ring the doorbell if the device wants it. */
static void publish(struct vq *q)
{
    if (event_idx && q == &rxq)
        *used_event(q) = q->used_seen; /* interrupt for the next frame in */
    if (event_idx && q == &txq)
        *used_event(q) = (u16)(q->next_avail + 0x7fff); /* never for a sent one */
    dma_mb();
    *(volatile u16 *)&q->avail->idx = q->next_avail;
    dma_mb();
    if (need_notify(q, q->notified, q->next_avail)) {
        vmmio_wr(R_QUEUE_NOTIFY, q->index);
        count.notifies++;
    }
    q->notified = q->next_avail;
    /* Frames the device returned before the re-arm may owe no interrupt
     * (with EVENT_IDX it looked at the old used_event): take them without one. */
    if (q == &rxq)
        rx_unsignalled = *(volatile u16 *)&q->used->idx != q->used_seen;
}

static void post_rx(u16 id)
{
    rxq.avail->ring[rxq.next_avail % rxq.size] = id;
    rxq.next_avail++;
}

/* Sent frames the device has handed back (no interrupt asked: polled). */
static void reclaim_tx(void) { txq.used_seen = *(volatile u16 *)&txq.used->idx; }

/* Each transmit slot's frame (a template of slot_size[] bytes of payload) and
 * which slot carried each recent sequence number. */
static u32 slot_size[QMAX], slot_sum[QMAX], slot_len[QMAX];
static u16 slot_of_seq[QMAX];
static u32 last_seq;
static void prepare_slots(u32 size);

/* Queue one frame (request `seq`, `size` payload bytes); false if the ring stayed full. */
static bool send(u32 seq, u32 size)
{
    u64 t0 = clock_now();
    for (;;) {
        reclaim_tx();
        if ((u16)(txq.next_avail - txq.used_seen) < txq.size)
            break;
        if (clock_now() - t0 > wait_limit)
            return false;
        cpu_relax();
    }
    u16 id = txq.next_avail % txq.size;
    u8 *b = txq.buf[id];
    if (slot_size[id] != size)
        prepare_slots(size);
    frame_stamp(b + NET_HDR, slot_sum[id], seq);
    slot_of_seq[seq % QMAX] = id;
    last_seq = seq;
    txq.desc[id] = (struct virtq_desc){ (u64)b, NET_HDR + slot_len[id], 0, 0 };
    txq.avail->ring[id] = id;
    txq.next_avail++;
    publish(&txq);
    return true;
}

/* Every transmit slot's template for `size` (the per-byte work done before the clock starts). */
static void prepare_slots(u32 size)
{
    for (u16 id = 0; id < txq.size; id++)
        if (slot_size[id] != size) {
            memset(txq.buf[id], 0, NET_HDR);
            slot_len[id] = frame_template(txq.buf[id] + NET_HDR, &self, &peer, size, &slot_sum[id]);
            slot_size[id] = size;
        }
}

/* Whether a received frame is request `seq`'s answer, byte for byte (the request is still in its slot). */
static bool answer_ok(const u8 *f, u32 len, u32 seq)
{
    u16 id = slot_of_seq[seq % QMAX];
    const u8 *req = txq.buf[id] + NET_HDR;
    if (udp_mode)
        return frame_is_reply(f, len, req, slot_len[id]);
    return len == slot_len[id] && frames_equal(f, req, len);
}

/*
 * Wait for the receive interrupt (at most wait_limit after `t0`) and
 * return how many used entries are there to take. Entries already there
 * when the interrupt was re-armed are taken at once (as Linux's driver
 * does after enabling callbacks); entries the bound finds without their
 * interrupt are taken too, and counted.
 */
static u16 rx_wait(u64 t0)
{
    for (;;) {
        u64 seen = irqs; /* before the ring: an interrupt after this read is not lost */
        u16 ready = (u16)(*(volatile u16 *)&rxq.used->idx - rxq.used_seen);
        if (ready && (seen != irqs_taken || rx_unsignalled)) {
            irqs_taken = seen;
            rx_unsignalled = false;
            return ready;
        }
        if (clock_now() - t0 > wait_limit) {
            if (ready)
                count.missed_irqs++;
            return ready;
        }
        cpu_relax();
    }
}

/* Frame bytes in each receive buffer. */
static u32 rx_len[QMAX];

/* A received frame: its sequence number (-1 for a frame that is not ours),
 * whether it answers a request too old to still be in its slot, and
 * whether its bytes are right. */
struct rx {
    s64 seq;
    bool stale, ok;
};

/* Checks a taken frame against its request (not for stale or foreign ones) and gives its buffer back. */
static bool finish_entry(u16 id, struct rx r)
{
    bool ok = r.seq < 0 || r.stale || answer_ok(rxq.buf[id] + NET_HDR, rx_len[id], (u32)r.seq);
    post_rx(id);
    return ok;
}

/* Takes the next used entry: its frame's sequence number and, with
 * `check`, its bytes against its request, the buffer given back. Without
 * `check` the caller finishes it later with finish_entry() (*id). */
static struct rx take(bool check, u16 *id_out)
{
    dma_rmb();
    u16 slot = rxq.used_seen % rxq.size;
    u32 id = rxq.used->ring[slot].id, len = rxq.used->ring[slot].len;
    rxq.used_seen++;
    struct rx r = { -1, false, false };
    *id_out = 0xffff;
    if (id < rxq.size && len > NET_HDR && len <= BUF_SIZE) {
        const u8 *f = rxq.buf[id] + NET_HDR;
        rx_len[id] = len - NET_HDR;
        r.seq = frame_seq(f, len - NET_HDR, &self, &peer);
        r.stale = r.seq >= 0 && ((u32)r.seq > last_seq || (u32)r.seq + QMAX <= last_seq);
        r.ok = true;
        *id_out = (u16)id;
        if (check)
            r.ok = finish_entry((u16)id, r);
    } else {
        count.bad++;
    }
    return r;
}

/* One request/response pair: its round trip in ticks, or 0 when it was lost. */
static u64 pair(u32 seq, u32 size, u32 *highest)
{
    u64 t0 = clock_now();
    if (!send(seq, size))
        return 0;
    for (;;) {
        u16 n = rx_wait(t0);
        if (!n)
            return 0;
        u64 t1 = clock_now();
        bool got = false;
        while (n--) {
            u16 id;
            struct rx r = take(true, &id);
            if (r.seq < 0)
                count.other++;
            else if (r.stale)
                count.reordered++; /* far too late, or never sent */
            else if (!r.ok)
                count.bad++;
            else if ((u32)r.seq == seq)
                got = true;
            else if ((u32)r.seq < *highest || (u32)r.seq < seq)
                count.reordered++; /* a late answer to an earlier (lost) request */
            else
                count.dup++;
        }
        publish(&rxq);
        if (got) {
            *highest = seq;
            return t1 - t0 ? t1 - t0 : 1;
        }
    }
}

/* Bits set in `v` (no libgcc here). */
static u32 popcount(u64 v)
{
    u32 n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* One burst of `depth` frames from `first`; the ticks it took (0 if any
 * frame was lost). The frames' bytes are checked after the clock stops
 * (their buffers held until then: the receive ring has room for a burst). */
static u64 burst(u32 first, u32 depth, u32 size)
{
    u64 seen = 0, full = depth >= 64 ? ~0ULL : (1ULL << depth) - 1;
    u32 highest = 0, held = 0;
    static u16 ids[QMAX];
    static struct rx frames[QMAX];
    u64 t0 = clock_now();
    for (u32 i = 0; i < depth; i++)
        if (!send(first + i, size))
            break;
    while (seen != full) {
        u16 n = rx_wait(t0);
        if (!n)
            break;
        while (n--) {
            u16 id;
            struct rx r = take(false, &id);
            u32 k = (u32)(r.seq - first);
            if (id != 0xffff) {
                ids[held] = id;
                frames[held++] = r;
            }
            if (r.seq < 0)
                count.other++;
            else if (r.stale || r.seq < first || k >= depth)
                count.reordered++; /* an earlier burst's frame, late */
            else if (seen & (1ULL << k))
                count.dup++;
            else {
                if (k < highest)
                    count.reordered++;
                highest = k > highest ? k : highest;
                seen |= 1ULL << k;
            }
        }
        if (held + MAX_DEPTH > rxq.size)
            break; /* never more held than the ring can spare */
        publish(&rxq);
    }
    u64 t1 = clock_now();
    for (u32 i = 0; i < held; i++)
        if (!finish_entry(ids[i], frames[i]))
            count.bad++;
    publish(&rxq);
    count.lost += (u64)depth - (u64)popcount(seen);
    return seen == full ? t1 - t0 : 0;
}

/* Status handshake, features, both queues; finishes with 4 or 5 when the device will not have them. */
static void setup(bool want_event_idx)
{
    u32 f0, f1;
    vmmio_begin(&f0, &f1);
    event_idx = want_event_idx && (f0 & (1u << F_EVENT_IDX));
    u32 want0 = (f0 & ((1u << F_MAC) | (1u << F_STATUS))) | (event_idx ? 1u << F_EVENT_IDX : 0);
    vmmio_set_features(want0, f1 & (1u << F_VERSION_1));
    if (!(f1 & 1) || !vmmio_features_ok()) {
        printf("vnet: FEATURES_OK refused (features 0x%x%08x)\n", f1, f0);
        finish(4);
    }
    if (!cmdline_get("mac") && (f0 & (1u << F_MAC)))
        for (int i = 0; i < 6; i++)
            self.mac[i] = (u8)(mmio_read8(vmmio_base + R_CONFIG + i));
    struct vq *qs[2] = { &rxq, &txq };
    for (int i = 0; i < 2; i++) {
        struct vq *q = qs[i];
        u32 max = vmmio_queue_max(q->index);
        u32 size = QMAX;
        while (size > max)
            size /= 2;
        if (size < MAX_DEPTH) { /* a whole burst in flight */
            printf("vnet: queue %u too small (max %u)\n", q->index, max);
            finish(5);
        }
        q->size = (u16)size;
        if (!event_idx && q == &txq)
            q->avail->flags = AVAIL_F_NO_INTERRUPT;
        vmmio_queue_on(size, q->desc, q->avail, q->used);
    }
    for (u16 i = 0; i < rxq.size; i++) {
        rxq.desc[i] = (struct virtq_desc){ (u64)rxq.buf[i], BUF_SIZE, D_WRITE, 0 };
        post_rx(i);
    }
    vmmio_driver_ok();
    publish(&rxq);
}

/* The transport whose DeviceID is 1, or finishes with 2 or 3. */
static u32 find_device(void)
{
    static struct vnet_transport t[VNET_MAX_TRANSPORTS];
    int n = vnet_transports(t, VNET_MAX_TRANSPORTS);
    if (n <= 0) {
        printf("vnet: no virtio-mmio transport named%s\n", vnet_machine.hint);
        finish(2);
    }
    for (int i = 0; i < n; i++) {
        vmmio_base = t[i].base;
        if (vmmio_is(1))
            return t[i].line;
    }
    printf("vnet: no virtio-net (v2) among %d transports%s\n", n, vnet_machine.hint);
    finish(3);
}

/* The command line's endpoints; false (said why) for a value it cannot read. */
static bool endpoints(void)
{
    static const u8 mac0[6] = { 0x02, 0x74, 0x6c, 0x00, 0x00, 0x01 }, peer0[6] = { 0x02, 0x74, 0x6c, 0x00, 0x00, 0x02 };
    memcpy(self.mac, mac0, 6);
    memcpy(peer.mac, peer0, 6);
    self.ip = 0x0a000102; /* 10.0.1.2 */
    peer.ip = 0x0a000101;
    self.port = (u16)cmdline_u64("sport", 40000);
    peer.port = (u16)cmdline_u64("port", 7777);
    const char *v;
    if ((v = cmdline_get("mac")) && !parse_mac(v, self.mac))
        return printf("vnet: bad mac=%s\n", v), false;
    if ((v = cmdline_get("peer_mac")) && !parse_mac(v, peer.mac))
        return printf("vnet: bad peer_mac=%s\n", v), false;
    if ((v = cmdline_get("ip")) && !parse_ipv4(v, &self.ip))
        return printf("vnet: bad ip=%s\n", v), false;
    if ((v = cmdline_get("peer_ip")) && !parse_ipv4(v, &peer.ip))
        return printf("vnet: bad peer_ip=%s\n", v), false;
    v = cmdline_get("mode");
    if (v && strcmp(v, "echo") && strcmp(v, "udp"))
        return printf("vnet: bad mode=%s (echo or udp)\n", v), false;
    udp_mode = v && !strcmp(v, "udp");
    return true;
}

/* The histogram's quantile q/1000 as its bucket's midpoint (the host reads the buckets themselves). */
static u64 quantile(const struct guest_hist *h, u64 q)
{
    u64 rank = (h->count * q + 999) / 1000, seen = 0;
    if (!h->count)
        return 0;
    if (!rank)
        rank = 1;
    for (u32 i = 0; i < HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            u32 row = i / HIST_SUB_COUNT, sub = i % HIST_SUB_COUNT;
            u64 lo = row ? (u64)(HIST_SUB_COUNT + sub) << (row - 1) : sub;
            u64 mid = row ? lo + ((1ULL << (row - 1)) - 1) / 2 : lo;
            return mid < h->min ? h->min : mid > h->max ? h->max : mid;
        }
    }
    return h->max;
}

/* The histogram on the console: its totals, then 16 non-empty buckets (index:count) a line. */
static void print_hist(const char *name, const struct guest_hist *h)
{
    printf("vnet: hist %s count=%lu min=%lu max=%lu sum=%lu\n", name, (u64)h->count, (u64)(h->count ? h->min : 0),
           (u64)h->max, (u64)h->sum);
    u32 k = 0;
    for (u32 i = 0; i < HIST_BUCKETS; i++) {
        if (!h->counts[i])
            continue;
        if (k % 16 == 0)
            printf("vnet: hist %s b=", name);
        printf("%s%u:%u", k % 16 ? "," : "", i, h->counts[i]);
        if (++k % 16 == 0)
            printf("\n");
    }
    if (k % 16)
        printf("\n");
}

static void run_pairs(u64 n, u64 warmup, u32 size, u32 *seq)
{
    u32 highest = 0;
    prepare_slots(size);
    for (u64 i = 0; i < warmup; i++)
        if (!pair((*seq)++, size, &highest))
            count.lost++;
    hist_clear(&rtt_hist);
    u64 lost0 = count.lost;
    for (u64 i = 0; i < n; i++) {
        u64 t = pair((*seq)++, size, &highest);
        if (t)
            hist_record(&rtt_hist, t);
        else
            count.lost++;
    }
    printf("vnet: pairs n=%lu size=%u lost=%lu p50=%lu p99=%lu max=%lu\n", n, size, count.lost - lost0,
           quantile(&rtt_hist, 500), quantile(&rtt_hist, 990), (u64)rtt_hist.max);
    print_hist("rtt", &rtt_hist);
    ucall(UCALL_COUNT, "vnet-rtt-hist", 1, (u64)&rtt_hist);
    ucall(UCALL_COUNT, "vnet-rtt", 2, rtt_hist.count, quantile(&rtt_hist, 500), quantile(&rtt_hist, 990),
          rtt_hist.max);
}

static void run_bursts(u64 n, u32 depth, u32 size, u32 *seq)
{
    u64 ticks = 0, whole = 0;
    prepare_slots(size);
    for (u64 i = 0; i < n; i++) {
        u64 t = burst(*seq, depth, size);
        *seq += depth;
        ticks += t;
        whole += t != 0;
    }
    printf("vnet: bursts n=%lu depth=%u size=%u whole=%lu ticks=%lu\n", n, depth, size, whole, ticks);
    ucall(UCALL_COUNT, "vnet-bursts", 3, whole * depth, ticks, (u64)size);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!endpoints())
        finish(6);
    u64 pairs_n = cmdline_u64("pairs", 1000), warmup = cmdline_u64("warmup", 16);
    u64 bursts_n = cmdline_u64("bursts", 100), depth = cmdline_u64("depth", 32);
    u32 size = (u32)cmdline_u64("size", 64), bsize = (u32)cmdline_u64("bsize", UDP_MAX_PAYLOAD);
    if (depth < 1 || depth > MAX_DEPTH || size > UDP_MAX_PAYLOAD || bsize > UDP_MAX_PAYLOAD) {
        printf("vnet: depth= is 1 to %u, size= and bsize= at most %u\n", MAX_DEPTH, UDP_MAX_PAYLOAD);
        finish(6);
    }
    size = size < VNET_PAYLOAD_MIN ? VNET_PAYLOAD_MIN : size;
    bsize = bsize < VNET_PAYLOAD_MIN ? VNET_PAYLOAD_MIN : bsize;
    u64 hz = vnet_clock_hz();
    /* Without a known rate, 2^31 ticks: about a second at the clocks these hosts have. */
    wait_limit = hz ? hz / 1000 * cmdline_u64("wait_ms", 1000) : 1ULL << 31;
    u32 line = find_device();
    vnet_irq_on(line, on_irq);
    setup(cmdline_u64("event_idx", 1) != 0);
    u16 link = (u16)(mmio_read8(vmmio_base + R_CONFIG + 6) | mmio_read8(vmmio_base + R_CONFIG + 7) << 8);
    printf("vnet: device at 0x%lx %s %u mac %02x:%02x:%02x:%02x:%02x:%02x queues %u/%u%s mode %s link %u clock_hz=%lu\n",
           vmmio_base, vnet_machine.line_name, line, self.mac[0], self.mac[1], self.mac[2], self.mac[3], self.mac[4],
           self.mac[5], rxq.size, txq.size, event_idx ? " event-idx" : "", udp_mode ? "udp" : "echo", link & 1, hz);

    u32 seq = 1;
    run_pairs(pairs_n, warmup, size, &seq);
    if (bursts_n)
        run_bursts(bursts_n, (u32)depth, bsize, &seq);
    printf("vnet: lost=%lu reordered=%lu bad=%lu dup=%lu other=%lu irqs=%lu missed_irqs=%lu notifies=%lu\n",
           count.lost, count.reordered, count.bad, count.dup, count.other, irqs, count.missed_irqs,
           count.notifies);
    ucall(UCALL_COUNT, "vnet-lost", 4, count.lost, count.reordered, count.bad);
    bool bad = count.lost || count.reordered || count.bad || count.dup;
    printf(bad ? "vnet: FAIL\n" : "vnet: OK\n");
    finish(bad ? 1 : 0);
}
