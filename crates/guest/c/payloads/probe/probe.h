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

#define WAIT_CYCLES (1ULL << 32)    /* bound on every wait for a handler or vCPU 1 */

/* RESULT_BAD_VALUE when an interrupt scenario's wait timed out or a count was off (harness.c). */
extern u32 run_status;

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

#endif
