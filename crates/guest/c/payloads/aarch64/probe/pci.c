/*
 * The arm64 probe's PCI scenarios (ROUTINE_PCI) on the virt machine's PCIe
 * host: pci-testdev's tests on BAR0 (the 32-bit MMIO window) and on BAR1,
 * reached through the PCI I/O window (port p is MMIO at VIRT_PCIE_PIO_BASE
 * + p), selected through the device's header as on x86; and configuration
 * reads and bus-0 scans through ECAM (VIRT_PCIE_ECAM_BASE), the only
 * configuration access there is on arm64. Every store and load is a plain STR/LDR, so KVM can
 * decode it for user space. trapline places the BARs as a firmware would;
 * QEMU's virt without firmware leaves them at 0, so the probe assigns an
 * unassigned one itself (BAR0 at the start of the 32-bit MMIO window, BAR1
 * at the first I/O BAR port) and turns on memory and I/O decode, as
 * kvm-unit-tests does there.
 */
#include "../../common/probe/probe.h"

/* What the bus scan found, once per boot. */
static struct {
    bool probed;
    int devfn;  /* pci-testdev, -1 if absent */
    u64 membar; /* BAR0 as the VMM left it; 0 if it is not a 32-bit memory BAR */
    u64 iobar;  /* BAR1's port likewise; 0 if it is not an I/O BAR */
} pci;

/* The selected pci-testdev test, from its header. */
static struct {
    bool selected; /* a test is selected and must be deselected afterwards */
    bool io;       /* the header (and the test) is on BAR1, else BAR0 */
    u32 width;
    u64 addr; /* CPU address of the write (a port's is in the I/O window) */
    u32 data;
} pt;

static u64 ecam_addr(u32 devfn, u32 reg) { return VIRT_PCIE_ECAM_BASE + ((u64)devfn << 12) + reg; }
static u32 ecam_readl(u32 devfn, u32 reg) { return mmio_read32(ecam_addr(devfn, reg)); }
static void ecam_writel(u32 devfn, u32 reg, u32 v) { mmio_write32(ecam_addr(devfn, reg), v); }
static u64 port_addr(u64 port) { return VIRT_PCIE_PIO_BASE + port; }

/*
 * Gives pci-testdev's BARs an address if they have none (QEMU without
 * firmware) and enables the decode they need; BARs trapline placed are
 * left where they are. pci-testdev is alone in the windows here.
 */
static void testdev_assign(u32 devfn)
{
    u32 b0 = ecam_readl(devfn, PCI_BAR0);
    u32 b1 = ecam_readl(devfn, PCI_BAR0 + 4);
    u16 decode = 0;
    if (!(b0 & PCI_BAR_IO) && !(b0 & 0x6)) {
        if (!(b0 & PCI_BAR_MEM_MASK))
            ecam_writel(devfn, PCI_BAR0, (u32)VIRT_PCIE_MMIO_BASE);
        decode |= PCI_COMMAND_MEMORY;
    }
    if (b1 & PCI_BAR_IO) {
        if (!(b1 & PCI_BAR_IO_MASK))
            ecam_writel(devfn, PCI_BAR0 + 4, (u32)VIRT_PCIE_IO_BAR_FIRST_PORT);
        decode |= PCI_COMMAND_IO;
    }
    u16 cmd = mmio_read16(ecam_addr(devfn, PCI_COMMAND));
    if ((cmd & decode) != decode)
        mmio_write16(ecam_addr(devfn, PCI_COMMAND), cmd | decode);
}

static void pci_probe(void)
{
    if (pci.probed)
        return;
    pci.probed = true;
    pci.devfn = -1;
    for (u32 devfn = 0; devfn < 256; devfn++) {
        if (ecam_readl(devfn, 0) == ((u32)PCI_DEVICE_TESTDEV << 16 | PCI_VENDOR_REDHAT)) {
            pci.devfn = (int)devfn;
            break;
        }
    }
    if (pci.devfn < 0) {
        printf("probe: no pci-testdev on bus 0 (ECAM at 0x%lx)\n", (u64)VIRT_PCIE_ECAM_BASE);
        return;
    }
    testdev_assign((u32)pci.devfn);
    u32 b0 = ecam_readl((u32)pci.devfn, PCI_BAR0);
    u32 b1 = ecam_readl((u32)pci.devfn, PCI_BAR0 + 4);
    if (!(b0 & PCI_BAR_IO) && !(b0 & 0x6)) /* memory, 32-bit */
        pci.membar = b0 & PCI_BAR_MEM_MASK;
    if ((b1 & PCI_BAR_IO) && (b1 & PCI_BAR_IO_MASK) + PCI_TESTDEV_IO_BAR_SIZE <= VIRT_PCIE_PIO_LEN)
        pci.iobar = b1 & PCI_BAR_IO_MASK;
    printf("probe: pci-testdev at 0x%x membar %lx iobar %lx\n", (u32)pci.devfn, pci.membar, pci.iobar);
}

