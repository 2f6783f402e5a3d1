/*
 * The probe's irqfd scenario (ROUTINE_IRQFD): the host injects through an
 * irqfd bound to the line irqfd_line.c sets up (x86: IOAPIC pin
 * IRQFD_GSI; arm64: SPI VIRT_IRQFD_SPI, edge, to the boot CPU); the guest
 * stamps each interrupt with its clock and estimates the guest-host clock
 * offset with Clock ucalls (KVM gives each VM its own TSC offset, or
 * CNTVOFF on arm64).
 */
#include "probe.h"
#include "hist.h"

#define CLOCK_SAMPLES 16

/*
 * The u64 counters the host polls, the stamps and the offset estimate.
 * Each IrqfdStart gets the other counter: the host may not yet have seen
 * the last run's final count when the guest starts the next run, and
 * zeroing the counter it still polls would make it miss that ack. The
 * host handles one IrqfdStart at a time, so by the time a slot is reused
 * (two runs later) it is done with it.
 */
static struct {
    volatile u64 n;
} __attribute__((aligned(64))) irqfd_acks[2];
static volatile u64 *irqfd_count = &irqfd_acks[0].n;
static u32 irqfd_runs;
static u64 irqfd_host_stamp[IRQFD_MAX];
static u64 irqfd_guest_stamp[IRQFD_MAX];
static u64 clock_offset;     /* guest clock - host clock (mod 2^64) */
static u64 clock_offset_err; /* half the shortest Clock round trip */
static volatile u64 clock_stamp;
static struct ucall clock_msg;

/* Each injection (the line acknowledges and EOIs): stamp, count (the host waits for the count). */
static void irqfd_irq(void)
{
    u64 t = clock_now();
    volatile u64 *count = irqfd_count;
    u64 c = *count;
    if (c < IRQFD_MAX)
        irqfd_guest_stamp[c] = t;
    __atomic_store_n(count, c + 1, __ATOMIC_RELEASE);
}

/* The line's handler (called once at start-up, before any scenario). */
void irqfd_init(void) { irqfd_line_init(irqfd_irq); }

/*
 * Cristian's method: t1, Clock ucall (the host stamps its clock into
 * clock_stamp during the exit), t2. The sample with the shortest round
 * trip wins: offset = (t1 + t2) / 2 - host, uncertain by (t2 - t1) / 2.
 * The message is built beforehand so only the ucall's doorbell lies
 * between t1 and t2.
 */
static bool clock_estimate(void)
{
    u64 best = ~0ULL;

    clock_msg.magic = UCALL_MAGIC;
    clock_msg.kind = UCALL_CLOCK;
    clock_msg.args[0] = (u64)(uintptr_t)&clock_stamp;
    memcpy(clock_msg.text, "clock", 6);
    for (int k = 0; k < CLOCK_SAMPLES; k++) {
        clock_stamp = 0;
        ucall_publish();
        u64 t1 = clock_now();
        ucall_ring((u32)(uintptr_t)&clock_msg);
        u64 t2 = clock_now();
        u64 h = clock_stamp;
        if (!h)
            return false; /* no host answers Clock (QEMU) */
        if (t2 - t1 < best) {
            best = t2 - t1;
            clock_offset = t1 + (t2 - t1) / 2 - h;
        }
    }
    clock_offset_err = best / 2;
    return true;
}

/* The line there and the clock offset known: route the line to the boot CPU. */
u32 irqfd_prepare(const char *name)
{
    u32 line = irqfd_line_check(name);
    if (line != RESULT_OK)
        return line;
    if (!clock_estimate()) {
        printf("probe: %s: the host does not answer Clock ucalls\n", name);
        return RESULT_UNSUPPORTED;
    }
    printf("probe: %s: guest-host " CLOCK_NAME " offset known to +-%lu " CLOCK_UNIT "\n", name, clock_offset_err);
    irqfd_line_route();
    return RESULT_OK;
}

void irqfd_cleanup(void) { irqfd_line_mask(); }

/*
 * n host injections: IrqfdStart(k, stamps, counter), then with interrupts
 * on wait until the handler counted k (bounded: WAIT_LIMIT without
 * progress). cycles = sum of (guest stamp - host stamp - offset), value =
 * the offset's uncertainty. Only the warm-up can exceed IRQFD_MAX
 * (scenario() caps the batches); it is split into several runs.
 */
void irqfd_run(u64 n, u64 *cycles, u64 *value)
{
    int64_t sum = 0;

    for (u64 done = 0; done < n;) {
        u64 k = n - done < IRQFD_MAX ? n - done : IRQFD_MAX;
        volatile u64 *count = &irqfd_acks[irqfd_runs++ & 1].n;
        *count = 0;
        irqfd_count = count;
        ucall(UCALL_IRQFD_START, "irqfd", k, (u64)(uintptr_t)irqfd_host_stamp, (u64)(uintptr_t)count);
        irqs_on();
        u64 seen = 0, t0 = clock_poll();
        for (u64 c; (c = *count) < k; cpu_relax()) {
            if (c != seen) {
                seen = c;
                t0 = clock_poll();
            } else if (clock_poll() - t0 > WAIT_LIMIT) {
                break;
            }
        }
        irqs_off();
        barrier();
        if (*count != k) {
            printf("probe: irqfd: %lu of %lu injections arrived\n", *count, k);
            run_status = RESULT_BAD_VALUE;
            break;
        }
        for (u64 i = 0; i < k; i++) {
            int64_t d = (int64_t)(irqfd_guest_stamp[i] - irqfd_host_stamp[i] - clock_offset);
            sum += d;
            if (tails_hist) /* a recorded pass (tails.c): each injection's latency */
                hist_record(tails_hist, d > 0 ? (u64)d : 0);
        }
        done += k;
    }
    /* A negative sum means the offset estimate is worse than the latency itself. */
    *cycles = sum > 0 ? (u64)sum : 0;
    *value = clock_offset_err;
}
