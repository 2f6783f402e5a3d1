/*
 * Console input: reads one line from COM1's receiver (polling LSR.DR, so
 * no interrupt setup is needed), prints it back as "echo: <line>", and
 * exits with 0. What the host writes to trapline's stdin must arrive here.
 */
#include "rt.h"
#include "io.h"

#define COM1 0x3f8
#define LSR_DR 0x01

int main(int argc, char **argv)
{
    char line[128];
    (void)argc;
    (void)argv;
    unsigned n = 0;

    printf("echo: ready\n");
    for (;;) {
        while (!(inb(COM1 + 5) & LSR_DR))
            asm volatile("pause");
        char c = (char)inb(COM1);
        if (c == '\n' || c == '\r' || n == sizeof(line) - 1)
            break;
        line[n++] = c;
    }
    line[n] = 0;
    printf("echo: %s\n", line);
    finish(0);
}
