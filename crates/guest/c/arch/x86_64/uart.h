/*
 * COM1, a 16550 on ports: LSR.THRE polled before each THR write (bounded,
 * so a VMM without a UART, or a broken LSR, cannot hang the guest).
 * Included by lib/console.c only.
 */
#ifndef TRAPLINE_UART_H
#define TRAPLINE_UART_H

#include "rt.h"

#define UART_THR 0
#define UART_IER 1
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define LSR_THRE 0x20

static void uart_tx(char c)
{
    for (int i = 0; i < 100000 && !(inb(COM1_PORT + UART_LSR) & LSR_THRE); i++)
        cpu_relax();
    outb(COM1_PORT + UART_THR, (u8)c);
}

/* 8N1 with DLAB clear, no interrupts, DTR and RTS: random writes may have set DLAB or loopback. */
static void uart_reset(void)
{
    outb(COM1_PORT + UART_LCR, 0x03);
    outb(COM1_PORT + UART_IER, 0x00);
    outb(COM1_PORT + UART_MCR, 0x03);
}

#endif
