/*
 * PCI configuration registers and QEMU's pci-testdev BAR header, for the
 * payloads of both architectures (x86 reaches config space through CF8/CFC
 * or ECAM, arm64 through the virt machine's ECAM only).
 */
#ifndef TRAPLINE_PCI_REGS_H
#define TRAPLINE_PCI_REGS_H

#define PCI_VENDOR_REDHAT 0x1b36
#define PCI_DEVICE_TESTDEV 0x0005
#define PCI_COMMAND 0x04
#define PCI_COMMAND_IO 0x1u
#define PCI_COMMAND_MEMORY 0x2u
#define PCI_BAR0 0x10
#define PCI_BAR_IO 0x1u
#define PCI_BAR_IO_MASK (~0x3u)
#define PCI_BAR_MEM_MASK (~0xfu)

/* pci-testdev's BAR header (QEMU hw/misc/pci-testdev.c, 1-byte granular). */
#define PCI_TESTDEV_HDR_TEST 0
#define PCI_TESTDEV_HDR_WIDTH 1
#define PCI_TESTDEV_HDR_OFFSET 4
#define PCI_TESTDEV_HDR_DATA 8
#define PCI_TESTDEV_HDR_COUNT 12
#define PCI_TESTDEV_HDR_NAME 16
#define PCI_TESTDEV_MEM_BAR_SIZE 4096
#define PCI_TESTDEV_IO_BAR_SIZE 256

#endif
