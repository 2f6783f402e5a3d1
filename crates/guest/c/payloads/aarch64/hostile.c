/*
 * A misbehaving arm64 guest: n=<count> random MMIO accesses (seed=<s>) of
 * every width (1, 2, 4, 8 bytes, naturally aligned, plain loads and stores
 * KVM can decode) to every window of the virt map and to the gaps between
 * them, which trapline leaves unmapped. Each access picks a target (window
 * or gap) uniformly, so a 4 KiB UART is hit as often as the PCIe window.
 * Only trapline's ucall and debug-exit pages are spared: a random store
 * there would fake a message or end the run instead of testing anything.
 * A data abort (QEMU answers unassigned addresses with one) is counted and
 * skipped.
 *
 * cpus=<N> (default 1) shares the n accesses among N vCPUs, started with
 * PSCI CPU_ON, which hammer the machine at the same time (CPU i seeds its
 * generator from seed and i; CPU 0's stream is the one-CPU stream). The
 * boot CPU waits for the others, bounded by wait=<seconds> of the generic
 * timer (default 3600: the emulated host is slow).
 *
 * Then the checks that trapline is still right: the UART is reset and
 * prints, and the identification registers of the PL011, the PL031, the
 * last virtio-mmio transport and the PCIe host bridge (through ECAM) read
 * what they must. COUNT(2, accesses, aborts, gic), where gic counts the
 * accesses KVM's vGIC serves (its distributor, ITS and the redistributor
 * frames of the VM's vCPUs: they never exit to trapline), then
 * SYSTEM_OFF; exit 1 if a check failed or a CPU did not finish.
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

struct target {
    struct window w;
    bool gic; /* a GIC window (KVM answers what it maps there) */
};

static struct target targets[MAX_TARGETS];
static u32 ntargets;

/* What each CPU did, written by that CPU before it bumps `finished`. */
struct tally {
    u64 accesses, aborts, gic;
};
static struct tally tallies[MAX_CPUS];
static u64 total_n, first_seed;
static u32 ncpus;
static volatile u32 finished;

static bool starts_with(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return false;
    return true;
}

