/*
 * The arm64 probe's GICv3 (gic.c): the distributor with affinity routing,
 * each CPU's redistributor and its system-register CPU interface, and one
 * IRQ entry that acknowledges an interrupt and hands it to the handler set
 * for its INTID, which ends it with gic_eoi(). KVM's vGICv3 serves all of
 * it; with a GICv3 host the SGI write (ICC_SGI1R_EL1) traps to KVM, the
 * acknowledge and EOI stay in the CPU.
 */
#ifndef PROBE_GIC_H
#define PROBE_GIC_H

#include "rt.h"

#define read_icc_iar1() read_sysreg(S3_0_C12_C12_0)
#define write_icc_eoir1(v) write_sysreg(S3_0_C12_C12_1, v)
#define write_icc_sgi1r(v) write_sysreg(S3_0_C12_C11_5, v)
#define read_icc_sre() read_sysreg(S3_0_C12_C12_5)
#define write_icc_sre(v) write_sysreg(S3_0_C12_C12_5, v)

/* The distributor on (affinity routing, group 1), the boot CPU's interface, the IRQ entry. */
void gic_init(void);
/* This CPU's redistributor awake with the SGIs in group 1 and VIRT_IPI_SGI enabled; its CPU interface on. */
void gic_cpu_init(u32 cpu);
/* An SPI in group 1, edge-triggered, routed to `mpidr`, enabled. */
void gic_spi_route_edge(u32 intid, u64 mpidr);
/* `handler(iar)` serves `intid` on any CPU and must end it with gic_eoi(iar). */
void gic_set_handler(u32 intid, void (*handler)(u32 iar));

/* Ends the interrupt the acknowledge returned `iar` for (one system-register write). */
static inline void gic_eoi(u32 iar) { write_icc_eoir1(iar); }

#endif
