/*
 * COM1 output and printf. Output is polled (LSR.THRE before each THR write)
 * because that is what kvm-unit-tests does and what trapline's UART models;
 * one lock serialises whole printf calls so lines from different CPUs do not
 * interleave. The formatting is lib/format.c's, shared with arm64.
 */
#include "rt.h"

#define UART_THR 0
#define UART_IER 1
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define LSR_THRE 0x20

static volatile int console_lock;

static void lock(void)
{
    while (__atomic_exchange_n(&console_lock, 1, __ATOMIC_ACQUIRE))
        while (console_lock)
            cpu_relax();
}

static void unlock(void) { __atomic_store_n(&console_lock, 0, __ATOMIC_RELEASE); }

/* An exception may hit while this CPU holds the lock; the report matters more. */
void console_force_unlock(void) { unlock(); }

static void uart_tx(char c)
{
    /* Bounded: a VMM without a UART (or a broken LSR) must not hang the guest. */
    for (int i = 0; i < 100000 && !(inb(COM1_PORT + UART_LSR) & LSR_THRE); i++)
        cpu_relax();
    outb(COM1_PORT + UART_THR, (u8)c);
}

void serial_putc(char c)
{
    if (c == '\n')
        uart_tx('\r');
    uart_tx(c);
}

/* Undo whatever random port writes did to the UART (DLAB, loopback, IER). */
void serial_reset(void)
{
    outb(COM1_PORT + UART_LCR, 0x03);
    outb(COM1_PORT + UART_IER, 0x00);
    outb(COM1_PORT + UART_MCR, 0x03);
}

int vprintf(const char *fmt, va_list ap)
{
    char buf[256];
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    lock();
    for (const char *p = buf; *p; p++)
        serial_putc(*p);
    unlock();
    return n;
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}
