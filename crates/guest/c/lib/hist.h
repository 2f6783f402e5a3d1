/*
 * Log-linear histograms in guest memory (trapline-abi's hist.rs is the one
 * definition: the constants and struct guest_hist come from the generated
 * header). A value below HIST_SUB_COUNT has its own bucket; above, each
 * power of two is cut into HIST_SUB_COUNT buckets, so a bucket's midpoint
 * is within 0.78 % of any value in it. Recording is a count of leading
 * zeros, a shift and three stores: cheap beside an exit, and the same on
 * both architectures. The host reads the block back whole (the probe tells
 * it where with a ucall) and checks the magic and the counts before trusting it.
 */
#ifndef TRAPLINE_HIST_H
#define TRAPLINE_HIST_H

#include "lib.h"
#include "trapline_abi.h"

static inline void hist_clear(struct guest_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = ~0ULL;
    h->magic = HIST_MAGIC;
}

static inline u32 hist_bucket(u64 v)
{
    if (v < HIST_SUB_COUNT)
        return (u32)v;
    u32 exp = 63 - (u32)__builtin_clzll(v);
    u32 shift = exp - HIST_SUB_BITS;
    return (shift + 1) * HIST_SUB_COUNT + (u32)((v >> shift) & (HIST_SUB_COUNT - 1));
}

static inline void hist_record(struct guest_hist *h, u64 v)
{
    h->counts[hist_bucket(v)]++;
    h->count++;
    h->sum += v;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

#endif