static void add_target(const char *name, u64 base, u64 end)
{
    if (end > base && ntargets < MAX_TARGETS)
        targets[ntargets++] = (struct target){ { name, base, end - base }, starts_with(name, "gic-") };
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

/* Whether KVM's vGIC serves `a` (so the access never exits to trapline):
 * the distributor and ITS frames, and the redistributor frames of the
 * vCPUs this VM has; the rest of the redistributor window is unmapped. */
static bool gic_frame(const struct target *t, u64 a)
{
    if (!t->gic)
        return false;
    if (t->w.base != VIRT_GIC_REDIST_BASE)
        return true;
    return a - VIRT_GIC_REDIST_BASE < (u64)(dt.ncpus ? dt.ncpus : 1) * VIRT_GIC_REDIST_STRIDE;
}

/* One random access; true when KVM's vGIC served it. */
static bool random_mmio(struct rng *r)
{
    u64 x = rng_next(r);
    unsigned width = 1u << (x & 3);
    bool write = (x >> 8) & 1;
    const struct target *t;
    u64 a;
    do {
        t = &targets[rng_below(r, ntargets)];
        a = (t->w.base + rng_below(r, t->w.len)) & ~(u64)(width - 1);
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
    return gic_frame(t, a);
}

/* CPU `cpu`'s share of the n accesses, tallied; then it reports in. */
static void hammer(u32 cpu)
{
    u64 share = total_n / ncpus + (cpu < total_n % ncpus);
    struct rng r = rng_seed(first_seed + cpu * 0x9e3779b97f4a7c15ULL);
    struct percpu *c = this_cpu();
    struct tally t = { share, 0, 0 };

    c->faults = 0;
    c->skip_faults = 1;
    for (u64 i = 0; i < share; i++)
        t.gic += random_mmio(&r);
    c->skip_faults = 0;
    t.aborts = c->faults;
    tallies[cpu] = t;
    __atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
}

void ap_main(u32 cpu, u64 mpidr)
{
    (void)mpidr;
    hammer(cpu);
}

/* 0 when `got` is `want`, else 1 with a line saying what is wrong. */
static int expect32(const char *what, u32 got, u32 want)
{
    if (got == want)
        return 0;
    printf("hostile: CHECK FAILED: %s reads 0x%x, not 0x%x\n", what, got, want);
    return 1;
}

/* The PrimeCell IDs: PeriphID0 (the part number's low byte) and the CellID bytes. */
static int primecell(const char *what, u64 base, u32 part)
{
    static const u32 cell[4] = { 0x0d, 0xf0, 0x05, 0xb1 };
    int bad = expect32(what, mmio_read32(base + 0xfe0), part);
    for (int i = 0; i < 4; i++)
        bad |= expect32(what, mmio_read32(base + 0xff0 + 4 * i), cell[i]);
    return bad;
}

/* trapline's models still answer as they must, whatever was written to them. */
static int devices_still_right(void)
{
    u64 last = VIRT_VIRTIO_MMIO_BASE + (VIRT_VIRTIO_MMIO_COUNT - 1) * VIRT_VIRTIO_MMIO_STRIDE;
    int bad = primecell("pl011 id", VIRT_PL011_BASE, 0x11);
    bad |= primecell("pl031 id", VIRT_PL031_BASE, 0x31);
    bad |= expect32("virtio-mmio magic", mmio_read32(last), 0x74726976); /* "virt" */
    bad |= expect32("pcie 00:00.0 id", mmio_read32(VIRT_PCIE_ECAM_BASE), 0x0008u << 16 | PCI_VENDOR_REDHAT);
    return bad;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    total_n = cmdline_u64("n", 1000);
    first_seed = cmdline_u64("seed", 1);
    ncpus = (u32)cmdline_u64("cpus", 1);
    u64 wait = cmdline_u64("wait", 3600) * counter_freq();
    int bad = 0;

    if (ncpus == 0 || ncpus > MAX_CPUS || ncpus > (dt.ncpus ? dt.ncpus : 1)) {
        printf("hostile: cpus=%u out of range 1..%u (the vCPUs this VM has)\n", ncpus, dt.ncpus ? dt.ncpus : 1);
        finish(2);
    }
    build_targets();
    printf("hostile: n=%lu seed=%lu cpus=%u targets=%u\n", total_n, first_seed, ncpus, ntargets);
    for (u32 i = 1; i < ncpus; i++) {
        s64 ret = smp_start_cpu(i, dt.mpidr[i]);
        if (ret != PSCI_RET_SUCCESS) {
            printf("hostile: CPU_ON of cpu %u failed: %ld\n", i, ret);
            finish(1);
        }
    }
    hammer(0);
    u64 t0 = counter_now();
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < ncpus) {
        if (counter_now() - t0 > wait) {
            bad = 1;
            break;
        }
        cpu_relax();
    }

    struct tally sum = { 0, 0, 0 };
    u32 done = __atomic_load_n(&finished, __ATOMIC_ACQUIRE);
    for (u32 i = 0; i < ncpus; i++) {
        sum.accesses += tallies[i].accesses;
        sum.aborts += tallies[i].aborts;
        sum.gic += tallies[i].gic;
    }
    serial_reset();
    if (bad)
        printf("hostile: CHECK FAILED: %u of %u cpus finished\n", done, ncpus);
    bad |= devices_still_right();
    ucall(UCALL_COUNT, "mmio", COUNT_MMIO, sum.accesses, sum.aborts, sum.gic);
    printf("\nhostile: mmio=%lu aborts=%lu cpus=%u gic=%lu\n", sum.accesses, sum.aborts, ncpus, sum.gic);
    if (!bad)
        printf("hostile: devices ok\n");
    finish(bad);
}
