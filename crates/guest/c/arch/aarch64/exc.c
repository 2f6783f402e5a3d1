/*
 * Exceptions are bugs in a payload (or in the VMM under test): report the
 * kind, ESR, ELR and FAR on the console and as an ASSERT ucall, then
 * exit(63) like a failed kvm-unit-tests assertion. The exceptions: a
 * data abort at EL1 while this CPU's skip_faults is set is counted and the
 * faulting instruction (always 4 bytes in AArch64) skipped; an IRQ at EL1
 * goes to rt_irq_handler when a payload installed one (the probe's GIC).
 */
#include "rt.h"

static const char *const kinds[16] = {
    "sync (EL1, SP_EL0)", "irq (EL1, SP_EL0)", "fiq (EL1, SP_EL0)", "serror (EL1, SP_EL0)",
    "sync",               "irq",               "fiq",               "serror",
    "sync (EL0)",         "irq (EL0)",         "fiq (EL0)",         "serror (EL0)",
    "sync (EL0 AArch32)", "irq (EL0 AArch32)", "fiq (EL0 AArch32)", "serror (EL0 AArch32)",
};

/* The kind of a synchronous exception taken from EL1 running on SP_EL1. */
#define KIND_SYNC_EL1 4
/* The kind of an IRQ taken from EL1 running on SP_EL1. */
#define KIND_IRQ_EL1 5

void (*rt_irq_handler)(void);

struct exc_frame {
    u64 x[31];
    u64 elr;
    u64 spsr;
    u64 pad;
};
_Static_assert(sizeof(struct exc_frame) == FRAME_SIZE, "exc.S frame layout");

void exc_handler(u64 kind, struct exc_frame *f);

void exc_handler(u64 kind, struct exc_frame *f)
{
    u64 esr = read_sysreg(esr_el1);
    u64 far = read_sysreg(far_el1);
    struct percpu *c = this_cpu();

    if (kind == KIND_IRQ_EL1 && rt_irq_handler) {
        rt_irq_handler();
        return;
    }
    if (kind == KIND_SYNC_EL1 && (esr >> 26) == EC_DABT_CUR && c && c->skip_faults) {
        c->faults++;
        f->elr += 4;
        return;
    }
    console_force_unlock();
    printf("unhandled exception: %s at elr 0x%lx (esr 0x%lx far 0x%lx cpu %u)\n", kinds[kind & 15], f->elr, esr,
           far, c ? c->index : 0);
    ucall(UCALL_ASSERT, "unhandled exception", __LINE__, kind, f->elr, esr, far);
    exit(63);
}
