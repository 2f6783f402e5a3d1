/*
 * The arm64 runtime every arm64 payload links against: PL011 console,
 * ucall and debug exit over MMIO, PSCI, the device tree the VMM passes in
 * x0, per-CPU data and SMP bring-up through PSCI CPU_ON. Payloads define
 * main() (and, for SMP, ap_main()); the runtime calls them at EL1 with
 * interrupts masked, the MMU on and an identity map (see layout.h).
 */
#ifndef TRAPLINE_RT_H
#define TRAPLINE_RT_H

#include "runtime.h"
#include "machine.h"
#include "layout.h"
#include "io.h"
#include "pci_regs.h"

_Static_assert(MAX_CPUS == MAX_VCPUS, "layout.h MAX_CPUS must equal trapline-abi MAX_VCPUS");

/* The secondaries' entry point, weak in the runtime (main() is in runtime.h). */
void ap_main(u32 cpu, u64 mpidr);

/* ---- exceptions: an IRQ at EL1 calls this when set (exc.c); else it is reported as a bug ---- */
extern void (*rt_irq_handler)(void);

/* Leaving (runtime.h): exit(code) goes out through the debug-exit page, else PSCI SYSTEM_OFF; finish(0) is SYSTEM_OFF. */

/* ---- PSCI 0.2 through HVC (KVM serves it; function ids from trapline_abi.h) ---- */
u64 psci_version(void);
s64 psci_cpu_on(u64 mpidr, u64 entry, u64 context);
noreturn void psci_system_off(void);
noreturn void psci_system_reset(void);
noreturn void psci_cpu_off(void);

/* ---- the device tree ---- */
struct dt_info {
    const void *fdt;      /* NULL when none was found */
    const char *bootargs; /* /chosen/bootargs, NULL if absent */
    u32 ncpus;            /* /cpus/cpu@* nodes, up to MAX_CPUS */
    u64 mpidr[MAX_CPUS];  /* their reg (affinity) values, in tree order */
    u64 mem_base, mem_size; /* the first /memory node's first range */
    u32 nvirtio_mmio;     /* virtio_mmio@* nodes under the root */
    bool pl031;           /* a pl031@* node under the root */
};
extern struct dt_info dt;
/* Fills *out from the blob at fdt; false (and *out zeroed) if it is not one inside mapped RAM. */
bool dt_parse(const void *fdt, struct dt_info *out);

/* ---- per-CPU data, reached through TPIDR_EL1 ---- */
struct percpu {
    u32 index;
    u64 mpidr;
    /* When set, a data abort at EL1 is counted and the faulting instruction
     * skipped instead of reported: for accesses that may hit nothing (QEMU
     * answers unassigned addresses with an external abort). */
    volatile u32 skip_faults;
    volatile u64 faults;
    struct ucall ucall; /* one per CPU so vCPUs can ucall concurrently */
} __attribute__((aligned(64)));

extern struct percpu percpu[MAX_CPUS];
void percpu_init(u32 index);

static inline struct percpu *this_cpu(void) { return (struct percpu *)read_sysreg(tpidr_el1); }

/*
 * The ucall doorbell (lib/ucall.c): store the message's address (32 bits)
 * to VIRT_UCALL_MMIO after the message. On QEMU the page is unassigned:
 * the store aborts, and the abort is skipped.
 */
static inline void ucall_send(struct percpu *c, struct ucall *u)
{
    u32 saved = c->skip_faults;
    c->skip_faults = 1;
    io_wmb();
    mmio_write32(VIRT_UCALL_MMIO, (u32)(uintptr_t)u);
    c->skip_faults = saved;
}

/* ---- SMP ---- */
/* The entry point PSCI CPU_ON starts secondaries at (start.S); context = their CPU index. */
void secondary_entry(void);
/* Starts CPU `index` (1..MAX_CPUS-1) at `mpidr`; returns the PSCI status. */
s64 smp_start_cpu(u32 index, u64 mpidr);
/* KVM's MPIDR for vCPU i when there is no device tree to read it from. */
u64 smp_default_mpidr(u32 index);

#endif
