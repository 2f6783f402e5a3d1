/*
 * The runtime every payload links against: console, ucall, exit, command
 * line, per-CPU data and SMP bring-up. Payloads define main() (and, for SMP,
 * ap_main()); the runtime's entry code calls them with IF=0 on an identity
 * mapped 0-4 GiB address space.
 */
#ifndef TRAPLINE_RT_H
#define TRAPLINE_RT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trapline_abi.h"
#include "trapline_abi_extra.h"
#include "layout.h"
#include "io.h"

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define barrier() asm volatile("" : : : "memory")
#define noreturn __attribute__((noreturn))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Entry points the payload provides. ap_main is weak in the runtime. */
int main(int argc, char **argv);
void ap_main(u32 cpu, u32 apic_id);

/* ---- console (COM1) ---- */
void serial_putc(char c);
void serial_reset(void);
void console_force_unlock(void);
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *fmt, va_list ap);
int snprintf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char *buf, size_t len, const char *fmt, va_list ap);

/* ---- ucall: ucall(kind, text, arg0, ...) with 1..UCALL_ARGS args ---- */
void ucall_args(u32 kind, const char *text, const u64 args[UCALL_ARGS]);
#define ucall(kind, text, ...) ucall_args((kind), (text), (const u64[UCALL_ARGS]){ __VA_ARGS__ })

/* ---- leaving ---- */
noreturn void exit(int code);
noreturn void finish(int code); /* ucall DONE(code), then exit(code) */
noreturn void park(void);

/* ---- Multiboot info and command line ---- */
struct mbi {
    u32 flags;
    u32 mem_lower;
    u32 mem_upper;
    u32 boot_device;
    u32 cmdline;
    u32 mods_count;
    u32 mods_addr;
};

extern u32 mb_info_addr; /* EBX/RBX at entry, stored by the entry code */
const struct mbi *mbi(void);
u64 mem_top(void);
extern int rt_argc;
extern char *rt_argv[];
void cmdline_init(void);
const char *cmdline_get(const char *key);
u64 cmdline_u64(const char *key, u64 dflt);
bool parse_u64(const char *s, const char **end, u64 *out);

/* ---- per-CPU data, reached through GS ---- */
struct percpu {
    struct percpu *self; /* must stay first: this_cpu() loads %gs:0 */
    u32 index;
    u32 apic_id;
    struct ucall ucall; /* one per CPU so vCPUs can ucall concurrently */
} __attribute__((aligned(64)));

extern struct percpu percpu[MAX_CPUS];
void percpu_init(u32 index);

static inline struct percpu *this_cpu(void)
{
    struct percpu *c;
    asm volatile("mov %%gs:0, %0" : "=r"(c));
    return c;
}

/* ---- interrupts ---- */
void idt_init(void);
void idt_load(void);

/* ---- SMP (flat payloads only) ---- */
u32 lapic_id(void);
void smp_start_aps(void);

/* ---- string helpers (gcc may also emit calls to the mem* ones) ---- */
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

#endif
