/*
 * The console and printf, over the machine's UART back end (uart_pl011.h on
 * the virt machine, uart_8250.h in the probe's kvmtool build: machine.h's
 * TRAPLINE_MACHINE_KVMTOOL picks; included, so uart_tx() inlines as
 * before). One lock serialises whole printf calls so lines from different
 * CPUs do not interleave.
 */
#include "rt.h"
#ifdef TRAPLINE_MACHINE_KVMTOOL
#include "uart_8250.h"
#else
#include "uart_pl011.h"
#endif

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
