/*
 * The exit-cost lab's probe. For each scenario in s=<id|name>[,...]: warm
 * up, then time batches of n = min, 2*min, ... iterations (ucall BEGIN, TSC,
 * loop, TSC, ucall RESULT) until a batch takes goal cycles or n reaches max,
 * and print the final batch as a TRAPLINE-RESULT line for runners that only
 * see the serial console (QEMU).
 *
 * This file is the harness; probe.h says where each group of scenarios
 * lives. Every loop is the same three instructions (inc; cmp; jne) around one
 * operation, written in asm so the compiler cannot reshape one scenario's
 * loop differently from noop's: noop's cost can then be subtracted.
 *
 * Which routine runs a scenario and which value its loop must read back
 * are fields of its entry in SCENARIO_TABLE, generated from the ABI record
 * (trapline-abi's `scenarios!` table: Routine, Expect, and the value
 * Expect::value() gives); the harness looks the entry up once and
 * dispatches on those fields, never on id ranges.
 *
 * ROUTINE_PCI scenarios have a per-scenario setup before the warm-up
 * (prepare(): find pci-testdev through CF8/CFC, select its test) and a
 * teardown after the last batch (deselect); see pci_prepare().
 *
 * ROUTINE_IPI and ROUTINE_IRQFD scenarios are C loops, not the shared asm:
 * each iteration waits for an interrupt handler, and every wait is bounded
 * by a TSC deadline (a timeout is reported as BadValue, never a hang). With
 * cpus=2 the probe starts vCPU 1 (INIT/SIPI), which serves IPI_VECTOR in
 * spin or halt mode (ap_serve()); x2apic=1 switches every CPU to x2APIC
 * first. irqfd estimates the guest-host TSC offset with Clock ucalls and
 * lets the host inject through an irqfd (IrqfdStart). ROUTINE_EXITS
 * scenarios (the doorbells among them) are plain asm loops.
 */
#include "probe.h"

/* One scenario as the ABI describes it. */
struct scenario_entry {
    u32 id;
    const char *name;
    u32 routine; /* ROUTINE_*: which file's prepare/run/cleanup */
    u32 expect;  /* EXPECT_*: whether the loop's value is checked */
    u64 value;   /* the value it must read back (the ABI's Expect::value()); unused for EXPECT_ANY */
};

static const struct scenario_entry table[] = SCENARIO_TABLE; /* generated from the ABI */

u32 run_status; /* RESULT_BAD_VALUE when an interrupt scenario's wait timed out or a count was off */

/* Per-scenario setup, once before the warm-up. Anything but RESULT_OK skips the scenario. */
static u32 prepare(const struct scenario_entry *s)
{
    switch (s->routine) {
    case ROUTINE_PCI:
        return pci_prepare(s->id, s->name);
    case ROUTINE_IPI:
        return ipi_prepare(s->id, s->name);
    case ROUTINE_IRQFD:
        return irqfd_prepare(s->name);
    default:
        return RESULT_OK;
    }
}

/* Per-scenario teardown after the last batch (or a failed setup). */
static void cleanup(const struct scenario_entry *s, u32 prepared)
{
    switch (s->routine) {
    case ROUTINE_PCI:
        pci_cleanup(); /* also after a failed setup: a half-done selection is undone */
        break;
    case ROUTINE_IPI:
        if (prepared == RESULT_OK)
            ipi_cleanup(s->id);
        break;
    case ROUTINE_IRQFD:
        if (prepared == RESULT_OK)
            irqfd_cleanup();
        break;
    default:
        break;
    }
}

/* Runs n >= 1 iterations of the scenario; false if the probe does not implement it. */
static bool run(const struct scenario_entry *s, u64 n, u64 *cycles, u64 *value)
{
    switch (s->routine) {
    case ROUTINE_PCI:
        return pci_run(s->id, n, cycles, value);
    case ROUTINE_IPI:
        ipi_run(s->id, n, cycles, value);
        return true;
    case ROUTINE_IRQFD:
        irqfd_run(n, cycles, value);
        return true;
    case ROUTINE_EXITS:
        return exits_run(s->id, n, cycles, value);
    default:
        return false;
    }
}

/* One stamped iteration for tails.c's recorded pass: the scenario's own loop with n = 1. */
static u64 one(const void *ctx)
{
    u64 cycles = 0, value = 0;
    run(ctx, 1, &cycles, &value);
    return cycles;
}

