/* xorshift64*: tiny, seedable, and good enough to pick ports and addresses. */
#ifndef TRAPLINE_RNG_H
#define TRAPLINE_RNG_H

#include <stdint.h>

struct rng {
    uint64_t s;
};

static inline struct rng rng_seed(uint64_t seed)
{
    /* xorshift never leaves the all-zero state, so seed=0 must map elsewhere. */
    struct rng r = { seed ? seed : 0x9e3779b97f4a7c15ULL };
    return r;
}

static inline uint64_t rng_next(struct rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform enough in [0, n) for n far below 2^64. */
static inline uint64_t rng_below(struct rng *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

#endif
