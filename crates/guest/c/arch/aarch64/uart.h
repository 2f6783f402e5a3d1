/*
 * The machine's UART back end: the virt machine's PL011 (uart_pl011.h), or
 * kvmtool's 8250 in the probe's kvmtool build (uart_8250.h); machine.h's
 * TRAPLINE_MACHINE_KVMTOOL picks. Included by lib/console.c only.
 */
#ifndef TRAPLINE_UART_H
#define TRAPLINE_UART_H

#ifdef TRAPLINE_MACHINE_KVMTOOL
#include "uart_8250.h"
#else
#include "uart_pl011.h"
#endif

#endif
