/*
 * kvm-unit-tests x86/vmexit.c's method and output for a subset of its
 * tests (spec §6), so the same numbers can be taken on trapline and QEMU
 * without kvm-unit-tests' runtime.
 *
 * Tests, in vmexit's order: cpuid, inl_from_pmtimer, inl_from_qemu,
 * inl_from_kernel, outl_to_kernel, ipi, pci-mem, pci-io. Bare argv words
 * select tests by exact name (none: all); goal=<cycles> (default 2^24,
 * vmexit uses 2^30) is the batch length. For each test the iteration count
 * doubles from 64 until one batch takes >= goal TSC cycles, then it prints
 * "<name> <cycles per iteration>" (or "<name> (skipped)"). "Parallel"
 * tests run their loop on every CPU at once, dispatched by IPI, as vmexit's
 * on_cpus() does; the CPU count is fw_cfg key 0x05 and the APs are started
 * with INIT/SIPI. pci-mem/pci-io walk pci-testdev's tests 0, 1, 2, ... on
 * BAR0/BAR1 until `width` is not 1, 2 or 4 and print
 * "<test name>:pci-mem <cycles>" per test. Always exits 0.
 */
#include "rt.h"

#define DEFAULT_GOAL (1ULL << 24)
#define KUT_IPI_VECTOR 0x20 /* kvm-unit-tests' on_cpu vector */
#define WAIT_CYCLES (1ULL << 33)

struct test {
    void (*func)(void);
    const char *name;
    bool (*valid)(void);
    bool parallel;
    bool (*next)(struct test *);
};

static u64 goal;
static volatile unsigned iterations;
static u32 nr_cpus = 1;
static u64 tsc_ipi;

/* Plain RDTSC like vmexit (no fence). */
static inline u64 rdtsc(void)
{
    u32 lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (u64)hi << 32 | lo;
}

/* ---- on_cpu: one mailbox per CPU, work delivered with a fixed IPI ---- */

struct mailbox {
    void (*volatile fn)(void);
    volatile u32 busy;
} __attribute__((aligned(64)));

static struct mailbox mbox[MAX_CPUS];
static volatile u32 ap_online;

DEFINE_IRQ_ENTRY(ipi_entry, ipi_handler);

/* Runs on the AP in its interrupt gate (IF=0): the work, EOI, then "done". */
void ipi_handler(void)
{
    struct mailbox *m = &mbox[this_cpu()->index];
    void (*fn)(void) = m->fn;
    if (fn)
        fn();
    lapic_eoi();
    __atomic_store_n(&m->busy, 0, __ATOMIC_RELEASE);
}

/* APs: accept fixed interrupts, check in, then sleep in sti; hlt serving IPIs. */
void ap_main(u32 cpu, u32 apic_id)
{
    (void)cpu;
    (void)apic_id;
    lapic_enable();
    __atomic_fetch_add(&ap_online, 1, __ATOMIC_RELEASE);
    for (;;)
        asm volatile("sti; hlt; cli" : : : "memory");
}

static void on_cpu_async(u32 cpu, void (*fn)(void))
{
    struct mailbox *m = &mbox[cpu];
    while (__atomic_load_n(&m->busy, __ATOMIC_ACQUIRE))
        cpu_relax();
    m->fn = fn;
    __atomic_store_n(&m->busy, 1, __ATOMIC_RELEASE);
    lapic_send_ipi(percpu[cpu].apic_id, KUT_IPI_VECTOR);
}

static void on_cpu_wait(u32 cpu)
{
    while (__atomic_load_n(&mbox[cpu].busy, __ATOMIC_ACQUIRE))
        cpu_relax();
}

static void on_cpu(u32 cpu, void (*fn)(void))
{
    if (cpu == 0) {
        fn();
        return;
    }
    on_cpu_async(cpu, fn);
    on_cpu_wait(cpu);
}

/* Every CPU runs fn at once (the BSP too); returns when all are done. */
static void on_cpus(void (*fn)(void))
{
    for (u32 c = nr_cpus - 1; c > 0; c--)
        on_cpu_async(c, fn);
    fn();
    for (u32 c = 1; c < nr_cpus; c++)
        on_cpu_wait(c);
}

static void smp_init(void)
{
    u64 n = fwcfg_read(FW_CFG_NB_CPUS, 2);
    if (n == 0 || n > MAX_CPUS) {
        printf("kutvmexit: fw_cfg nb_cpus = %lu, running on 1 cpu\n", n);
        n = 1;
    }
    idt_set(KUT_IPI_VECTOR, ipi_entry);
    percpu[0].apic_id = lapic_id();
    if (n > 1) {
        smp_start_aps();
        u64 t0 = rdtsc_ordered();
        while (__atomic_load_n(&ap_online, __ATOMIC_ACQUIRE) < n - 1) {
            if (rdtsc_ordered() - t0 > WAIT_CYCLES) {
                printf("kutvmexit: only %u of %lu APs came online\n", ap_online, n - 1);
                break;
            }
            cpu_relax();
        }
    }
    nr_cpus = 1 + __atomic_load_n(&ap_online, __ATOMIC_ACQUIRE);
}

