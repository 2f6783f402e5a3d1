/*
 * The virt machine's UART: a PL011. Output is polled (FR.TXFF clear before
 * each DR write, bounded so a VMM without a UART cannot hang the guest) with
 * byte stores to DR, as kvm-unit-tests prints.
 * Included through uart.h by lib/console.c only (one back end per build).
 */
#ifndef TRAPLINE_UART_PL011_H
#define TRAPLINE_UART_PL011_H

#include "rt.h"

#define PL011_DR 0x000
#define PL011_FR 0x018
#define PL011_LCR_H 0x02c
#define PL011_CR 0x030
#define PL011_IMSC 0x038
#define FR_TXFF (1u << 5)
#define LCR_H_8N1_FIFO 0x70 /* 8 bits, FIFOs on */
#define CR_UARTEN_TXE_RXE 0x301

static void uart_tx(char c)
{
    for (int i = 0; i < 100000 && (mmio_read32(VIRT_PL011_BASE + PL011_FR) & FR_TXFF); i++)
        cpu_relax();
    mmio_write8(VIRT_PL011_BASE + PL011_DR, (u8)c);
}

/* Undo whatever random MMIO writes did to the UART (disabled, masked, 7 bits). */
static void uart_reset(void)
{
    mmio_write32(VIRT_PL011_BASE + PL011_IMSC, 0);
    mmio_write32(VIRT_PL011_BASE + PL011_LCR_H, LCR_H_8N1_FIFO);
    mmio_write32(VIRT_PL011_BASE + PL011_CR, CR_UARTEN_TXE_RXE);
}

#endif
