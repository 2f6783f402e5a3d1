/*
 * Tails: after a scenario's timed batches (untouched, so their medians do
 * not move), a recorded pass of min(final batch's n, TAILS_SAMPLE_CAP)
 * iterations, each run alone through the scenario's own loop with n = 1:
 * the loop's clock pair (LOOP(): x86 lfence;rdtsc, arm64 isb;cntvct)
 * stamps exactly one operation, and its cycles go into a log-linear
 * histogram (c/lib/hist.h) in this file's block. irqfd records instead
 * each injection's latency from the stamps its batch already takes
 * (irqfd.c, through tails_hist), so recording adds nothing to what it times.
 *
 * A Hist ucall hands the block to the host, which reads it back, checks
 * it and sets tails_ack; the next pass waits for that before clearing the
 * block (bounded by WAIT_LIMIT). A host that does not answer ucalls with
 * memory writes (QEMU, kvmtool: it only reads the serial line) is found
 * once at start-up with a Clock ucall, and there no pass runs at all.
 *
 * The stamp pair's own cost, the median of STAMP_SAMPLES empty stamped
 * iterations (noop with n = 1), is measured once and sent with every
 * block: values are raw per-iteration cycles, stamp pair included.
 */
#include "probe.h"
#include "hist.h"

#define STAMP_SAMPLES 255

static struct guest_hist tails_block;
static volatile u64 tails_ack = 1; /* 1: the host has read the block (or none was sent) */
static volatile u64 tails_clock;   /* the host's answer to the start-up Clock ucall */
static bool tails_host;            /* whether the host reads blocks back (trapline) */
static u64 stamp_cost;

struct guest_hist *tails_hist;

/* The median of STAMP_SAMPLES empty stamped iterations (insertion sort: 255 values, once). */
static u64 stamp_median(void)
{
    static u64 v[STAMP_SAMPLES];
    u64 value;

    for (u32 k = 0; k < STAMP_SAMPLES; k++) {
        exits_run(SCENARIO_NOOP, 1, &v[k], &value);
        for (u32 j = k; j > 0 && v[j - 1] > v[j]; j--) {
            u64 t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    }
    return v[STAMP_SAMPLES / 2];
}

void tails_init(void)
{
    tails_clock = 0;
    ucall(UCALL_CLOCK, "tails", (u64)(uintptr_t)&tails_clock);
    tails_host = tails_clock != 0;
    if (!tails_host) {
        printf("probe: tails: the host reads no blocks back; no recorded pass\n");
        return;
    }
    stamp_cost = stamp_median();
    printf("probe: tails: up to %lu iterations per scenario; stamp pair %lu " CLOCK_UNIT "\n",
           (u64)TAILS_SAMPLE_CAP, stamp_cost);
}

/* Whether the host has read the last block; false (and no more passes) if it never does. */
static bool block_free(void)
{
    u64 t0 = clock_poll();
    while (!__atomic_load_n(&tails_ack, __ATOMIC_ACQUIRE)) {
        if (clock_poll() - t0 > WAIT_LIMIT) {
            printf("probe: tails: the host did not read the last block back; no more passes\n");
            tails_host = false;
            return false;
        }
        cpu_relax();
    }
    return true;
}

void tails_record(u32 id, const char *name, u64 n, bool self_stamped, u64 (*one)(const void *), const void *ctx)
{
    if (!tails_host || !block_free())
        return;
    u64 k = n < TAILS_SAMPLE_CAP ? n : TAILS_SAMPLE_CAP;
    hist_clear(&tails_block);
    run_status = RESULT_OK;
    if (self_stamped) {
        u64 cycles, value;
        tails_hist = &tails_block;
        irqfd_run(k, &cycles, &value);
        tails_hist = 0;
    } else {
        for (u64 i = 0; i < k && run_status == RESULT_OK; i++)
            hist_record(&tails_block, one(ctx));
    }
    if (run_status != RESULT_OK) {
        printf("probe: tails: %s: the recorded pass failed; not recorded\n", name);
        return;
    }
    tails_ack = 0;
    ucall(UCALL_HIST, name, id, (u64)(uintptr_t)&tails_block, (u64)(uintptr_t)&tails_ack, stamp_cost, k);
}
