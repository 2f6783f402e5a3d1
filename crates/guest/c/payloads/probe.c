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
 *
 * PCI scenarios (19-32) have a per-scenario setup before the warm-up
 * (prepare(): find pci-testdev through CF8/CFC, select its test) and a
 * teardown after the last batch (deselect); see pci_prepare().
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

/* ---- PCI: pci-testdev, configuration reads and bus scans (scenarios 19-32) ---- */

/* What the bus scan found, once per boot. */
static struct {
    bool probed;
    int devfn;  /* pci-testdev, -1 if absent */
    u64 membar; /* BAR0 as firmware left it; 0 if it is not a 32-bit memory BAR */
    u32 iobar;  /* BAR1 likewise; 0 if it is not an I/O BAR */
    int ecam;   /* -1 not probed yet, 0 no ECAM at ECAM_BASE, 1 ECAM answers */
} pci = { .ecam = -1 };

enum { PT_MMIO, PT_PIO, PT_ABS_PORT };

/* The selected pci-testdev test, from its header. */
static struct {
    bool selected; /* a test is selected and must be deselected afterwards */
    bool io;       /* the header (and the test) is on BAR1, else BAR0 */
    u32 how;  /* PT_* */
    u32 width;
    u64 addr; /* MMIO address, or port for PT_PIO/PT_ABS_PORT */
    u32 data;
} pt;

static void pci_probe(void)
{
    if (pci.probed)
        return;
    pci.probed = true;
    pci.devfn = pci_find_dev(PCI_VENDOR_REDHAT, PCI_DEVICE_TESTDEV);
    if (pci.devfn < 0) {
        printf("probe: no pci-testdev on bus 0\n");
        return;
    }
    u32 b0 = pci_readl((u32)pci.devfn, PCI_BAR0);
    u32 b1 = pci_readl((u32)pci.devfn, PCI_BAR0 + 4);
    if (!(b0 & PCI_BAR_IO) && !(b0 & 0x6)) /* memory, 32-bit */
        pci.membar = b0 & PCI_BAR_MEM_MASK;
    if (b1 & PCI_BAR_IO)
        pci.iobar = b1 & PCI_BAR_IO_MASK;
    printf("probe: pci-testdev at 0x%x membar %lx iobar %x\n", (u32)pci.devfn, pci.membar, pci.iobar);
}

/* ECAM is there if devfn 0 (every PC has a host bridge) reads a real vendor ID through it. */
static bool ecam_present(void)
{
    if (pci.ecam < 0) {
        u16 vendor = (u16)mmio_read32(ECAM_BASE);
        pci.ecam = vendor != 0xffff && vendor != 0;
        if (!pci.ecam)
            printf("probe: no ECAM at 0x%lx (devfn 0 reads 0x%x)\n", (u64)ECAM_BASE, vendor);
    }
    return pci.ecam;
}

static u64 ecam_addr(u32 devfn, u32 reg) { return ECAM_BASE + ((u64)devfn << 12) + reg; }

static void hdr_writeb(u32 off, u8 v)
{
    if (pt.io)
        outb((u16)(pci.iobar + off), v);
    else
        mmio_write8(pci.membar + off, v);
}

static u8 hdr_readb(u32 off) { return pt.io ? inb((u16)(pci.iobar + off)) : mmio_read8(pci.membar + off); }
static u32 hdr_readl(u32 off) { return pt.io ? inl((u16)(pci.iobar + off)) : mmio_read32(pci.membar + off); }

/* Any value >= 3 but PCI_TESTDEV_PV_SELECT deselects, on QEMU and on trapline. */
static void testdev_deselect(void)
{
    if (pt.selected)
        hdr_writeb(PCI_TESTDEV_HDR_TEST, 0xff);
    pt.selected = false;
}

/* Whether the header's name is the scenario name up to its ':'. */
static bool testdev_name_is(const char *scenario)
{
    size_t len = 0;
    while (scenario[len] && scenario[len] != ':')
        len++;
    for (size_t k = 0; k <= len; k++) {
        u8 c = hdr_readb(PCI_TESTDEV_HDR_NAME + (u32)k);
        if (k == len)
            return c == 0;
        if (c != (u8)scenario[k])
            return false;
    }
    return false;
}

