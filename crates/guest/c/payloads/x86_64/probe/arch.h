/*
 * The x86 probe's accessors for the shared parts (probe.h includes this):
 * the TSC as the clock, the timed loop, interrupts through IF, ucalls by
 * OUT to UCALL_PORT and PCI ports as the CPU's own I/O space.
 */
#ifndef PROBE_ARCH_H
#define PROBE_ARCH_H

#include "rt.h"

/*
 * Every timed loop is the same three instructions (inc; cmp; jne) around
 * one operation, so noop's cost can be subtracted from any scenario's.
 * Expects u64 locals i, n, t0 and t1; exits.c passes n as [n] "S"(n).
 */
#define LOOP(body, ...)                                                                          \
    do {                                                                                         \
        t0 = rdtsc_ordered();                                                                    \
        asm volatile("1:\n\t" body "\n\tinc %[i]\n\tcmp %[n], %[i]\n\tjne 1b" __VA_ARGS__);      \
        t1 = rdtsc_ordered();                                                                    \
    } while (0)

/* The clock every result is in (the runtime's clock_now()), and what its units are called. */
#define CLOCK_NAME "TSC"
#define CLOCK_UNIT "cycles"
/* The exit-stamp mailbox (anatomy.c): the boot CPU's slot. */
#define PROBE_ANATOMY_MAILBOX ANATOMY_MAILBOX
/* For deadline polls, where a reading a little early or late does not matter. */
static inline u64 clock_poll(void) { return rdtsc_plain(); }
/* Bound on every wait for a handler or vCPU 1 (in clock_poll() units). */
#define WAIT_LIMIT (1ULL << 32)

static inline void irqs_on(void) { asm volatile("sti" : : : "memory"); }
static inline void irqs_off(void) { asm volatile("cli" : : : "memory"); }

/* A ucall whose message is already in memory: nothing to order, then one OUT. */
static inline void ucall_publish(void) {}
static inline void ucall_ring(u32 msg) { outl(UCALL_PORT, msg); }

/* PCI ports are the CPU's I/O space: 64 Ki ports. */
#define PCI_PORT_END 0x10000
static inline u64 pci_port_addr(u64 port) { return port; }
static inline u8 pci_port_read8(u64 port) { return inb((u16)port); }
static inline u32 pci_port_read32(u64 port) { return inl((u16)port); }
static inline void pci_port_write8(u64 port, u8 v) { outb((u16)port, v); }
/* The PV test's absolute port takes a 32-bit OUT whatever the header's width. */
#define PCI_ABS_PORT_WIDTH(width) 4u

/* ipi.c: the BSP's APIC (also for irqfd_line.c). */
void apic_eoi(void);
void bsp_apic_on(void);

#endif
