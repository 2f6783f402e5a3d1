/*
 * A misbehaving guest: n=<count> random port and MMIO accesses (seed=<s>)
 * that a VMM must survive. Everything it touches is fair game except the
 * few places where a random access would end, reset or re-INIT the VM and
 * so cut the run short instead of testing anything.
 */
#include "rng.h"
#include "rt.h"

#define COUNT_PIO 1
#define COUNT_MMIO 2
#define FOUR_GIB 0x100000000ULL
#define PAGE 0x1000ULL

struct range {
    u64 lo, hi; /* [lo, hi) */
};

/* THE exclusion list: every port range hostile never touches, and why. */
static const struct range pio_excluded[] = {
    { DEBUG_EXIT_PORT, DEBUG_EXIT_PORT + DEBUG_EXIT_LEN },      /* isa-debug-exit: ends the VM */
    { UCALL_PORT, UCALL_PORT + TRAPLINE_PORTS_LEN },            /* trapline's ports: fake ucalls/probes */
    { BOCHS_SHUTDOWN_PORT, BOCHS_SHUTDOWN_PORT + 1 },           /* Bochs power-off */
    { 0xcf9, 0xcfa },                                           /* PCI reset control: resets */
    { 0x64, 0x65 },                                             /* i8042 command 0xfe: resets */
    { 0x92, 0x93 },                                             /* port 92 bit 0: fast reset (QEMU) */
    { 0x600, 0x640 },                                           /* ACPI PM block: SLP_EN powers off */
};

/* ...and every MMIO page: KVM's own devices, where a random write could INIT this vCPU. */
static const struct range mmio_excluded[] = {
    { LAPIC_BASE, LAPIC_BASE + PAGE },
    { IOAPIC_BASE, IOAPIC_BASE + PAGE },
};

static bool overlaps(const struct range *r, size_t n, u64 lo, u64 hi)
{
    for (size_t i = 0; i < n; i++)
        if (lo < r[i].hi && r[i].lo < hi)
            return true;
    return false;
}

static u16 pick_port(struct rng *r, unsigned width)
{
    for (;;) {
        u16 p = (u16)rng_next(r);
        if (!overlaps(pio_excluded, ARRAY_SIZE(pio_excluded), p, (u64)p + width))
            return p;
    }
}

/* Naturally aligned, so no access straddles into an excluded page or past 4 GiB. */
static u64 pick_addr(struct rng *r, u64 top, unsigned width)
{
    for (;;) {
        u64 a = (top + rng_below(r, FOUR_GIB - top)) & ~(u64)(width - 1);
        if (a >= top && !overlaps(mmio_excluded, ARRAY_SIZE(mmio_excluded), a, a + width))
            return a;
    }
}

static u8 strbuf[16];

static void random_pio(struct rng *r, u64 *strings, u64 *elems)
{
    u64 x = rng_next(r);
    unsigned width = 1u << (x % 3);
    bool write = (x >> 8) & 1;

    /* One PIO in 32 is a string op, so the VMM sees count > 1 exits. */
    if (((x >> 16) & 31) == 0) {
        u16 port = pick_port(r, 1);
        u64 count = 2 + ((x >> 24) % (sizeof(strbuf) - 1));
        *strings += 1;
        *elems += count;
        if (write) {
            const void *src = strbuf;
            asm volatile("rep outsb" : "+S"(src), "+c"(count) : "d"(port) : "memory");
        } else {
            void *dst = strbuf;
            asm volatile("rep insb" : "+D"(dst), "+c"(count) : "d"(port) : "memory");
        }
        return;
    }

    u16 port = pick_port(r, width);
    u32 v = (u32)rng_next(r);
    switch (width | (write << 4)) {
    case 1: (void)inb(port); break;
    case 2: (void)inw(port); break;
    case 4: (void)inl(port); break;
    case 0x11: outb(port, (u8)v); break;
    case 0x12: outw(port, (u16)v); break;
    case 0x14: outl(port, v); break;
    }
}

static void random_mmio(struct rng *r, u64 top)
{
    u64 x = rng_next(r);
    unsigned width = 1u << (x & 3);
    bool write = (x >> 8) & 1;
    u64 a = pick_addr(r, top, width);
    u64 v = rng_next(r);

    switch (width | (write << 4)) {
    case 1: (void)readb(a); break;
    case 2: (void)readw(a); break;
    case 4: (void)readl(a); break;
    case 8: (void)readq(a); break;
    case 0x11: writeb(a, (u8)v); break;
    case 0x12: writew(a, (u16)v); break;
    case 0x14: writel(a, (u32)v); break;
    case 0x18: writeq(a, v); break;
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    u64 n = cmdline_u64("n", 1000);
    u64 seed = cmdline_u64("seed", 1);
    u64 top = mem_top();
    extern char edata[];
    struct rng r = rng_seed(seed);
    u64 pio = 0, mmio = 0, strings = 0, elems = 0;

    /* A missing mem_upper would aim random writes at our own image. */
    if (top < (u64)(uintptr_t)edata || top >= FOUR_GIB) {
        printf("hostile: bad top of RAM 0x%lx from the Multiboot info\n", top);
        finish(1);
    }
    printf("hostile: n=%lu seed=%lu mmio=[0x%lx, 4G)\n", n, seed, top);
    for (u64 i = 0; i < n; i++) {
        if (rng_next(&r) & 1) {
            random_pio(&r, &strings, &elems);
            pio++;
        } else {
            random_mmio(&r, top);
            mmio++;
        }
    }

    serial_reset();
    ucall(UCALL_COUNT, "pio", COUNT_PIO, pio, strings, elems);
    ucall(UCALL_COUNT, "mmio", COUNT_MMIO, mmio);
    printf("\nhostile: pio=%lu (string ops %lu, %lu elements) mmio=%lu\n", pio, strings, elems, mmio);
    finish(0);
}
