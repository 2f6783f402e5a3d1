/*
 * The exit-cost lab's probe. For each scenario in s=<id|name>[,...]: warm
 * up, then time batches of n = min, 2*min, ... iterations (ucall BEGIN, TSC,
 * loop, TSC, ucall RESULT) until a batch takes goal cycles or n reaches max,
 * and print the final batch as a TRAPLINE-RESULT line for runners that only
 * see the serial console (QEMU).
 *
 * Every loop is the same three instructions (inc; cmp; jne) around one
 * operation, written in asm so the compiler cannot reshape one scenario's
 * loop differently from noop's: noop's cost can then be subtracted.
 */
#include "rt.h"

struct scenario_name {
    u32 id;
    const char *name;
};

static const struct scenario_name names[] = SCENARIO_TABLE; /* generated from the ABI */

/* An ordinary RAM word for ram-read; same value as the devices so one check fits all. */
static u32 ram_word = PROBE_READ_VALUE;
static bool intel;

#define LOOP(body, ...)                                                                          \
    do {                                                                                         \
        t0 = rdtsc_ordered();                                                                    \
        asm volatile("1:\n\t" body "\n\tinc %[i]\n\tcmp %[n], %[i]\n\tjne 1b" __VA_ARGS__);      \
        t1 = rdtsc_ordered();                                                                    \
    } while (0)

/* Runs n >= 1 iterations of scenario id; false if the probe does not implement it. */
static bool run(u32 id, u64 n, u64 *cycles, u64 *value)
{
    u64 i = 0, v = 0, t0 = 0, t1 = 0;

    switch (id) {
    case SCENARIO_NOOP:
        LOOP("", : [i] "+r"(i) : [n] "r"(n) : "memory");
        break;
    case SCENARIO_HYPERCALL:
        /* KVM's ABI: nr in RAX (0 is no hypercall), result in RAX; RBX/RCX/RDX/RSI are args. */
        if (intel)
            LOOP("xor %%eax, %%eax\n\tvmcall", : [i] "+r"(i), "+a"(v) : [n] "r"(n) : "rbx", "rcx", "rdx", "rsi", "memory");
        else
            LOOP("xor %%eax, %%eax\n\tvmmcall", : [i] "+r"(i), "+a"(v) : [n] "r"(n) : "rbx", "rcx", "rdx", "rsi", "memory");
        break;
    case SCENARIO_CPUID:
        LOOP("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\tcpuid", : [i] "+r"(i), "+a"(v) : [n] "r"(n) : "rbx", "rcx", "rdx", "memory");
        break;
    case SCENARIO_HLT:
        /* IF=0 throughout the runtime: without an in-kernel irqchip each hlt exits to user space. */
        LOOP("hlt", : [i] "+r"(i) : [n] "r"(n) : "memory");
        break;
    case SCENARIO_PIO_USER_OUT:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "r"(n), "d"((u16)PROBE_PIO_USER_PORT) : "memory");
        break;
    case SCENARIO_PIO_USER_IN:
        LOOP("inl %%dx, %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), "d"((u16)PROBE_PIO_USER_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_WILDCARD:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"((u32)PROBE_WILDCARD_VALUE), "d"((u16)PROBE_PIO_WILDCARD_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_DATAMATCH:
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"((u32)PROBE_DATAMATCH_VALUE), "d"((u16)PROBE_PIO_DATAMATCH_PORT) : "memory");
        break;
    case SCENARIO_PIO_KERNEL_PIC:
        /* 0x4d0 is the ELCR of KVM's in-kernel PIC: a PIO exit that never leaves the kernel. */
        LOOP("inb %%dx, %%al", : [i] "+r"(i), "+a"(v) : [n] "r"(n), "d"((u16)0x4d0) : "memory");
        break;
    case SCENARIO_MMIO_USER_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_MMIO_USER_WRITE:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_USER) : "memory");
        break;
    case SCENARIO_MMIO_KERNEL_WILDCARD:
        LOOP("movl %k[val], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_WILDCARD), [val] "r"((u32)PROBE_WILDCARD_VALUE) : "memory");
        break;
    case SCENARIO_MMIO_KERNEL_DATAMATCH:
        LOOP("movl %k[val], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_DATAMATCH), [val] "r"((u32)PROBE_DATAMATCH_VALUE) : "memory");
        break;
    case SCENARIO_COALESCED_MMIO:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_MMIO_COALESCED) : "memory");
        break;
    case SCENARIO_COALESCED_PIO:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "r"(n), "d"((u16)PROBE_PIO_COALESCED_PORT) : "memory");
        break;
    case SCENARIO_RAM_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"(&ram_word) : "memory");
        break;
    case SCENARIO_RO_MEMSLOT_READ:
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"((u64)PROBE_RO_MEMSLOT) : "memory");
        break;
    case SCENARIO_RO_MEMSLOT_WRITE:
        LOOP("movl %k[i], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"((u64)PROBE_RO_MEMSLOT + 4) : "memory");
        break;
    case SCENARIO_VMM_FLOOR_PIO:
        LOOP("outl %%eax, %%dx", : [i] "+a"(i) : [n] "r"(n), "d"((u16)PROBE_PIO_FLOOR_PORT) : "memory");
        break;
    default:
        return false;
    }
    *cycles = t1 - t0;
    *value = v;
    return true;
}