/* ---- the tests ---- */

static void cpuid_test(void)
{
    u32 a = 0, c = 0;
    asm volatile("cpuid" : "+a"(a), "+c"(c) : : "rbx", "rdx");
}

static u16 pm_tmr_blk;

/* vmexit looks the port up on first use; here before timing, so it prints once with any CPU count. */
static bool has_pmtimer(void)
{
    if (!pm_tmr_blk) {
        const struct acpi_header *facp = acpi_find_table(ACPI_SIG('F', 'A', 'C', 'P'));
        if (facp)
            pm_tmr_blk = (u16)*(const u32 *)((const u8 *)facp + ACPI_FADT_PM_TMR_BLK);
        if (!pm_tmr_blk) {
            printf("PM timer port not found (no RSDP/FACP)\n");
            return false;
        }
        printf("PM timer port is %x\n", pm_tmr_blk);
    }
    return true;
}

static void inl_pmtimer(void) { (void)inl(pm_tmr_blk); }
static void inl_nop_qemu(void) { (void)inl(0x1234); }
static void inl_nop_kernel(void) { (void)inb(0x4d0); }
static void outl_elcr_kernel(void) { outb(0x4d0, 0); }

static bool is_smp(void) { return nr_cpus > 1; }
static void nop(void) {}

static void ipi(void)
{
    u64 start = rdtsc();
    on_cpu(1, nop);
    tsc_ipi += rdtsc() - start;
}

/* ---- pci-testdev, found and set up like vmexit/lib/pci.c do it ---- */

static struct {
    u64 membar;
    u32 iobar;
    u64 mem;  /* membar + offset */
    u16 port; /* iobar + offset */
    int test_idx;
    u32 data;
    u32 offset;
} pci_test = { .test_idx = -1 };

static void pci_mem_testb(void) { mmio_write8(pci_test.mem, (u8)pci_test.data); }
static void pci_mem_testw(void) { mmio_write16(pci_test.mem, (u16)pci_test.data); }
static void pci_mem_testl(void) { mmio_write32(pci_test.mem, pci_test.data); }
static void pci_io_testb(void) { outb(pci_test.port, (u8)pci_test.data); }
static void pci_io_testw(void) { outw(pci_test.port, (u16)pci_test.data); }
static void pci_io_testl(void) { outl(pci_test.port, pci_test.data); }

static u8 ioreadb(u64 addr, bool io) { return io ? inb((u16)addr) : mmio_read8(addr); }
static u32 ioreadl(u64 addr, bool io) { return io ? inl((u16)addr) : mmio_read32(addr); }

static void iowriteb(u64 addr, u8 v, bool io)
{
    if (io)
        outb((u16)addr, v);
    else
        mmio_write8(addr, v);
}

/* Select the next test on this BAR; false (and index reset) once `width` says there is none. */
static bool pci_next(struct test *t, u64 addr, bool io)
{
    char name[64];
    u32 k;

    if (!pci_test.membar) {
        t->func = NULL;
        return true;
    }
    pci_test.test_idx++;
    iowriteb(addr + PCI_TESTDEV_HDR_TEST, (u8)pci_test.test_idx, io);
    switch (ioreadb(addr + PCI_TESTDEV_HDR_WIDTH, io)) {
    case 1:
        t->func = io ? pci_io_testb : pci_mem_testb;
        break;
    case 2:
        t->func = io ? pci_io_testw : pci_mem_testw;
        break;
    case 4:
        t->func = io ? pci_io_testl : pci_mem_testl;
        break;
    default:
        pci_test.test_idx = -1;
        t->func = NULL;
        return false;
    }
    pci_test.data = ioreadl(addr + PCI_TESTDEV_HDR_DATA, io);
    pci_test.offset = ioreadl(addr + PCI_TESTDEV_HDR_OFFSET, io);
    /* vmexit bounds the name by `offset` too. */
    for (k = 0; k < pci_test.offset && k < sizeof(name) - 1; k++) {
        name[k] = (char)ioreadb(addr + PCI_TESTDEV_HDR_NAME + k, io);
        if (!name[k])
            break;
    }
    name[k] = '\0';
    printf("%s:", name);
    return true;
}

static bool pci_mem_next(struct test *t)
{
    bool ret = pci_next(t, pci_test.membar, false);
    if (ret)
        pci_test.mem = pci_test.membar + pci_test.offset;
    return ret;
}

static bool pci_io_next(struct test *t)
{
    bool ret = pci_next(t, pci_test.iobar, true);
    if (ret)
        pci_test.port = (u16)(pci_test.iobar + pci_test.offset);
    return ret;
}

