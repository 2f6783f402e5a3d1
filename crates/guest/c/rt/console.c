/*
 * COM1 output and printf. Output is polled (LSR.THRE before each THR write)
 * because that is what kvm-unit-tests does and what trapline's UART models;
 * one lock serialises whole printf calls so lines from different CPUs do not
 * interleave.
 */
#include "rt.h"

#define UART_THR 0
#define UART_IER 1
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define LSR_THRE 0x20

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
    /* Bounded: a VMM without a UART (or a broken LSR) must not hang the guest. */
    for (int i = 0; i < 100000 && !(inb(COM1_PORT + UART_LSR) & LSR_THRE); i++)
        cpu_relax();
    outb(COM1_PORT + UART_THR, (u8)c);
}

void serial_putc(char c)
{
    if (c == '\n')
        uart_tx('\r');
    uart_tx(c);
}

/* Undo whatever random port writes did to the UART (DLAB, loopback, IER). */
void serial_reset(void)
{
    outb(COM1_PORT + UART_LCR, 0x03);
    outb(COM1_PORT + UART_IER, 0x00);
    outb(COM1_PORT + UART_MCR, 0x03);
}

struct sink {
    char *buf;
    size_t len, pos;
};

static void put(struct sink *s, char c)
{
    if (s->pos + 1 < s->len)
        s->buf[s->pos] = c;
    s->pos++;
}

static void put_num(struct sink *s, u64 v, unsigned base, bool neg, int width, char pad)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (neg)
        width--;
    if (neg && pad == '0')
        put(s, '-');
    for (; width > n; width--)
        put(s, pad);
    if (neg && pad != '0')
        put(s, '-');
    while (n)
        put(s, tmp[--n]);
}

int vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
    struct sink s = { buf, len, 0 };
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&s, *fmt);
            continue;
        }
        char pad = ' ';
        int width = 0, lng = 0;
        fmt++;
        if (*fmt == '0') {
            pad = '0';
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        while (*fmt == 'l' || *fmt == 'z') {
            lng++;
            fmt++;
        }
        switch (*fmt) {
        case 'd':
        case 'i': {
            long long v = lng ? va_arg(ap, long long) : va_arg(ap, int);
            put_num(&s, v < 0 ? -(u64)v : (u64)v, 10, v < 0, width, pad);
            break;
        }
        case 'u':
        case 'x': {
            u64 v = lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned int);
            put_num(&s, v, *fmt == 'u' ? 10 : 16, false, width, pad);
            break;
        }
        case 'p':
            put(&s, '0');
            put(&s, 'x');
            put_num(&s, (u64)(uintptr_t)va_arg(ap, void *), 16, false, width, pad);
            break;
        case 's': {
            const char *str = va_arg(ap, const char *);
            if (!str)
                str = "(null)";
            int n = (int)strlen(str);
            for (; width > n; width--)
                put(&s, ' ');
            while (*str)
                put(&s, *str++);
            break;
        }
        case 'c':
            put(&s, (char)va_arg(ap, int));
            break;
        case '%':
            put(&s, '%');
            break;
        case '\0':
            fmt--;
            break;
        default:
            put(&s, '%');
            put(&s, *fmt);
        }
    }
    if (len)
        buf[s.pos < len ? s.pos : len - 1] = '\0';
    return (int)s.pos;
}

int snprintf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n;
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
