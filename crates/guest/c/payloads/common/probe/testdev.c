/*
 * The probe's PCI scenarios (ROUTINE_PCI), the part both architectures
 * share: finding pci-testdev once and taking its BARs as the VMM (or
 * firmware) left them, selecting a test through the device's header (as
 * QEMU's pci-testdev defines it: BAR0 memory, BAR1 ports) and each
 * scenario's set-up. pci.c holds the architecture's configuration access
 * and the timed loops; on arm64 ports are the PCIe host's I/O window.
 */
#include "probe.h"

/* What the bus scan found, once per boot. */
static struct {
    bool probed;
    int devfn;  /* pci-testdev, -1 if absent */
    u64 membar; /* BAR0 as the VMM left it; 0 if it is not a 32-bit memory BAR */
    u64 iobar;  /* BAR1's port likewise; 0 if it is not an I/O BAR inside the port space */
} pci;

/* The selected pci-testdev test. */
static struct {
    bool selected; /* a test is selected and must be deselected afterwards */
    bool io;       /* the header (and the test) is on BAR1, else BAR0 */
} sel;
static struct testdev_target pt;

static void pci_probe(void)
{
    if (pci.probed)
        return;
    pci.probed = true;
    pci.devfn = pci_find_testdev();
    if (pci.devfn < 0)
        return;
    u32 b0 = pci_config_readl((u32)pci.devfn, PCI_BAR0);
    u32 b1 = pci_config_readl((u32)pci.devfn, PCI_BAR0 + 4);
    if (!(b0 & PCI_BAR_IO) && !(b0 & 0x6)) /* memory, 32-bit */
        pci.membar = b0 & PCI_BAR_MEM_MASK;
    if ((b1 & PCI_BAR_IO) && (b1 & PCI_BAR_IO_MASK) + PCI_TESTDEV_IO_BAR_SIZE <= PCI_PORT_END)
        pci.iobar = b1 & PCI_BAR_IO_MASK;
    printf("probe: pci-testdev at 0x%x membar %lx iobar %lx\n", (u32)pci.devfn, pci.membar, pci.iobar);
}

static void hdr_writeb(u32 off, u8 v)
{
    if (sel.io)
        pci_port_write8(pci.iobar + off, v);
    else
        mmio_write8(pci.membar + off, v);
}

static u8 hdr_readb(u32 off) { return sel.io ? pci_port_read8(pci.iobar + off) : mmio_read8(pci.membar + off); }
static u32 hdr_readl(u32 off) { return sel.io ? pci_port_read32(pci.iobar + off) : mmio_read32(pci.membar + off); }

/* Any value >= 3 but PCI_TESTDEV_PV_SELECT deselects, on QEMU and on trapline. */
static void testdev_deselect(void)
{
    if (sel.selected)
        hdr_writeb(PCI_TESTDEV_HDR_TEST, 0xff);
    sel.selected = false;
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

/* Where the selected test writes, from the header's offset; false if that is outside its target. */
static bool testdev_target(u32 offset)
{
    if (offset & PCI_TESTDEV_OFFSET_ABSOLUTE) {
        /* An absolute port (the PV doorbell). */
        u64 port = offset & ~(u32)PCI_TESTDEV_OFFSET_ABSOLUTE;
        pt.how = PT_ABS_PORT;
        pt.addr = pci_port_addr(port);
        return port + PCI_ABS_PORT_WIDTH(pt.width) <= PCI_PORT_END;
    }
    if (sel.io) {
        u64 port = pci.iobar + offset;
        pt.how = PT_PIO;
        pt.addr = pci_port_addr(port);
        return (u64)offset + pt.width <= PCI_TESTDEV_IO_BAR_SIZE && port + pt.width <= PCI_PORT_END;
    }
    pt.how = PT_MMIO;
    pt.addr = pci.membar + offset;
    return (u64)offset + pt.width <= PCI_TESTDEV_MEM_BAR_SIZE;
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
    sel.io = io;
    sel.selected = true;
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
    if (!testdev_target(offset)) {
        printf("probe: %s: header offset 0x%x width %u is outside its target\n", name, offset, pt.width);
        testdev_deselect();
        return RESULT_BAD_VALUE;
    }
    return RESULT_OK;
}

/* Per-scenario setup: find the device (and ECAM), select the test. */
u32 pci_prepare(u32 id, const char *name)
{
    switch (id) {
    case SCENARIO_PCI_MMIO_NO_EVENTFD ... SCENARIO_PCI_PORTIO_PV_EVENTFD:
        return testdev_select(id, name);
    case SCENARIO_PCI_CONFIG_READ_CF8:
        if (!pci_cf8_present())
            return RESULT_UNSUPPORTED;
        pci_probe();
        return pci.devfn < 0 ? RESULT_UNSUPPORTED : RESULT_OK;
    case SCENARIO_PCI_SCAN_CF8:
        return pci_cf8_present() ? RESULT_OK : RESULT_UNSUPPORTED;
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        pci_probe();
        return pci.devfn < 0 || !pci_ecam_present() ? RESULT_UNSUPPORTED : RESULT_OK;
    case SCENARIO_PCI_SCAN_ECAM:
    case SCENARIO_PCI_SCAN_ECAM_RO:
        return pci_ecam_present() ? RESULT_OK : RESULT_UNSUPPORTED;
    default:
        return RESULT_UNSUPPORTED;
    }
}

/* Deselects the pci-testdev test, if one is selected. */
void pci_cleanup(void) { testdev_deselect(); }

/* The selected test's target (the anatomy pass writes it itself, stamped). */
const struct testdev_target *pci_testdev_selected(void) { return &pt; }

/* Runs n >= 1 iterations of PCI scenario id; false if it is not one. */
bool pci_run(u32 id, u64 n, u64 *cycles, u64 *value)
{
    switch (id) {
    case SCENARIO_PCI_MMIO_NO_EVENTFD ... SCENARIO_PCI_PORTIO_PV_EVENTFD:
        *cycles = pci_testdev_loop(&pt, n);
        /* The device's count, read back on the same BAR: warm-up and every batch so far. */
        *value = hdr_readl(PCI_TESTDEV_HDR_COUNT);
        return true;
    default:
        return pci_config_loop(id, (u32)pci.devfn, n, cycles, value);
    }
}