/* The guest's own check of the value a batch read back, against the value its table entry carries. */
static u32 status_of(const struct scenario_entry *s, u64 value)
{
    return s->expect == EXPECT_ANY || value == s->value ? RESULT_OK : RESULT_BAD_VALUE;
}

static void report(const char *name, u32 id, u64 n, u64 cycles, u64 value, u32 status)
{
    ucall(UCALL_RESULT, name, id, n, cycles, value, status);
}

/* A scenario that does not run: a Result with no iterations and this status. */
static void skip(u32 id, const char *name, u32 status)
{
    report(name, id, 0, 0, 0, status);
    printf("TRAPLINE-RESULT %s iters=0 cycles=0 value=0x0 status=%u\n", name, status);
}

static void scenario(const struct scenario_entry *s, u64 goal, u64 min, u64 max, u64 warmup)
{
    u64 n = min, cycles = 0, value = 0;
    u32 status;

    /* irqfd's stamp arrays hold IRQFD_MAX injections per batch. */
    if (s->routine == ROUTINE_IRQFD && max > IRQFD_MAX)
        max = IRQFD_MAX;
    if (n > max)
        n = max;
    /* A scenario the machine cannot run (no pci-testdev, no ECAM, ...) is skipped with that status. */
    u32 prepared = status = prepare(s);
    /* The warm-up is also the "is it implemented" test, so it runs at least once. */
    run_status = RESULT_OK;
    if (status == RESULT_OK && !run(s, warmup ? warmup : 1, &cycles, &value))
        status = RESULT_UNSUPPORTED;
    /* An interrupt scenario whose warm-up timed out would only time out again. */
    if (status == RESULT_OK)
        status = run_status;
    if (status != RESULT_OK) {
        skip(s->id, s->name, status);
        cleanup(s, prepared);
        return;
    }
    for (;;) {
        ucall(UCALL_BEGIN, s->name, s->id);
        run_status = RESULT_OK;
        run(s, n, &cycles, &value);
        status = run_status != RESULT_OK ? run_status : status_of(s, value);
        report(s->name, s->id, n, cycles, value, status);
        if (cycles >= goal || n >= max || status != RESULT_OK)
            break;
        n = n * 2 < max ? n * 2 : max;
    }
    printf("TRAPLINE-RESULT %s iters=%lu cycles=%lu value=0x%lx status=%u\n", s->name, n, cycles, value, status);
    if (status == RESULT_OK)
        tails_record(s->id, s->name, n, s->routine == ROUTINE_IRQFD, one, s);
    cleanup(s, prepared);
}

/* A token is an ABI id or an ABI name; anything else is reported as unsupported. */
static void select(const char *tok, size_t len, u64 goal, u64 min, u64 max, u64 warmup)
{
    char buf[UCALL_TEXT_LEN];
    const char *end;
    u64 num;

    if (len >= sizeof(buf))
        len = sizeof(buf) - 1;
    memcpy(buf, tok, len);
    buf[len] = '\0';

    bool numeric = parse_u64(buf, &end, &num) && !*end;
    for (size_t k = 0; k < ARRAY_SIZE(table); k++)
        if ((numeric && table[k].id == num) || (!numeric && !strcmp(table[k].name, buf))) {
            scenario(&table[k], goal, min, max, warmup);
            return;
        }
    skip(numeric ? (u32)num : 0xffffffffu, buf, RESULT_UNSUPPORTED);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    u64 goal = cmdline_u64("goal", 10000000);
    u64 min = cmdline_u64("min", 16);
    u64 max = cmdline_u64("max", 1ULL << 24);
    u64 warmup = cmdline_u64("warmup", 16);
    const char *list = cmdline_get("s");

    if (min == 0)
        min = 1; /* the asm loops run at least once */
    if (max < min)
        max = min;

    printf("probe: s=%s goal=%lu min=%lu max=%lu warmup=%lu\n", list ? list : "0", goal, min, max, warmup);
    exits_init();
    irq_init();
    irqfd_init();
    tails_init();
    if (!list)
        list = "0";
    while (*list) {
        size_t len = 0;
        while (list[len] && list[len] != ',')
            len++;
        if (len)
            select(list, len, goal, min, max, warmup);
        list += len;
        if (*list == ',')
            list++;
    }
    anatomy_pass(cmdline_get("anatomy")); /* anatomy.c: the user exits' legs, when asked */
    finish(0);
}
