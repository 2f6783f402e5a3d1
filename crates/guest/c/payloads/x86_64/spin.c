/*
 * Never exits on its own, to test the VMM's --timeout. Default: cli; hlt
 * (the vCPU sleeps, no exits); spin=busy: a tight jmp . that keeps the vCPU
 * running in guest mode.
 */
#include "rt.h"

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *mode = cmdline_get("spin");

    printf("spinning\n");
    if (mode && !strcmp(mode, "busy"))
        asm volatile("1: jmp 1b");
    park();
}