/* Scenarios 19-26: select the test on its BAR and read what and where to write. */
static u32 testdev_select(u32 id, const char *name)
{
    bool io = id >= SCENARIO_PCI_PORTIO_NO_EVENTFD;
    u32 k = id - (io ? SCENARIO_PCI_PORTIO_NO_EVENTFD : SCENARIO_PCI_MMIO_NO_EVENTFD);
    u8 select = k < 3 ? (u8)k : (u8)PCI_TESTDEV_PV_SELECT;

    pci_probe();
    if (pci.devfn < 0 || (io ? !pci.iobar : !pci.membar))
        return RESULT_UNSUPPORTED;
    pt.io = io;
    pt.selected = true;
    hdr_writeb(PCI_TESTDEV_HDR_TEST, select);
    pt.width = hdr_readb(PCI_TESTDEV_HDR_WIDTH);
    if (pt.width != 1 && pt.width != 2 && pt.width != 4) {
        /* The device does not offer this test (QEMU has no PV variants). */
        testdev_deselect();
        return RESULT_UNSUPPORTED;
    }
    if (!testdev_name_is(name)) {
        testdev_deselect();
        return RESULT_BAD_VALUE;
    }
    u32 offset = hdr_readl(PCI_TESTDEV_HDR_OFFSET);
    pt.data = hdr_readl(PCI_TESTDEV_HDR_DATA);
    if (offset & PCI_TESTDEV_OFFSET_ABSOLUTE) {
        pt.how = PT_ABS_PORT;
        pt.addr = offset & ~(u32)PCI_TESTDEV_OFFSET_ABSOLUTE;
        if (pt.addr > 0xfffc)
            goto bad;
    } else if (io) {
        pt.how = PT_PIO;
        pt.addr = pci.iobar + offset;
        if ((u64)offset + pt.width > PCI_TESTDEV_IO_BAR_SIZE || pt.addr + pt.width > 0x10000)
            goto bad;
    } else {
        pt.how = PT_MMIO;
        pt.addr = pci.membar + offset;
        if ((u64)offset + pt.width > PCI_TESTDEV_MEM_BAR_SIZE)
            goto bad;
    }
    return RESULT_OK;
bad:
    printf("probe: %s: header offset 0x%x width %u is outside its target\n", name, offset, pt.width);
    testdev_deselect();
    return RESULT_BAD_VALUE;
}

/* Per-scenario setup, once before the warm-up. Anything but RESULT_OK skips the scenario. */
static u32 prepare(u32 id, const char *name)
{
    switch (id) {
    case SCENARIO_PCI_MMIO_NO_EVENTFD ... SCENARIO_PCI_PORTIO_PV_EVENTFD:
        return testdev_select(id, name);
    case SCENARIO_PCI_CONFIG_READ_CF8:
        pci_probe();
        return pci.devfn < 0 ? RESULT_UNSUPPORTED : RESULT_OK;
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        pci_probe();
        return pci.devfn < 0 || !ecam_present() ? RESULT_UNSUPPORTED : RESULT_OK;
    case SCENARIO_PCI_SCAN_ECAM:
    case SCENARIO_PCI_SCAN_ECAM_RO:
        return ecam_present() ? RESULT_OK : RESULT_UNSUPPORTED;
    default:
        return RESULT_OK;
    }
}

