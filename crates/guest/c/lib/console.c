/*
 * The console and printf, over the architecture's UART (uart.h: COM1 on
 * x86; on arm64 the PL011, or the 8250 in the probe's kvmtool build).
 * Output is polled, bounded, with `\r` before `\n`, because that is what
 * kvm-unit-tests does and what trapline's UARTs model; one lock serialises
 * whole printf calls so lines from different CPUs do not interleave. The
 * formatting is format.c's.
 */
#include "rt.h"
#include "uart.h"

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

void serial_putc(char c)
{
    if (c == '\n')
        uart_tx('\r');
    uart_tx(c);
}

/* Undo whatever random port or MMIO writes did to the UART. */
void serial_reset(void) { uart_reset(); }

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
