/*
 * What the probe's parts share (see harness.c for what the probe does).
 * harness.c runs scenarios and dispatches on each one's ABI routine
 * (ROUTINE_* in SCENARIO_TABLE) to exits.c (traps, PIO, MMIO, memslots,
 * the VMM floor and the doorbells: one asm loop each), pci.c (pci-testdev,
 * config reads, bus scans), ipi.c (APIC, IPIs, EOI, vCPU 1) and irqfd.c
 * (host injections through an irqfd). Each file tells its own scenarios
 * apart by id.
 */
#ifndef PROBE_H
#define PROBE_H

#include "rt.h"

/* RESULT_BAD_VALUE when an interrupt scenario's wait timed out or a count was off (harness.c). */
extern u32 run_status;

#if defined(__aarch64__)
/*
 * arm64: the same harness (harness.c) with the arm64 probe's own routines
 * (payloads/aarch64/probe/): exits.c, pci.c (pci-testdev and ECAM), ipi.c
 * (the GICv3, vCPU 1, SGIs and EOI) and irqfd.c. The clock is the generic timer's virtual counter
 * (CNTVCT_EL0 after an ISB): "cycles" in a Result are counter ticks at
 * CNTFRQ_EL0, not CPU cycles. Every loop is the same three instructions
 * (add; cmp; b.ne) around one operation.
 */
#define LOOP(body, ...)                                                                          \
    do {                                                                                         \
        t0 = counter_now();                                                                      \
        asm volatile("1:\n\t" body "\n\tadd %[i], %[i], #1\n\tcmp %[i], %[n]\n\tb.ne 1b" __VA_ARGS__); \
        t1 = counter_now();                                                                      \
    } while (0)

/* Bound on every wait for a handler or vCPU 1: two seconds of the counter. */
#define WAIT_TICKS (2 * counter_freq())

/* exits.c */
void exits_init(void);
bool exits_run(u32 id, u64 n, u64 *cycles, u64 *value);

/* ipi.c: the GICv3 (distributor, redistributors, CPU interface), vCPU 1, ROUTINE_IPI. */
void irq_init(void);
void gic_cpu_init(u32 cpu);
void gic_spi_route_edge(u32 intid, u64 mpidr);
void gic_eoi(u32 iar);
u32 ipi_prepare(u32 id, const char *name);
void ipi_run(u32 id, u64 n, u64 *cycles, u64 *value);
void ipi_cleanup(u32 id);

/* irqfd.c: ROUTINE_IRQFD; irqfd_irq() is its INTID's handler (called from ipi.c's). */
#define IRQFD_MAX 4096
void irqfd_init(void);
u32 irqfd_prepare(const char *name);
void irqfd_run(u64 n, u64 *cycles, u64 *value);
void irqfd_cleanup(void);
void irqfd_irq(void);

/* pci.c: ROUTINE_PCI on the virt machine's PCIe host (ECAM, the PCI I/O window). */
u32 pci_prepare(u32 id, const char *name);
void pci_cleanup(void);
bool pci_run(u32 id, u64 n, u64 *cycles, u64 *value);
#else

#define WAIT_CYCLES (1ULL << 32)    /* bound on every wait for a handler or vCPU 1 */

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

/* exits.c: ROUTINE_EXITS, scenarios whose loop is one trapping instruction. */
void exits_init(void);
bool exits_run(u32 id, u64 n, u64 *cycles, u64 *value);

/* pci.c: ROUTINE_PCI. */
u32 pci_prepare(u32 id, const char *name);
void pci_cleanup(void);
bool pci_run(u32 id, u64 n, u64 *cycles, u64 *value);

/* ipi.c: the APICs, vCPU 1 and ROUTINE_IPI. */
void irq_init(void);
void apic_eoi(void);
void bsp_apic_on(void);
u32 ipi_prepare(u32 id, const char *name);
void ipi_run(u32 id, u64 n, u64 *cycles, u64 *value);
void ipi_cleanup(u32 id);

/* irqfd.c: ROUTINE_IRQFD. */
#define IRQFD_MAX 4096              /* injections per IrqfdStart (the stamp arrays) */
void irqfd_init(void);
u32 irqfd_prepare(const char *name);
void irqfd_run(u64 n, u64 *cycles, u64 *value);
void irqfd_cleanup(void);

#endif /* __aarch64__ */
#endif
