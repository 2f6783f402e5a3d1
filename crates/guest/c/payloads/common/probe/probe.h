/*
 * What the probe's parts share (see harness.c for what the probe does).
 * harness.c runs scenarios and dispatches on each one's ABI routine
 * (ROUTINE_* in SCENARIO_TABLE) to exits.c (traps, PIO, MMIO, memslots,
 * the VMM floor and the doorbells: one asm loop each), the PCI scenarios
 * (testdev.c here: pci-testdev and each scenario's set-up; pci.c: the
 * architecture's configuration access and loops), ipi.c (the interrupt
 * controller, IPIs, EOI, vCPU 1) and irqfd.c (host injections through an
 * irqfd, on the line irqfd_line.c sets up). Each file tells its own
 * scenarios apart by id.
 *
 * The architecture's half lives in c/payloads/<arch>/probe/ with its
 * accessors in probe/arch.h: the clock and LOOP(), the bound on every
 * wait, interrupts on and off, the ucall doorbell and the PCI port window.
 */
#ifndef PROBE_H
#define PROBE_H

#include "rt.h"
#include "probe/arch.h"

/* RESULT_BAD_VALUE when an interrupt scenario's wait timed out or a count was off (harness.c). */
extern u32 run_status;

/* exits.c: ROUTINE_EXITS, scenarios whose loop is one trapping instruction. */
void exits_init(void);
bool exits_run(u32 id, u64 n, u64 *cycles, u64 *value);

/* testdev.c and pci.c: ROUTINE_PCI. */
u32 pci_prepare(u32 id, const char *name);
void pci_cleanup(void);
bool pci_run(u32 id, u64 n, u64 *cycles, u64 *value);

/* ipi.c: the interrupt controller, vCPU 1 and ROUTINE_IPI. */
void irq_init(void);
u32 ipi_prepare(u32 id, const char *name);
void ipi_run(u32 id, u64 n, u64 *cycles, u64 *value);
void ipi_cleanup(u32 id);

/*
 * anatomy.c: the anatomy pass (anatomy=<ids> on the command line): each
 * user path's exit, VMM and entry legs. anatomy_access() is the
 * architecture's (<arch>/probe/anatomy_access.c): one access of path id,
 * stamped just before (t0) and after (t3); false if it has no such path.
 */
void anatomy_pass(const char *list);
u32 anatomy_prepare(u32 id, const char *name);
void anatomy_cleanup(u32 id);
bool anatomy_access(u32 id, u64 *t0, u64 *t3);
/* The same two stamps with no access between them (their own cost). */
void anatomy_stamps(u64 *t0, u64 *t3);

/* irqfd.c: ROUTINE_IRQFD. */
#define IRQFD_MAX 4096 /* injections per IrqfdStart (the stamp arrays) */
void irqfd_init(void);
u32 irqfd_prepare(const char *name);
void irqfd_run(u64 n, u64 *cycles, u64 *value);
void irqfd_cleanup(void);

/*
 * tails.c: the recorded pass after a scenario's timed batches. tails_init()
 * once at start-up (is there a host that reads blocks back; the stamp
 * pair's cost); tails_record() runs min(n, TAILS_SAMPLE_CAP) iterations,
 * each one(ctx) returning one stamped iteration's cycles, or with
 * self_stamped irqfd's own per-injection latencies, and hands the
 * histogram to the host (a Hist ucall).
 */
struct guest_hist;
extern struct guest_hist *tails_hist; /* non-NULL while irqfd_run() records a pass */
void tails_init(void);
void tails_record(u32 id, const char *name, u64 n, bool self_stamped, u64 (*one)(const void *), const void *ctx);

/*
 * irqfd_line.c: the line the host's irqfd raises, edge-triggered to the
 * boot CPU. The handler runs once per interrupt; the line acknowledges
 * and EOIs around it.
 */
void irqfd_line_init(void (*handler)(void));
/* Whether the machine has the line; RESULT_OK, or else why not (printed). */
u32 irqfd_line_check(const char *name);
void irqfd_line_route(void);
void irqfd_line_mask(void);

/*
 * pci.c: the architecture's side of the PCI scenarios (testdev.c finds
 * and selects; pci.c reaches configuration space and times the loops).
 */
/* pci-testdev's devfn on bus 0 with its BARs decoding; -1 (and a line saying so) if absent. */
int pci_find_testdev(void);
u32 pci_config_readl(u32 devfn, u32 reg);
/* Whether configuration space answers through ECAM (asked once; a line says when not). */
bool pci_ecam_present(void);
/* Whether the machine has configuration mechanism #1 (CF8/CFC). */
bool pci_cf8_present(void);

/* The pci-testdev test testdev.c selected, for pci_testdev_loop(). */
enum { PT_MMIO, PT_PIO, PT_ABS_PORT };
struct testdev_target {
    u32 how;   /* PT_*: a store, a port write at the BAR, an absolute port (PV: 32-bit) */
    u32 width; /* the header's, 1, 2 or 4 */
    u64 addr;  /* MMIO address, or the port's address as pci_port_addr() gives it */
    u32 data;
};
/* The selected test's target (testdev.c; the anatomy pass writes it stamped). */
const struct testdev_target *pci_testdev_selected(void);
/* n writes of the selected test; returns the cycles they took. */
u64 pci_testdev_loop(const struct testdev_target *t, u64 n);
/* The configuration scenarios (reads and bus scans) on `devfn`; false if id is not one. */
bool pci_config_loop(u32 id, u32 devfn, u64 n, u64 *cycles, u64 *value);

#endif
