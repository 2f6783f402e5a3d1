/*
 * kvmtool's UART: an 8250/16550 on MMIO with byte-wide registers (no
 * register shift), at KVMTOOL_UART_BASE (build.rs defines it from
 * trapline-abi). Output is polled on LSR.THRE, bounded like the PL011's.
 * Included through uart.h by lib/console.c only (one back end per build).
 */
#ifndef TRAPLINE_UART_8250_H
#define TRAPLINE_UART_8250_H

#include "rt.h"

#define UART_THR 0 /* transmit holding register (DLAB = 0) */
#define UART_IER 1
#define UART_LCR 3
#define UART_LSR 5
#define LSR_THRE (1u << 5)
#define LCR_8N1 0x03 /* 8 bits, no parity, 1 stop bit, DLAB = 0 */

static void uart_tx(char c)
{
    for (int i = 0; i < 100000 && !(mmio_read8(KVMTOOL_UART_BASE + UART_LSR) & LSR_THRE); i++)
        cpu_relax();
    mmio_write8(KVMTOOL_UART_BASE + UART_THR, (u8)c);
}

/* Back to 8N1 with the divisor latch closed and interrupts off. */
static void uart_reset(void)
{
    mmio_write8(KVMTOOL_UART_BASE + UART_LCR, LCR_8N1);
    mmio_write8(KVMTOOL_UART_BASE + UART_IER, 0);
}

#endif
