/*
 * The architecture-neutral part of the guest runtime: fixed-width types,
 * the libc string routines, printf-style formatting and the command line's
 * key=value lookup. Nothing here touches a device or an instruction set;
 * each architecture's rt.h includes this and adds its own console, exits,
 * per-CPU data and SMP bring-up.
 */
#ifndef TRAPLINE_LIB_H
#define TRAPLINE_LIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- string.c (gcc may also emit calls to the mem* ones) ---- */
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* ---- format.c: %s %c %d %i %u %x %p and %%, with l/ll/z, a 0 flag and a width ---- */
int vsnprintf(char *buf, size_t len, const char *fmt, va_list ap);
int snprintf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * ---- args.c: the command line as argv, argv[0] being a name the runtime
 * picks (never looked up as a key); values are decimal or 0x-prefixed hex.
 */
extern int rt_argc;
extern char *rt_argv[];
void args_init(const char *argv0, const char *cmdline);
const char *cmdline_get(const char *key);
u64 cmdline_u64(const char *key, u64 dflt);
bool parse_u64(const char *s, const char **end, u64 *out);

#endif