static u64 hdr(u32 off) { return (pt.io ? port_addr(pci.iobar) : pci.membar) + off; }
static void hdr_writeb(u32 off, u8 v) { mmio_write8(hdr(off), v); }
static u8 hdr_readb(u32 off) { return mmio_read8(hdr(off)); }
/* The header is one byte wide (QEMU's .impl); the device serves a word as four bytes. */
static u32 hdr_readl(u32 off) { return mmio_read32(hdr(off)); }

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
        /* An absolute port (the PV doorbell): in the I/O window. */
        u64 port = offset & ~(u32)PCI_TESTDEV_OFFSET_ABSOLUTE;
        if (port + pt.width > VIRT_PCIE_PIO_LEN)
            goto bad;
        pt.addr = port_addr(port);
    } else if (io) {
        if ((u64)offset + pt.width > PCI_TESTDEV_IO_BAR_SIZE)
            goto bad;
        pt.addr = port_addr(pci.iobar + offset);
    } else {
        if ((u64)offset + pt.width > PCI_TESTDEV_MEM_BAR_SIZE)
            goto bad;
        pt.addr = pci.membar + offset;
    }
    return RESULT_OK;
bad:
    printf("probe: %s: header offset 0x%x width %u is outside its target\n", name, offset, pt.width);
    testdev_deselect();
    return RESULT_BAD_VALUE;
}

/* Per-scenario setup: find the device, select the test. */
u32 pci_prepare(u32 id, const char *name)
{
    switch (id) {
    case SCENARIO_PCI_MMIO_NO_EVENTFD ... SCENARIO_PCI_PORTIO_PV_EVENTFD:
        return testdev_select(id, name);
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        pci_probe();
        return pci.devfn < 0 ? RESULT_UNSUPPORTED : RESULT_OK;
    case SCENARIO_PCI_SCAN_ECAM:
    case SCENARIO_PCI_SCAN_ECAM_RO:
        return RESULT_OK;
    default:
        /* CF8/CFC does not exist on arm64. */
        return RESULT_UNSUPPORTED;
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
        /* One store of `data` with the header's width (both BARs are MMIO to the CPU). */
        if (pt.width == 1)
            LOOP("strb %w[d], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "r"(pt.data) : "cc", "memory");
        else if (pt.width == 2)
            LOOP("strh %w[d], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "r"(pt.data) : "cc", "memory");
        else
            LOOP("str %w[d], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"(pt.addr), [d] "r"(pt.data) : "cc", "memory");
        v = hdr_readl(PCI_TESTDEV_HDR_COUNT);
        break;
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        /* The same load for both: only the host's mapping of the window differs. */
        LOOP("ldr %w[v], [%[a]]", : [i] "+r"(i), [v] "+r"(v) : [n] "r"(n), [a] "r"(ecam_addr((u32)pci.devfn, 0))
             : "cc", "memory");
        break;
    case SCENARIO_PCI_SCAN_ECAM:
    case SCENARIO_PCI_SCAN_ECAM_RO:
        /* One iteration: devfn 0..255 of bus 0, vendor/device dword each; v = functions whose vendor is not 0xffff. */
        LOOP("mov %[f], #0\n\tmov x9, %[first]\n"
             "2:\n\tldr w10, [x9]\n\tand w10, w10, #0xffff\n\tcmp w10, %w[none]\n\tb.eq 3f\n\tadd %[f], %[f], #1\n"
             "3:\n\tadd x9, x9, #0x1000\n\tcmp x9, %[last]\n\tb.ne 2b",
             : [i] "+r"(i), [f] "+r"(v)
             : [n] "r"(n), [first] "r"(ecam_addr(0, 0)), [last] "r"(ecam_addr(0, 0) + 0x100000), [none] "r"(0xffffu)
             : "x9", "x10", "cc", "memory");
        break;
    default:
        return false;
    }
    *cycles = t1 - t0;
    *value = v;
    return true;
}
