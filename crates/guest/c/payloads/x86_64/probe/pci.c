/*
 * The probe's PCI scenarios (ROUTINE_PCI): pci-testdev's tests on BAR0 and BAR1
 * (selected through the device's header, as QEMU's pci-testdev defines
 * it), configuration reads through CF8/CFC and ECAM, and bus-0 scans.
 */
#include "../../common/probe/probe.h"

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

/* Per-scenario setup: find the device (and ECAM), select the test. */
u32 pci_prepare(u32 id, const char *name)
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

/* Deselects the pci-testdev test, if one is selected. */
void pci_cleanup(void) { testdev_deselect(); }

/* Runs n >= 1 iterations of PCI scenario id; false if it is not one. */
bool pci_run(u32 id, u64 n, u64 *cycles, u64 *value)
{
    u64 i = 0, v = 0, t0 = 0, t1 = 0;

    switch (id) {
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
