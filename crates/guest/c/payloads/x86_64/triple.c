/* An exception with no IDT to deliver it escalates #UD -> #GP -> #DF -> shutdown. */
#include "rt.h"

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    struct {
        u16 limit;
        u64 base;
    } __attribute__((packed)) empty = { 0, 0 };

    printf("triple: faulting now\n");
    asm volatile("lidt %0; ud2" : : "m"(empty));
    return 1; /* unreachable unless the VMM resumed us */
}
