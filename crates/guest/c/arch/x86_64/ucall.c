/*
 * ucall: fill this CPU's message and OUT its address to UCALL_PORT. The
 * message is per CPU so concurrent vCPUs never overwrite each other's; the
 * host reads it while this vCPU is stopped in the exit, so there is no reuse
 * hazard once the OUT returns. On QEMU the port is unassigned and the OUT is
 * a harmless no-op.
 */
#include "rt.h"

void ucall_args(u32 kind, const char *text, const u64 args[UCALL_ARGS])
{
    struct ucall *u = &this_cpu()->ucall;
    size_t i = 0;

    u->magic = UCALL_MAGIC;
    u->kind = kind;
    for (size_t a = 0; a < UCALL_ARGS; a++)
        u->args[a] = args[a];
    for (; text && text[i] && i < UCALL_TEXT_LEN - 1; i++)
        u->text[i] = text[i];
    for (; i < UCALL_TEXT_LEN; i++)
        u->text[i] = '\0';
    outl(UCALL_PORT, (u32)(uintptr_t)u);
}
