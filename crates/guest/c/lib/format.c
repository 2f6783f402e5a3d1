/*
 * printf-style formatting into a buffer. The console's printf (per
 * architecture) formats here, then writes the buffer out under its lock.
 */
#include "lib.h"

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
