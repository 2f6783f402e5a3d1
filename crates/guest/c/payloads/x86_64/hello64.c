/* Proves the VMM's direct 64-bit ELF entry: no Multiboot, no page tables of our own. */
#include "rt.h"

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("hello from a 64-bit ELF\n");
    finish(0x2a);
}
