/*
 * The probe's anatomy pass (anatomy=<id|name>[,...] on the command line):
 * for each user path, ANATOMY_ITERATIONS single accesses, each stamped by
 * the guest just before (t0) and just after (t3), with the host's stamps
 * of the same exit (t1: KVM_RUN returned, t2: about to re-enter) read
 * from this vCPU's slot of the exit-stamp mailbox, which the lab's run
 * loop publishes when it arms it (trapline-abi's anatomy.rs has the
 * layout and the arithmetic this file repeats). Each access's legs go
 * into histograms in the guest's clock ticks: exit = t1 + offset - t0,
 * VMM = t2 - t1, entry = t3 - (t2 + offset), and its round trip t3 - t0.
 * An access counts only when the mailbox moved by exactly one publish (no
 * other exit came between) and no leg is negative on the common time line;
 * the others are counted as stale or misordered, their round trip kept.
 * One block per path, never reused, handed over with an Anatomy ucall.
 */
#include "probe.h"
#include "hist.h"

/* Paths one pass can take (each block is about 60 KiB of .bss). */
#define ANATOMY_PATHS 8
#define ANATOMY_WARMUP 32

struct anatomy_block {
    struct anatomy_header h;
    struct guest_hist legs[ANATOMY_LEGS]; /* exit, VMM, entry, round trip */
};

static struct anatomy_block blocks[ANATOMY_PATHS];

/* The ABI's scenario names by id (pci-testdev checks the name it selects). */
static const struct {
    u32 id;
    const char *name;
    u32 routine, expect;
    u64 value;
} names[] = SCENARIO_TABLE;

static const char *name_of(u32 id, const char *fallback)
{
    for (size_t k = 0; k < ARRAY_SIZE(names); k++)
        if (names[k].id == id)
            return names[k].name;
    return fallback;
}
static u32 used;

static inline u64 slot_word(u64 offset)
{
    /* The boot CPU's slot (the pass runs there); the host writes it only while this vCPU is out. */
    return *(volatile u64 *)(uintptr_t)(PROBE_ANATOMY_MAILBOX + offset);
}

/* n iterations of the path's own scenario loop (the probe's batches); its cycles per iteration. */
static u64 batch(u32 id, u64 n)
{
    u64 cycles = 0, value = 0;
    bool ok = (id == SCENARIO_PCI_MMIO_NO_EVENTFD || id == SCENARIO_PCI_PORTIO_NO_EVENTFD)
                  ? pci_run(id, n, &cycles, &value)
                  : exits_run(id, n, &cycles, &value);
    return ok ? cycles / n : 0;
}

/* The median of n values (sorts them). */
static u64 median(u64 *v, u32 n)
{
    for (u32 i = 1; i < n; i++)
        for (u32 j = i; j > 0 && v[j - 1] > v[j]; j--) {
            u64 t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

/* One path's pass into `b`; false if this architecture has no such path. */
static bool measure(u32 id, struct anatomy_block *b)
{
    u64 t0, t3;
    u64 batches[ANATOMY_ITERATIONS / ANATOMY_BATCH];

    if (!anatomy_access(id, &t0, &t3))
        return false;
    for (int k = 0; k < ANATOMY_WARMUP; k++)
        anatomy_access(id, &t0, &t3);
    memset(&b->h, 0, sizeof(b->h));
    for (u32 l = 0; l < ANATOMY_LEGS; l++)
        hist_clear(&b->legs[l]);
    u64 align = slot_word(ANATOMY_ALIGN), offset = slot_word(ANATOMY_OFFSET);
    b->h.align = align;
    b->h.offset_err = slot_word(ANATOMY_OFFSET_ERR);
    for (u64 i = 0; i < ANATOMY_ITERATIONS; i++) {
        if (i % ANATOMY_BATCH == 0)
            batches[i / ANATOMY_BATCH] = batch(id, ANATOMY_BATCH);
        u64 s0 = slot_word(ANATOMY_SEQ);
        anatomy_access(id, &t0, &t3);
        u64 s1 = slot_word(ANATOMY_SEQ), t1 = slot_word(ANATOMY_T1), t2 = slot_word(ANATOMY_T2);
        b->h.iterations++;
        hist_record(&b->legs[3], t3 - t0);
        if (s1 != s0 + 1 || align == ANATOMY_ALIGN_NONE) {
            b->h.stale++;
            continue;
        }
        s64 exit = (s64)(t1 + offset - t0), vmm = (s64)(t2 - t1), entry = (s64)(t3 - (t2 + offset));
        if (exit < 0 || vmm < 0 || entry < 0) {
            b->h.misordered++;
            continue;
        }
        hist_record(&b->legs[0], (u64)exit);
        hist_record(&b->legs[1], (u64)vmm);
        hist_record(&b->legs[2], (u64)entry);
        b->h.recorded++;
    }
    b->h.batch = median(batches, ANATOMY_ITERATIONS / ANATOMY_BATCH);
    /* The stamps' own cost: the same pair with nothing between them. */
    for (u32 k = 0; k < ANATOMY_ITERATIONS / ANATOMY_BATCH; k++) {
        anatomy_stamps(&t0, &t3);
        batches[k] = t3 - t0;
    }
    b->h.stamp_cost = median(batches, ANATOMY_ITERATIONS / ANATOMY_BATCH);
    b->h.magic = ANATOMY_MAGIC;
    return true;
}

static void anatomy_path(u32 id, const char *name)
{
    if (used == ANATOMY_PATHS) {
        ucall(UCALL_ANATOMY, name, id, 0, RESULT_UNSUPPORTED);
        return;
    }
    struct anatomy_block *b = &blocks[used];
    u32 prepared = anatomy_prepare(id, name);
    if (prepared != RESULT_OK || !measure(id, b)) {
        ucall(UCALL_ANATOMY, name, id, 0, prepared != RESULT_OK ? prepared : RESULT_UNSUPPORTED);
        anatomy_cleanup(id);
        return;
    }
    anatomy_cleanup(id);
    used++;
    printf("TRAPLINE-ANATOMY %s recorded=%lu stale=%lu misordered=%lu\n", name, (u64)b->h.recorded, (u64)b->h.stale,
           (u64)b->h.misordered);
    ucall(UCALL_ANATOMY, name, id, (u64)(uintptr_t)b, RESULT_OK);
}

/* pci-testdev's paths select their test first (testdev.c), the others need nothing. */
u32 anatomy_prepare(u32 id, const char *name)
{
    if (id == SCENARIO_PCI_MMIO_NO_EVENTFD || id == SCENARIO_PCI_PORTIO_NO_EVENTFD)
        return pci_prepare(id, name);
    return RESULT_OK;
}

void anatomy_cleanup(u32 id)
{
    if (id == SCENARIO_PCI_MMIO_NO_EVENTFD || id == SCENARIO_PCI_PORTIO_NO_EVENTFD)
        pci_cleanup();
}

/* anatomy=<id>[,<id>...]: each path in turn (NULL or empty: none). */
void anatomy_pass(const char *list)
{
    char buf[UCALL_TEXT_LEN];

    while (list && *list) {
        size_t len = 0;
        while (list[len] && list[len] != ',')
            len++;
        const char *end;
        u64 id;
        size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
        memcpy(buf, list, n);
        buf[n] = '\0';
        if (n && parse_u64(buf, &end, &id) && !*end)
            anatomy_path((u32)id, name_of((u32)id, buf));
        else if (n)
            ucall(UCALL_ANATOMY, buf, 0xffffffffu, 0, RESULT_UNSUPPORTED);
        list += len;
        if (*list == ',')
            list++;
    }
}
