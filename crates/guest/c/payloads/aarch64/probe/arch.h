/*
 * The arm64 probe's accessors for the shared parts (probe.h includes
 * this): the generic timer's virtual counter as the clock (CNTVCT_EL0
 * after an ISB: "cycles" in a Result are counter ticks at CNTFRQ_EL0, not
 * CPU cycles), the timed loop, interrupts through DAIF.I, ucalls by a
 * store to VIRT_UCALL_MMIO and PCI ports as the PCIe host's I/O window.
 */
#ifndef PROBE_ARCH_H
#define PROBE_ARCH_H

#include "rt.h"

/* Every timed loop is the same three instructions (add; cmp; b.ne) around one operation. */
#define LOOP(body, ...)                                                                          \
    do {                                                                                         \
        t0 = counter_now();                                                                      \
        asm volatile("1:\n\t" body "\n\tadd %[i], %[i], #1\n\tcmp %[i], %[n]\n\tb.ne 1b" __VA_ARGS__); \
        t1 = counter_now();                                                                      \
    } while (0)

/* The clock every result is in (the runtime's clock_now()), and what its units are called. */
#define CLOCK_NAME "counter"
#define CLOCK_UNIT "ticks"
/* The exit-stamp mailbox (anatomy.c): the boot CPU's slot. */
#define PROBE_ANATOMY_MAILBOX VIRT_ANATOMY_MAILBOX
static inline u64 clock_poll(void) { return counter_now(); }
/* Bound on every wait for a handler or vCPU 1: two seconds of the counter. */
#define WAIT_LIMIT (2 * counter_freq())

static inline void irqs_on(void) { asm volatile("msr daifclr, #2" : : : "memory"); }
static inline void irqs_off(void) { asm volatile("msr daifset, #2" : : : "memory"); }

/* A ucall: the message's stores ordered before the MMIO store that announces it. */
static inline void ucall_publish(void) { io_wmb(); }
static inline void ucall_ring(u32 msg) { mmio_write32(VIRT_UCALL_MMIO, msg); }

/* PCI port p is MMIO at VIRT_PCIE_PIO_BASE + p (the PCIe host's I/O window). */
#define PCI_PORT_END VIRT_PCIE_PIO_LEN
static inline u64 pci_port_addr(u64 port) { return VIRT_PCIE_PIO_BASE + port; }
static inline u8 pci_port_read8(u64 port) { return mmio_read8(pci_port_addr(port)); }
/* The header is one byte wide (QEMU's .impl); the device serves a word as four bytes. */
static inline u32 pci_port_read32(u64 port) { return mmio_read32(pci_port_addr(port)); }
static inline void pci_port_write8(u64 port, u8 v) { mmio_write8(pci_port_addr(port), v); }
/* Every test write, the PV one too, is a store of the header's width. */
#define PCI_ABS_PORT_WIDTH(width) (width)

#endif
