/*
 * PCI configuration mechanism #1 on bus 0, the way kvm-unit-tests does it:
 * the register's low bits go into CF8 and the data access is always at
 * 0xCFC (spec §3.6), so a VMM that masks CF8 bits 1:0 reads the wrong
 * register here too.
 */
#include "rt.h"

u8 pci_readb(u32 devfn, u32 reg)
{
    outl(PCI_CONFIG_ADDRESS_PORT, pci_cf8_addr(devfn, reg));
    return inb(PCI_CONFIG_DATA_PORT);
}

u16 pci_readw(u32 devfn, u32 reg)
{
    outl(PCI_CONFIG_ADDRESS_PORT, pci_cf8_addr(devfn, reg));
    return inw(PCI_CONFIG_DATA_PORT);
}

u32 pci_readl(u32 devfn, u32 reg)
{
    outl(PCI_CONFIG_ADDRESS_PORT, pci_cf8_addr(devfn, reg));
    return inl(PCI_CONFIG_DATA_PORT);
}

void pci_writel(u32 devfn, u32 reg, u32 v)
{
    outl(PCI_CONFIG_ADDRESS_PORT, pci_cf8_addr(devfn, reg));
    outl(PCI_CONFIG_DATA_PORT, v);
}

/* kvm-unit-tests' pci_find_dev: every devfn of bus 0, vendor at 0 and device at 2 as 16-bit reads. */
int pci_find_dev(u16 vendor, u16 device)
{
    for (u32 devfn = 0; devfn < 256; devfn++)
        if (pci_readw(devfn, 0) == vendor && pci_readw(devfn, 2) == device)
            return (int)devfn;
    return -1;
}