/* lib/pci.c's BAR sizing: read, write all-ones, read back, restore. */
static u32 pci_bar_size_probe(u32 devfn, int bar)
{
    u32 reg = PCI_BAR0 + 4 * (u32)bar;
    u32 orig = pci_readl(devfn, reg);
    pci_writel(devfn, reg, ~0u);
    u32 val = pci_readl(devfn, reg);
    pci_writel(devfn, reg, orig);
    return val;
}

/* pci_find_dev + pci_dev_init as kvm-unit-tests does them; the BARs are used as firmware left them. */
static void pci_init(void)
{
    int devfn = pci_find_dev(PCI_VENDOR_REDHAT, PCI_DEVICE_TESTDEV);
    u64 resource[6] = { 0 };

    if (devfn < 0)
        return;
    for (int b = 0; b < 6; b++) {
        if (!pci_bar_size_probe((u32)devfn, b))
            continue;
        u32 bar = pci_readl((u32)devfn, PCI_BAR0 + 4 * (u32)b);
        bool is64 = !(bar & PCI_BAR_IO) && (bar & 0x6) == 0x4;
        resource[b] = bar & (bar & PCI_BAR_IO ? PCI_BAR_IO_MASK : PCI_BAR_MEM_MASK);
        if (is64 && b < 5) {
            pci_bar_size_probe((u32)devfn, b + 1);
            resource[b] |= (u64)pci_readl((u32)devfn, PCI_BAR0 + 4 * (u32)(b + 1)) << 32;
            resource[b + 1] = resource[b];
            b++;
        }
    }
    /* vmexit asserts these (an abort is exit 63). */
    if (pci_readl((u32)devfn, PCI_BAR0) & PCI_BAR_IO) {
        printf("kutvmexit: assert failed: pci-testdev BAR0 is not a memory BAR\n");
        finish(63);
    }
    if (!(pci_readl((u32)devfn, PCI_BAR0 + 4) & PCI_BAR_IO)) {
        printf("kutvmexit: assert failed: pci-testdev BAR1 is not an I/O BAR\n");
        finish(63);
    }
    pci_test.membar = resource[0];
    pci_test.iobar = (u32)resource[1];
    printf("pci-testdev at 0x%x membar %lx iobar %x\n", (u32)devfn, pci_test.membar, pci_test.iobar);
}

static struct test tests[] = {
    { cpuid_test, "cpuid", NULL, true, NULL },
    { inl_pmtimer, "inl_from_pmtimer", has_pmtimer, true, NULL },
    { inl_nop_qemu, "inl_from_qemu", NULL, true, NULL },
    { inl_nop_kernel, "inl_from_kernel", NULL, true, NULL },
    { outl_elcr_kernel, "outl_to_kernel", NULL, true, NULL },
    { ipi, "ipi", is_smp, false, NULL },
    { NULL, "pci-mem", NULL, false, pci_mem_next },
    { NULL, "pci-io", NULL, false, pci_io_next },
};

/* ---- vmexit's driver ---- */

static void (*parallel_func)(void);

static void run_test(void)
{
    for (unsigned i = 0; i < iterations; i++)
        parallel_func();
}

static bool do_test(struct test *t)
{
    u64 t1, t2;

    iterations = 32;
    if (t->valid && !t->valid()) {
        printf("%s (skipped)\n", t->name);
        return false;
    }
    if (t->next && !t->next(t))
        return false;
    if (!t->func) {
        printf("%s (skipped)\n", t->name);
        return false;
    }
    do {
        tsc_ipi = 0;
        iterations *= 2;
        t1 = rdtsc();
        if (!t->parallel) {
            for (unsigned i = 0; i < iterations; i++)
                t->func();
        } else {
            parallel_func = t->func;
            on_cpus(run_test);
        }
        t2 = rdtsc();
    } while (t2 - t1 < goal);
    printf("%s %d\n", t->name, (int)((t2 - t1) / iterations));
    if (tsc_ipi)
        printf("  ipi %s %d\n", t->name, (int)(tsc_ipi / iterations));
    return t->next != NULL;
}

/* Bare words name tests; key=value words are options. */
static bool test_wanted(const struct test *t, int argc, char **argv)
{
    bool any = false;
    for (int a = 1; a < argc; a++) {
        bool option = false;
        for (const char *p = argv[a]; *p; p++)
            option |= *p == '=';
        if (option)
            continue;
        any = true;
        if (!strcmp(argv[a], t->name))
            return true;
    }
    return !any;
}

int main(int argc, char **argv)
{
    goal = cmdline_u64("goal", DEFAULT_GOAL);
    if (!goal)
        goal = 1;
    smp_init();
    printf("kutvmexit: %u cpus, goal %lu cycles\n", nr_cpus, goal);
    pci_init();

    for (size_t k = 0; k < ARRAY_SIZE(tests); k++)
        if (test_wanted(&tests[k], argc, argv))
            while (do_test(&tests[k])) {
            }
    finish(0);
}
