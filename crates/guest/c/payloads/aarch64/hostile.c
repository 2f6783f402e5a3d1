/*
 * A misbehaving arm64 guest: n=<count> random MMIO accesses (seed=<s>) of
 * every width (1, 2, 4, 8 bytes, naturally aligned, plain loads and stores
 * KVM can decode) to every window of the virt map and to the gaps between
 * them, which trapline leaves unmapped. Each access picks a target (window
 * or gap) uniformly, so a 4 KiB UART is hit as often as the PCIe window.
 * Only trapline's ucall and debug-exit pages are spared: a random store
 * there would fake a message or end the run instead of testing anything.
 * A data abort (QEMU answers unassigned addresses with one) is counted and
 * skipped. Then COUNT(2, accesses, aborts), and SYSTEM_OFF.
 */
#include "rng.h"
#include "rt.h"
#include "trapline_virt_windows.h"

#define COUNT_MMIO 2
#define MAX_TARGETS 32

struct window {
    const char *name;
    u64 base, len;
};

/* trapline-abi's VIRT_WINDOWS, in address order. */
static const struct window windows[] = VIRT_WINDOW_TABLE;

/* THE exclusion list: every page hostile never touches, and why. */
static const struct window excluded[] = {
    { "ucall", VIRT_UCALL_MMIO, VIRT_TRAPLINE_PAGE },           /* fake ucalls */
    { "debug-exit", VIRT_DEBUG_EXIT_MMIO, VIRT_TRAPLINE_PAGE }, /* ends the VM */
};

static struct window targets[MAX_TARGETS];
static u32 ntargets;

static void add_target(const char *name, u64 base, u64 end)
{
    if (end > base && ntargets < MAX_TARGETS)
        targets[ntargets++] = (struct window){ name, base, end - base };
}

/* The windows and the unmapped gaps before, between and after them, up to RAM. */
static void build_targets(void)
{
    u64 prev = 0;
    for (size_t i = 0; i < ARRAY_SIZE(windows); i++) {
        add_target("unmapped", prev, windows[i].base);
        add_target(windows[i].name, windows[i].base, windows[i].base + windows[i].len);
        prev = windows[i].base + windows[i].len;
    }
    add_target("unmapped", prev, VIRT_RAM_BASE);
}

static bool is_excluded(u64 a, u64 width)
{
    for (size_t i = 0; i < ARRAY_SIZE(excluded); i++)
        if (a < excluded[i].base + excluded[i].len && excluded[i].base < a + width)
            return true;
    return false;
}

static void random_mmio(struct rng *r)
{
    u64 x = rng_next(r);
    unsigned width = 1u << (x & 3);
    bool write = (x >> 8) & 1;
    u64 a;
    do {
        const struct window *t = &targets[rng_below(r, ntargets)];
        a = (t->base + rng_below(r, t->len)) & ~(u64)(width - 1);
    } while (is_excluded(a, width));
    u64 v = rng_next(r);

    switch (width | (write << 4)) {
    case 1: (void)mmio_read8(a); break;
    case 2: (void)mmio_read16(a); break;
    case 4: (void)mmio_read32(a); break;
    case 8: (void)mmio_read64(a); break;
    case 0x11: mmio_write8(a, (u8)v); break;
    case 0x12: mmio_write16(a, (u16)v); break;
    case 0x14: mmio_write32(a, (u32)v); break;
    case 0x18: mmio_write64(a, v); break;
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    u64 n = cmdline_u64("n", 1000);
    u64 seed = cmdline_u64("seed", 1);
    struct rng r = rng_seed(seed);
    struct percpu *c = this_cpu();

    build_targets();
    printf("hostile: n=%lu seed=%lu targets=%u\n", n, seed, ntargets);
    c->faults = 0;
    c->skip_faults = 1;
    for (u64 i = 0; i < n; i++)
        random_mmio(&r);
    c->skip_faults = 0;
    u64 faults = c->faults;

    serial_reset();
    ucall(UCALL_COUNT, "mmio", COUNT_MMIO, n, faults);
    printf("\nhostile: mmio=%lu aborts=%lu\n", n, faults);
    finish(0);
}