static u32 status_of(u32 id, u64 value)
{
    switch (id) {
    case SCENARIO_PIO_USER_IN:
    case SCENARIO_MMIO_USER_READ:
    case SCENARIO_RO_MEMSLOT_READ:
    case SCENARIO_RAM_READ:
        return value == PROBE_READ_VALUE ? RESULT_OK : RESULT_BAD_VALUE;
    default:
        return RESULT_OK;
    }
}

static void report(const char *name, u32 id, u64 n, u64 cycles, u64 value, u32 status)
{
    ucall(UCALL_RESULT, name, id, n, cycles, value, status);
}

static void scenario(u32 id, const char *name, u64 goal, u64 min, u64 max, u64 warmup)
{
    u64 n = min, cycles = 0, value = 0;
    u32 status;

    /* Also the "is it implemented" test, so it runs at least once. */
    if (!run(id, warmup ? warmup : 1, &cycles, &value)) {
        report(name, id, 0, 0, 0, RESULT_UNSUPPORTED);
        printf("TRAPLINE-RESULT %s iters=0 cycles=0 value=0x0 status=%u\n", name, (u32)RESULT_UNSUPPORTED);
        return;
    }
    for (;;) {
        ucall(UCALL_BEGIN, name, id);
        run(id, n, &cycles, &value);
        status = status_of(id, value);
        report(name, id, n, cycles, value, status);
        if (cycles >= goal || n >= max)
            break;
        n = n * 2 < max ? n * 2 : max;
    }
    printf("TRAPLINE-RESULT %s iters=%lu cycles=%lu value=0x%lx status=%u\n", name, n, cycles, value, status);
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
    for (size_t k = 0; k < ARRAY_SIZE(names); k++)
        if ((numeric && names[k].id == num) || (!numeric && !strcmp(names[k].name, buf))) {
            scenario(names[k].id, names[k].name, goal, min, max, warmup);
            return;
        }
    scenario(numeric ? (u32)num : 0xffffffffu, buf, goal, min, max, warmup);
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
    u32 r[4];

    if (min == 0)
        min = 1; /* the asm loops run at least once */
    if (max < min)
        max = min;
    cpuid(0, 0, r);
    intel = r[1] == 0x756e6547 && r[3] == 0x49656e69 && r[2] == 0x6c65746e; /* "GenuineIntel" */

    printf("probe: s=%s goal=%lu min=%lu max=%lu warmup=%lu\n", list ? list : "0", goal, min, max, warmup);
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
    finish(0);
}
