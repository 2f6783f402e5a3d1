/*
 * The PL011 console and printf. Output is polled (FR.TXFF clear before each
 * DR write, bounded so a VMM without a UART cannot hang the guest) with byte
 * stores to DR, as kvm-unit-tests prints. One lock serialises whole printf
 * calls so lines from different CPUs do not interleave.
 */
#include "rt.h"

#define PL011_DR 0x000
#define PL011_FR 0x018
#define PL011_LCR_H 0x02c
#define PL011_CR 0x030
#define PL011_IMSC 0x038
#define FR_TXFF (1u << 5)
#define LCR_H_8N1_FIFO 0x70 /* 8 bits, FIFOs on */
#define CR_UARTEN_TXE_RXE 0x301

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
    for (int i = 0; i < 100000 && (mmio_read32(VIRT_PL011_BASE + PL011_FR) & FR_TXFF); i++)
        cpu_relax();
    mmio_write8(VIRT_PL011_BASE + PL011_DR, (u8)c);
}

void serial_putc(char c)
{
    if (c == '\n')
        uart_tx('\r');
    uart_tx(c);
}

/* Undo whatever random MMIO writes did to the UART (disabled, masked, 7 bits). */
void serial_reset(void)
{
    mmio_write32(VIRT_PL011_BASE + PL011_IMSC, 0);
    mmio_write32(VIRT_PL011_BASE + PL011_LCR_H, LCR_H_8N1_FIFO);
    mmio_write32(VIRT_PL011_BASE + PL011_CR, CR_UARTEN_TXE_RXE);
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
