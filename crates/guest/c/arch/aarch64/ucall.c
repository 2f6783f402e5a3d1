/*
 * ucall: fill this CPU's message and store its address (32 bits) to
 * VIRT_UCALL_MMIO. The message is per CPU so concurrent vCPUs never
 * overwrite each other's; the host reads it while this vCPU is stopped in
 * the MMIO exit. On QEMU the page is unassigned: the store aborts, and the
 * abort is skipped, so a ucall is a no-op there.
 */
#include "rt.h"

void ucall_args(u32 kind, const char *text, const u64 args[UCALL_ARGS])
{
    struct percpu *c = this_cpu();
    struct ucall *u = &c->ucall;
    size_t i = 0;

    u->magic = UCALL_MAGIC;
    u->kind = kind;
    for (size_t a = 0; a < UCALL_ARGS; a++)
        u->args[a] = args[a];
    for (; text && text[i] && i < UCALL_TEXT_LEN - 1; i++)
        u->text[i] = text[i];
    for (; i < UCALL_TEXT_LEN; i++)
        u->text[i] = '\0';
    u32 saved = c->skip_faults;
    c->skip_faults = 1;
    io_wmb();
    mmio_write32(VIRT_UCALL_MMIO, (u32)(uintptr_t)u);
    c->skip_faults = saved;
}
