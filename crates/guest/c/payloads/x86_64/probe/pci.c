/*
 * The x86 probe's side of the PCI scenarios (ROUTINE_PCI; testdev.c is
 * the shared side): configuration mechanism #1 (CF8/CFC, the runtime's
 * pci.c) and ECAM at ECAM_BASE, and the timed loops: pci-testdev's writes
 * (a store on BAR0, an OUT on BAR1 or to the PV test's absolute port),
 * configuration reads and bus-0 scans.
 */
#include "probe/probe.h"

int pci_find_testdev(void)
{
    int devfn = pci_find_dev(PCI_VENDOR_REDHAT, PCI_DEVICE_TESTDEV);
    if (devfn < 0)
        printf("probe: no pci-testdev on bus 0\n");
    return devfn;
}

u32 pci_config_readl(u32 devfn, u32 reg) { return pci_readl(devfn, reg); }

bool pci_cf8_present(void) { return true; }

/* ECAM is there if devfn 0 (every PC has a host bridge) reads a real vendor ID through it. */
bool pci_ecam_present(void)
{
    static int ecam = -1; /* -1 not asked yet, 0 no ECAM at ECAM_BASE, 1 ECAM answers */
    if (ecam < 0) {
        u16 vendor = (u16)mmio_read32(ECAM_BASE);
        ecam = vendor != 0xffff && vendor != 0;
        if (!ecam)
            printf("probe: no ECAM at 0x%lx (devfn 0 reads 0x%x)\n", (u64)ECAM_BASE, vendor);
    }
    return ecam;
}

static u64 ecam_addr(u32 devfn, u32 reg) { return ECAM_BASE + ((u64)devfn << 12) + reg; }

u64 pci_testdev_loop(const struct testdev_target *t, u64 n)
{
    u64 i = 0, t0 = 0, t1 = 0;

    /* One store or OUT of `data` with the header's width; PV: a 32-bit OUT to the absolute port. */
    if (t->how == PT_MMIO && t->width == 1)
        LOOP("movb %b[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(t->addr), [d] "q"(t->data) : "memory");
    else if (t->how == PT_MMIO && t->width == 2)
        LOOP("movw %w[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(t->addr), [d] "r"(t->data) : "memory");
    else if (t->how == PT_MMIO)
        LOOP("movl %k[d], (%[a])", : [i] "+r"(i) : [n] "r"(n), [a] "r"(t->addr), [d] "r"(t->data) : "memory");
    else if (t->how == PT_PIO && t->width == 1)
        LOOP("outb %%al, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(t->data), "d"((u16)t->addr) : "memory");
    else if (t->how == PT_PIO && t->width == 2)
        LOOP("outw %%ax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(t->data), "d"((u16)t->addr) : "memory");
    else
        LOOP("outl %%eax, %%dx", : [i] "+r"(i) : [n] "r"(n), "a"(t->data), "d"((u16)t->addr) : "memory");
    return t1 - t0;
}

bool pci_config_loop(u32 id, u32 devfn, u64 n, u64 *cycles, u64 *value)
{
    u64 i = 0, v = 0, t0 = 0, t1 = 0;

    switch (id) {
    case SCENARIO_PCI_CONFIG_READ_CF8:
        /* Two exits: the address OUT and the data IN. */
        LOOP("movl %k[cf8], %%eax\n\tmovw %[ap], %%dx\n\toutl %%eax, %%dx\n\tmovw %[dp], %%dx\n\tinl %%dx, %%eax",
             : [i] "+r"(i), "+a"(v)
             : [n] "r"(n), [cf8] "r"(pci_cf8_addr(devfn, 0)), [ap] "i"((u16)PCI_CONFIG_ADDRESS_PORT),
               [dp] "i"((u16)PCI_CONFIG_DATA_PORT)
             : "rdx", "memory");
        break;
    case SCENARIO_PCI_CONFIG_READ_ECAM:
    case SCENARIO_PCI_CONFIG_READ_ECAM_RO:
        /* The same load for both: only the host's mapping of the window differs. */
        LOOP("movl (%[a]), %%eax", : [i] "+r"(i), "+a"(v) : [n] "r"(n), [a] "r"(ecam_addr(devfn, 0)) : "memory");
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
