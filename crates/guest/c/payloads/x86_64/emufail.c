/*
 * A guest KVM cannot run: an x87 load (`fild`) whose operand is an MMIO
 * address. The access exits to KVM, whose instruction emulator has no x87
 * loads, so KVM_RUN returns KVM_EXIT_INTERNAL_ERROR (emulation failure) at
 * CPL 0 on Intel and AMD hosts alike. trapline must then say which
 * instruction failed: registers and the bytes at RIP.
 */
#include "rt.h"

/* Above RAM and below the PCI/APIC windows: no memslot, no device. */
#define UNMAPPED_MMIO 0xfe000000ULL

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    volatile u32 *mmio = (volatile u32 *)UNMAPPED_MMIO;

    printf("emufail: fild from MMIO at %p\n", (void *)mmio);
    asm volatile("fildl %0" : : "m"(*mmio));
    return 1; /* unreachable unless KVM emulated it */
}
