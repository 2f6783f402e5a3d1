/*
 * The arm64 probe's side of the PCI scenarios (ROUTINE_PCI; testdev.c is
 * the shared side) on the virt machine's PCIe host: configuration space
 * through ECAM (VIRT_PCIE_ECAM_BASE), the only configuration access there
 * is on arm64, and the timed loops: pci-testdev's writes (BAR0 in the
 * 32-bit MMIO window, BAR1 reached through the PCI I/O window: both are
 * stores to the CPU), configuration reads and bus-0 scans. Every store and
 * load is a plain STR/LDR, so KVM can decode it for user space. trapline
 * places the BARs as a firmware would; QEMU's virt without firmware leaves
 * them at 0, so the probe assigns an unassigned one itself (BAR0 at the
 * start of the 32-bit MMIO window, BAR1 at the first I/O BAR port) and
 * turns on memory and I/O decode, as kvm-unit-tests does there.
 */
#include "probe/probe.h"

static u64 ecam_addr(u32 devfn, u32 reg) { return VIRT_PCIE_ECAM_BASE + ((u64)devfn << 12) + reg; }
static void ecam_writel(u32 devfn, u32 reg, u32 v) { mmio_write32(ecam_addr(devfn, reg), v); }

u32 pci_config_readl(u32 devfn, u32 reg) { return mmio_read32(ecam_addr(devfn, reg)); }

bool pci_cf8_present(void) { return false; }

bool pci_ecam_present(void) { return true; }

/*
 * Gives pci-testdev's BARs an address if they have none (QEMU without
 * firmware) and enables the decode they need; BARs trapline placed are
 * left where they are. pci-testdev is alone in the windows here.
 */
static void testdev_assign(u32 devfn)
{
    u32 b0 = pci_config_readl(devfn, PCI_BAR0);
    u32 b1 = pci_config_readl(devfn, PCI_BAR0 + 4);
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

int pci_find_testdev(void)
{
    for (u32 devfn = 0; devfn < 256; devfn++) {
        if (pci_config_readl(devfn, 0) == ((u32)PCI_DEVICE_TESTDEV << 16 | PCI_VENDOR_REDHAT)) {
            testdev_assign(devfn);
            return (int)devfn;
        }
    }
    printf("probe: no pci-testdev on bus 0 (ECAM at 0x%lx)\n", (u64)VIRT_PCIE_ECAM_BASE);
    return -1;
}

/* One store of `data` with the header's width (both BARs are MMIO to the CPU). */
u64 pci_testdev_loop(const struct testdev_target *t, u64 n)
{
    u64 i = 0, t0 = 0, t1 = 0;

    if (t->width == 1)
        LOOP("strb %w[d], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"(t->addr), [d] "r"(t->data) : "cc", "memory");
    else if (t->width == 2)
        LOOP("strh %w[d], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"(t->addr), [d] "r"(t->data) : "cc", "memory");
    else
        LOOP("str %w[d], [%[a]]", : [i] "+r"(i) : [n] "r"(n), [a] "r"(t->addr), [d] "r"(t->data) : "cc", "memory");
    return t1 - t0;
}

bool pci_config_loop(u32 id, u32 devfn, u64 n, u64 *cycles, u64 *value)
{
    u64 i = 0, v = 0, t0 = 0, t1 = 0;

    switch (id) {
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        /* The same load for both: only the host's mapping of the window differs. */
        LOOP("ldr %w[v], [%[a]]", : [i] "+r"(i), [v] "+r"(v) : [n] "r"(n), [a] "r"(ecam_addr(devfn, 0))
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
