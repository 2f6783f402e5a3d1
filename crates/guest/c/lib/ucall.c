/*
 * ucall: fill this CPU's message, then ring the architecture's doorbell
 * with its address (rt.h's ucall_send: an OUT to UCALL_PORT on x86, a
 * 32-bit store to VIRT_UCALL_MMIO on arm64). The message is per CPU so
 * concurrent vCPUs never overwrite each other's; the host reads it while
 * this vCPU is stopped in the exit, so there is no reuse hazard once the
 * doorbell returns. On QEMU the port or page is unassigned and a ucall is
 * a harmless no-op.
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
    ucall_send(c, u);
}
