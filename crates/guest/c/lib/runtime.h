/*
 * What every architecture's runtime provides, declared once: each
 * architecture's rt.h includes this, then adds its own entry, per-CPU
 * data, interrupts and SMP bring-up. The console and ucall bodies are
 * c/lib's too (console.c over the architecture's uart.h, ucall.c over its
 * ucall_send()); exit() and park() are the architecture's.
 */
#ifndef TRAPLINE_RUNTIME_H
#define TRAPLINE_RUNTIME_H

#include "lib.h"
#include "trapline_abi.h"
#include "trapline_abi_extra.h"

#define barrier() asm volatile("" : : : "memory")
#define noreturn __attribute__((noreturn))

/* The payload's entry point (the payload provides it). */
int main(int argc, char **argv);

/* ---- console: printf over the machine's UART (console.c, uart.h) ---- */
void serial_putc(char c);
void serial_reset(void);
void console_force_unlock(void);
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *fmt, va_list ap);

/* ---- ucall: ucall(kind, text, arg0, ...) with 1..UCALL_ARGS args ---- */
void ucall_args(u32 kind, const char *text, const u64 args[UCALL_ARGS]);
#define ucall(kind, text, ...) ucall_args((kind), (text), (const u64[UCALL_ARGS]){ __VA_ARGS__ })

/* ---- leaving (the architecture's exit.c) ---- */
noreturn void exit(int code);
noreturn void finish(int code); /* ucall DONE(code), then leave with code */
noreturn void park(void);

#endif
