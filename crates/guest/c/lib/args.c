/*
 * The command line as argv: "key=value" words after a name the runtime puts
 * first (a Multiboot loader's image name on x86, a fixed name on arm64,
 * where /chosen/bootargs holds only the arguments). The words are copied,
 * so the command line may live in memory the payload does not own.
 */
#include "lib.h"

#define MAX_ARGS 64

int rt_argc;
char *rt_argv[MAX_ARGS + 1];
static char argbuf[1024];

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

void args_init(const char *argv0, const char *src)
{
    size_t pos = 0;

    rt_argc = 0;
    if (argv0) {
        size_t n = strlen(argv0);
        if (n + 1 > sizeof(argbuf))
            n = sizeof(argbuf) - 1;
        memcpy(argbuf, argv0, n);
        argbuf[n] = '\0';
        rt_argv[rt_argc++] = argbuf;
        pos = n + 1;
    }
    if (!src)
        src = "";
    while (*src && rt_argc < MAX_ARGS) {
        while (blank(*src))
            src++;
        if (!*src || pos + 1 >= sizeof(argbuf))
            break;
        rt_argv[rt_argc++] = &argbuf[pos];
        while (*src && !blank(*src) && pos + 1 < sizeof(argbuf))
            argbuf[pos++] = *src++;
        argbuf[pos++] = '\0';
    }
    rt_argv[rt_argc] = NULL;
}

const char *cmdline_get(const char *key)
{
    size_t n = strlen(key);
    for (int i = 1; i < rt_argc; i++)
        if (!strncmp(rt_argv[i], key, n) && rt_argv[i][n] == '=')
            return rt_argv[i] + n + 1;
    return NULL;
}

/* Decimal or 0x-prefixed hex; *end is left at the first unparsed character. */
bool parse_u64(const char *s, const char **end, u64 *out)
{
    u64 v = 0;
    unsigned base = 10;
    const char *p = s;

    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    const char *digits = p;
    for (;; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            break;
        v = v * base + d;
    }
    if (end)
        *end = p;
    if (p == digits)
        return false;
    *out = v;
    return true;
}

u64 cmdline_u64(const char *key, u64 dflt)
{
    const char *v = cmdline_get(key);
    const char *end;
    u64 out;
    if (!v || !parse_u64(v, &end, &out) || *end)
        return dflt;
    return out;
}