/* Per-scenario teardown after the last batch (or a failed setup). */
static void cleanup(void) { testdev_deselect(); }

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
    case SCENARIO_PCI_MMIO_NO_EVENTFD ... SCENARIO_PCI_PORTIO_PV_EVENTFD:
        /* One store or OUT of `data` with the header's width; PV: a 32-bit OUT to the absolute port. */
        if (pt.how == PT_MMIO && pt.width == 1)
            LOOP("movb %b[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "q"(pt.data) : "memory");
        else if (pt.how == PT_MMIO && pt.width == 2)
            LOOP("movw %w[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "r"(pt.data) : "memory");
        else if (pt.how == PT_MMIO)
            LOOP("movl %k[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "r"(pt.data) : "memory");
        else if (pt.how == PT_PIO && pt.width == 1)
            LOOP("outb %%al, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(pt.data), "d"((u16)pt.addr) : "memory");
        else if (pt.how == PT_PIO && pt.width == 2)
            LOOP("outw %%ax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(pt.data), "d"((u16)pt.addr) : "memory");
        else
            LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(pt.data), "d"((u16)pt.addr) : "memory");
        v = hdr_readl(PCI_TESTDEV_HDR_COUNT);
        break;
    case SCENARIO_PCI_CONFIG_READ_CF8:
        /* Two exits: the address OUT and the data IN. */
        LOOP("movl %k[cf8], %%eax\n\tmovw %[ap], %%dx\n\toutl %%eax, %%dx\n\tmovw %[dp], %%dx\n\tinl %%dx, %%eax",
             : [i] "+r"(i), "+a"(v)
             : [n] "r"(n), [cf8] "r"(pci_cf8_addr((u32)pci.devfn, 0)), [ap] "i"((u16)PCI_CONFIG_ADDRESS_PORT),
               [dp] "i"((u16)PCI_CONFIG_DATA_PORT)
             : "rdx", "memory");
        break;
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        /* The same load for both: only the host's mapping of the window differs. */
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"(ecam_addr((u32)pci.devfn, 0)) : "memory");
        break;
    case SCENARIO_PCI_SCAN_CF8:
        /* One iteration: devfn 0..255, vendor/device dword each; v = functions whose vendor is not 0xffff. */
        LOOP("xorl %k[f], %k[f]\n\tmovl %k[first], %%ecx\n"
             "2:\n\tmovl %%ecx, %%eax\n\tmovw %[ap], %%dx\n\toutl %%eax, %%dx\n\tmovw %[dp], %%dx\n\tinl %%dx, %%eax\n\t"
             "cmpw $0xffff, %%ax\n\tje 3f\n\tincl %k[f]\n"
             "3:\n\taddl $0x100, %%ecx\n\tcmpl %k[last], %%ecx\n\tjne 2b",
             : [i] "+r"(i), [f] "+r"(v)
             : [n] "r"(n), [first] "r"(pci_cf8_addr(0, 0)), [last] "r"(pci_cf8_addr(0, 0) + 0x10000),
               [ap] "i"((u16)PCI_CONFIG_ADDRESS_PORT), [dp] "i"((u16)PCI_CONFIG_DATA_PORT)
             : "rax", "rcx", "rdx", "memory");
        break;
    case SCENARIO_PCI_SCAN_ECAM:
    case SCENARIO_PCI_SCAN_ECAM_RO:
        LOOP("xorl %k[f], %k[f]\n\tmovq %[first], %%rcx\n"
             "2:\n\tmovl (%%rcx), %%eax\n\tcmpw $0xffff, %%ax\n\tje 3f\n\tincl %k[f]\n"
             "3:\n\taddq $0x1000, %%rcx\n\tcmpq %[last], %%rcx\n\tjne 2b",
             : [i] "+r"(i), [f] "+r"(v)
             : [n] "r"(n), [first] "r"(ecam_addr(0, 0)), [last] "r"(ecam_addr(0, 0) + 0x100000)
             : "rax", "rcx", "memory");
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
    case SCENARIO_PCI_CONFIG_READ_CF8:
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        return value == PCI_TESTDEV_ID ? RESULT_OK : RESULT_BAD_VALUE;
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

    /* A scenario the machine cannot run (no pci-testdev, no ECAM, ...) is skipped with that status. */
    status = prepare(id, name);
    /* The warm-up is also the "is it implemented" test, so it runs at least once. */
    if (status == RESULT_OK && !run(id, warmup ? warmup : 1, &cycles, &value))
        status = RESULT_UNSUPPORTED;
    if (status != RESULT_OK) {
        report(name, id, 0, 0, 0, status);
        printf("TRAPLINE-RESULT %s iters=0 cycles=0 value=0x0 status=%u\n", name, status);
        cleanup();
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
    cleanup();
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
